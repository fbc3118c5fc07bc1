"""Back office for projects, workspaces and per-user config."""
from django.contrib import admin

from audit_app.admin_changes import AuditedAdmin
from projects_app.models import Project, UserConfig, Workspace


@admin.register(Project)
class ProjectAdmin(AuditedAdmin):
    list_display = ("project_id", "owner", "name", "worktree", "vcs", "time_updated")
    list_filter = ("vcs",)
    search_fields = ("project_id", "owner__username", "name", "worktree")
    readonly_fields = ("time_created", "time_updated", "time_initialized")


@admin.register(Workspace)
class WorkspaceAdmin(AuditedAdmin):
    list_display = ("id", "owner", "type", "name", "directory", "branch", "created_by_server", "archived")
    list_filter = ("type", "archived", "created_by_server")
    search_fields = ("id", "owner__username", "name", "directory", "branch")
    # Directory and type are facts on disk: changing them here would not move anything, so they stay read-only.
    readonly_fields = ("id", "owner", "project", "type", "directory", "branch", "created_by_server",
                      "time_created", "time_updated")

    def has_add_permission(self, request):
        return False  # created through the API, which confines the directory and makes the worktree


@admin.register(UserConfig)
class UserConfigAdmin(AuditedAdmin):
    list_display = ("user",)
    search_fields = ("user__username",)
