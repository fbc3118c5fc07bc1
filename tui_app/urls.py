"""Routes of tui_app: the /tui/* control routes (original mount only)."""
from agentserver.http.api import route
from tui_app.api import tui

original: list = [
    route("tui/append-prompt", tui.AppendPromptView, "tui.appendPrompt"),
    route("tui/open-help", tui.OpenHelpView, "tui.openHelp"),
    route("tui/open-sessions", tui.OpenSessionsView, "tui.openSessions"),
    route("tui/open-themes", tui.OpenThemesView, "tui.openThemes"),
    route("tui/open-models", tui.OpenModelsView, "tui.openModels"),
    route("tui/submit-prompt", tui.SubmitPromptView, "tui.submitPrompt"),
    route("tui/clear-prompt", tui.ClearPromptView, "tui.clearPrompt"),
    route("tui/execute-command", tui.ExecuteCommandView, "tui.executeCommand"),
    route("tui/show-toast", tui.ShowToastView, "tui.showToast"),
    route("tui/publish", tui.PublishView, "tui.publish"),
    route("tui/select-session", tui.SelectSessionView, "tui.selectSession"),
    route("tui/control/next", tui.ControlNextView, "tui.control.next"),
    route("tui/control/response", tui.ControlResponseView, "tui.control.response"),
]
v2: list = []
