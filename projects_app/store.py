"""The rows of projects_app (Project, Workspace, UserConfig), and the only code that touches them: the
modules of the app decide (who may, what changes, what is announced) and read and write through here."""
from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet

from projects_app.models import Project, UserConfig, Workspace, now_ms

# ---- projects ------------------------------------------------------------------------------------------------


def projects_of(user) -> list[Project]:
    return list(Project.objects.filter(owner=user).order_by("time_created", "id"))


def git_projects_of(user) -> list[Project]:
    return list(Project.objects.filter(owner=user, vcs="git"))


def project_find(*, user, project_id: str) -> Project | None:
    """The user's project of that id, None when there is none."""
    return Project.objects.filter(owner=user, project_id=project_id).first()


def project_found_or_made(*, user, project_id: str, worktree: str, vcs) -> tuple[Project, bool]:
    """The user's project of that id, made (with this worktree and vcs) when there is none; and whether it was."""
    return Project.objects.get_or_create(owner=user, project_id=project_id, defaults={"worktree": worktree, "vcs": vcs})


def project_locked(*, user, project_id: str) -> Project | None:
    """The user's project of that id, locked (in the caller's transaction)."""
    return Project.objects.select_for_update().filter(owner=user, project_id=project_id).first()


def project_locked_again(project: Project) -> Project:
    """The project's row read again, locked (in the caller's transaction)."""
    return Project.objects.select_for_update().get(pk=project.pk)


def project_saved(project: Project, *, fields: list[str] | None = None) -> None:
    project.save(update_fields=fields)


def project_initialized(project: Project) -> Project:
    """`time.initialized` set now, and the project read again."""
    Project.objects.filter(pk=project.pk).update(time_initialized=now_ms())
    project.refresh_from_db()
    return project


# ---- the stored config layers -------------------------------------------------------------------------------


def _user_layer_columns() -> str:
    """The user's stored layer as text, from its table (one user id parameter)."""
    return f"CAST(data AS TEXT) FROM {UserConfig._meta.db_table} WHERE user_id = %s"


def user_layer_text(user_id: int) -> str | None:
    """The user's global config layer as stored (JSON text), None when there is none."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_user_layer_columns()}", [user_id])
        row = cursor.fetchone()
    return row[0] if row else None


def stored_layer_texts(*, owner_id: int, project_id: str) -> list[tuple[int, str | None]]:
    """(0, the user's layer) and (1, the project's), as stored (JSON text), those there are, in one query.
    Written in SQL: every effective config (each session.create, each prompt) reads both, and the ORM
    compiled the two lookups anew each time."""
    sql = (f"SELECT 0, {_user_layer_columns()} UNION ALL "
           f"SELECT 1, CAST(config AS TEXT) FROM {Project._meta.db_table} WHERE owner_id = %s AND project_id = %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [owner_id, owner_id, project_id])
        return cursor.fetchall()


# ---- the user's global config layer ------------------------------------------------------------------------


def user_config_locked(user) -> UserConfig:
    """The user's global layer, made empty when missing, locked (in the caller's transaction)."""
    row, _ = UserConfig.objects.select_for_update().get_or_create(user=user)
    return row


def user_config_saved(row: UserConfig) -> None:
    row.save(update_fields=["data"])


# ---- workspaces ----------------------------------------------------------------------------------------------


def workspaces_of(*, user, project_id: str | None = None) -> QuerySet:
    """The user's workspaces (of one project), their projects read with them, oldest first: a lazy read the
    caller may narrow."""
    rows = Workspace.objects.filter(owner=user).select_related("project")
    if project_id:
        rows = rows.filter(project__project_id=project_id)
    return rows.order_by("time_created", "id")


def workspace_of(*, user, workspace_id: str) -> Workspace | None:
    """The user's workspace of that id, its project read with it."""
    return Workspace.objects.select_related("project").filter(owner=user, id=workspace_id).first()


def workspace_by_id(*, user, workspace_id: str) -> Workspace | None:
    return Workspace.objects.filter(owner=user, id=workspace_id).first()


def workspace_at(*, user, directory: str, project_id: str) -> Workspace | None:
    """The user's workspace of the project registered at `directory`."""
    return Workspace.objects.filter(owner=user, directory=directory, project__project_id=project_id).first()


def server_copy_at(*, user, project: Project, directory: str) -> Workspace | None:
    """The worktree the server made for the user's project at `directory`."""
    return Workspace.objects.filter(owner=user, project=project, directory=directory, created_by_server=True).first()


def server_workspace_directories(*, user, workspace_id: str) -> list[str]:
    return list(Workspace.objects.filter(owner=user, id=workspace_id, created_by_server=True)
                .values_list("directory", flat=True))


def workspace_directories_of(user) -> set[str]:
    return set(Workspace.objects.filter(owner=user).values_list("directory", flat=True))


def workspace_inserted(workspace: Workspace) -> None:
    workspace.save(force_insert=True)


def workspace_saved(workspace: Workspace) -> None:
    workspace.save()


def workspace_touched(workspace: Workspace) -> None:
    """`time.updated` set now."""
    Workspace.objects.filter(pk=workspace.pk).update(time_updated=now_ms())


def workspace_branch_set(workspace: Workspace, branch: str | None) -> None:
    Workspace.objects.filter(pk=workspace.pk).update(branch=branch, time_updated=now_ms())


def workspace_deleted(workspace: Workspace) -> None:
    Workspace.objects.filter(pk=workspace.pk).delete()
