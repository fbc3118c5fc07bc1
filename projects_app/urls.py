"""Routes of projects_app: `original` at the root, `v2` under /api."""
from django.urls import path

from projects_app.api import config as config_views
from projects_app.api import environment as environment_views
from projects_app.api import projects as project_views

original: list = [
    path("project", project_views.ProjectListView.as_view(), name="project.list"),
    path("project/current", project_views.ProjectCurrentView.as_view(), name="project.current"),
    path("project/<str:projectID>", project_views.ProjectUpdateView.as_view(), name="project.update"),
    path("path", environment_views.PathView.as_view(), name="path.get"),
    path("vcs", environment_views.VcsView.as_view(), name="vcs.get"),
    path("config", config_views.ConfigView.as_view(), name="config.get"),
]
v2: list = [
    path("project", project_views.V2ProjectListView.as_view(), name="project.list"),
    path("project/<str:projectID>", project_views.V2ProjectView.as_view(), name="project.get"),
    path("vcs", environment_views.V2VcsView.as_view(), name="vcs.get"),
    path("config", config_views.V2ConfigView.as_view(), name="config.get"),
]

# workspace.* (admin helper): the fixed paths before the <workspaceID> pattern.
from projects_app import api_workspaces  # noqa: E402

v2 += [
    path("workspace", api_workspaces.WorkspaceListView.as_view(), name="workspace.list"),
    path("workspace/status", api_workspaces.WorkspaceStatusView.as_view(), name="workspace.status"),
    path("workspace/sync", api_workspaces.WorkspaceSyncView.as_view(), name="workspace.sync"),
    path("workspace/warp", api_workspaces.WorkspaceWarpView.as_view(), name="workspace.warp"),
    path("workspace/<str:workspaceID>", api_workspaces.WorkspaceItemView.as_view(), name="workspace.get"),
]
