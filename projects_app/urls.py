"""Routes of projects_app: `original` at the root, `v2` under /api."""
from django.urls import path

from projects_app import api_global, api_worktree
from projects_app.api import config as config_views
from projects_app.api import environment as environment_views
from projects_app.api import projects as project_views

original: list = [
    path("project", project_views.ProjectListView.as_view(), name="project.list"),
    path("project/current", project_views.ProjectCurrentView.as_view(), name="project.current"),
    path("project/git/init", api_global.ProjectInitGitView.as_view(), name="project.initGit"),
    path("global/config", api_global.GlobalConfigView.as_view(), name="global.config.get"),
    path("global/dispose", api_global.GlobalDisposeView.as_view(), name="global.dispose"),
    path("log", api_global.LogView.as_view(), name="app.log"),
    path("experimental/worktree", api_worktree.WorktreeView.as_view(), name="worktree.list"),
    path("experimental/worktree/reset", api_worktree.WorktreeResetView.as_view(), name="worktree.reset"),
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

# fs.*, vcs.status/diff/patch, formatter/lsp status and the TUI's extra routes (FILES helper).
from projects_app import api_files as files_views  # noqa: E402

original += [
    path("file", files_views.FileListView.as_view(), name="file.list"),
    path("file/content", files_views.FileContentView.as_view(), name="file.read"),
    path("file/status", files_views.FileStatusView.as_view(), name="file.status"),
    path("find", files_views.FindTextView.as_view(), name="find.text"),
    path("find/file", files_views.FindFileView.as_view(), name="find.files"),
    path("find/symbol", files_views.FindSymbolView.as_view(), name="find.symbols"),
    path("vcs/status", files_views.VcsStatusView.as_view(), name="vcs.status"),
    path("vcs/diff", files_views.VcsDiffView.as_view(), name="vcs.diff"),
    path("vcs/diff/raw", files_views.VcsDiffRawView.as_view(), name="vcs.diff.raw"),
    path("vcs/apply", files_views.VcsApplyView.as_view(), name="vcs.apply"),
    path("formatter", files_views.FormatterView.as_view(), name="formatter.status"),
    path("lsp", files_views.LspView.as_view(), name="lsp.status"),
    path("project/<str:projectID>/directories", files_views.ProjectDirectoriesView.as_view(),
         name="project.directories"),
    path("experimental/capabilities", files_views.CapabilitiesView.as_view(), name="experimental.capabilities.get"),
    path("experimental/console", files_views.ConsoleView.as_view(), name="experimental.console.get"),
    path("experimental/resource", files_views.ResourceView.as_view(), name="experimental.resource.list"),
    path("experimental/workspace", files_views.ExperimentalWorkspaceView.as_view(),
         name="experimental.workspace.list"),
    path("experimental/workspace/status", files_views.ExperimentalWorkspaceStatusView.as_view(),
         name="experimental.workspace.status"),
]
v2 += [
    path("fs/file", files_views.V2FileView.as_view(), name="fs.file"),
    path("fs/tree", files_views.V2TreeView.as_view(), name="fs.tree"),
    path("fs/search", files_views.V2SearchView.as_view(), name="fs.search"),
    path("fs/grep", files_views.V2GrepView.as_view(), name="fs.grep"),
    path("vcs/status", files_views.V2VcsStatusView.as_view(), name="vcs.status"),
    path("vcs/diff", files_views.V2VcsDiffView.as_view(), name="vcs.diff"),
    path("vcs/patch", files_views.V2VcsPatchView.as_view(), name="vcs.patch"),
    path("formatter", files_views.V2FormatterView.as_view(), name="formatter.status"),
    path("lsp", files_views.V2LspView.as_view(), name="lsp.status"),
    path("location", files_views.LocationView.as_view(), name="location.get"),
    path("reference", files_views.ReferenceView.as_view(), name="reference.list"),
    path("integration", files_views.IntegrationView.as_view(), name="integration.list"),
]

# /tui/* control routes (projects_app/tui_control.py: events for the caller's TUIs + their control queue).
from projects_app import api_tui  # noqa: E402

original += [
    path("tui/append-prompt", api_tui.AppendPromptView.as_view(), name="tui.appendPrompt"),
    path("tui/open-help", api_tui.OpenHelpView.as_view(), name="tui.openHelp"),
    path("tui/open-sessions", api_tui.OpenSessionsView.as_view(), name="tui.openSessions"),
    path("tui/open-themes", api_tui.OpenThemesView.as_view(), name="tui.openThemes"),
    path("tui/open-models", api_tui.OpenModelsView.as_view(), name="tui.openModels"),
    path("tui/submit-prompt", api_tui.SubmitPromptView.as_view(), name="tui.submitPrompt"),
    path("tui/clear-prompt", api_tui.ClearPromptView.as_view(), name="tui.clearPrompt"),
    path("tui/execute-command", api_tui.ExecuteCommandView.as_view(), name="tui.executeCommand"),
    path("tui/show-toast", api_tui.ShowToastView.as_view(), name="tui.showToast"),
    path("tui/publish", api_tui.PublishView.as_view(), name="tui.publish"),
    path("tui/select-session", api_tui.SelectSessionView.as_view(), name="tui.selectSession"),
    path("tui/control/next", api_tui.ControlNextView.as_view(), name="tui.control.next"),
    path("tui/control/response", api_tui.ControlResponseView.as_view(), name="tui.control.response"),
]
