"""Routes of sessions_app: `original` at the root, `v2` under /api. Two operations on one URL (GET
session.messages and POST session.prompt on /session/{id}/message) share a pattern: `route()` combines their
views. The runner machinery starts with the first request (SessionsAppConfig.ready)."""
from agentserver.http.api import route
from sessions_app.api import (agents, choice, commands, history, messages, permissions, prompt, questions, revert,
                              sessions, share, sync, workspaces)

original: list = [
    # the session store
    route("session", sessions.SessionCollectionView, "session.list", "session.create"),
    route("session/status", sessions.SessionStatusView, "session.status"),
    route("session/<str:sessionID>", sessions.SessionItemView, "session.get", "session.update", "session.delete"),
    route("session/<str:sessionID>/children", sessions.SessionChildrenView, "session.children"),
    route("session/<str:sessionID>/todo", sessions.SessionTodoView, "session.todo"),
    route("session/<str:sessionID>/fork", sessions.SessionForkView, "session.fork"),
    route("session/<str:sessionID>/share", sessions.SessionShareView, "session.share", "session.unshare"),
    # messages and parts; prompting on the same URL
    route("session/<str:sessionID>/message", (messages.SessionMessagesView, prompt.PromptView),
          "session.messages", "session.prompt"),
    route("session/<str:sessionID>/message/<str:messageID>", (messages.SessionMessageView, messages.MessageDeleteView),
          "session.message", "session.deleteMessage"),
    route("session/<str:sessionID>/message/<str:messageID>/part/<str:partID>", messages.PartItemView,
          "part.update", "part.delete"),
    # Public, anonymous: the self-hosted share page and its JSON.
    route("share/<str:shareID>", share.SharePageView, "share.page"),
    route("share/<str:shareID>/data", share.ShareDataView, "share.data"),
    # agents, tools, permissions, questions
    route("experimental/tool/ids", agents.ToolIdsView, "tool.ids"),
    route("experimental/tool", agents.ToolListView, "tool.list"),
    route("experimental/capabilities", agents.CapabilitiesView, "experimental.capabilities.get"),
    route("agent", agents.AgentsView, "app.agents"),
    route("session/<str:sessionID>/permissions/<str:permissionID>", permissions.PermissionRespondView,
          "permission.respond"),
    route("permission", permissions.PermissionListView, "permission.list"),
    route("permission/<str:requestID>/reply", permissions.PermissionReplyView, "permission.reply"),
    route("question", questions.QuestionListView, "question.list"),
    route("question/<str:requestID>/reply", questions.QuestionReplyView, "question.reply"),
    route("question/<str:requestID>/reject", questions.QuestionRejectView, "question.reject"),
    # prompting, abort, shell
    route("session/<str:sessionID>/prompt_async", prompt.PromptAsyncView, "session.prompt_async"),
    route("session/<str:sessionID>/abort", prompt.AbortView, "session.abort"),
    route("session/<str:sessionID>/shell", prompt.ShellView, "session.shell"),
    # revert, unrevert, diff
    route("session/<str:sessionID>/revert", revert.RevertView, "session.revert"),
    route("session/<str:sessionID>/unrevert", revert.UnrevertView, "session.unrevert"),
    route("session/<str:sessionID>/diff", revert.DiffView, "session.diff"),
    # commands, init, summarize, skills
    route("command", commands.CommandListView, "command.list"),
    route("skill", commands.SkillListView, "app.skills"),
    route("session/<str:sessionID>/command", commands.SessionCommandView, "session.command"),
    route("session/<str:sessionID>/init", commands.SessionInitView, "session.init"),
    route("session/<str:sessionID>/summarize", commands.SessionSummarizeView, "session.summarize"),
    # sync.* and the control plane: sessions move within their project (sessions_app/api/sync.py)
    route("sync/start", sync.SyncStartView, "sync.start"),
    route("sync/replay", sync.SyncReplayView, "sync.replay"),
    route("sync/steal", sync.SyncStealView, "sync.steal"),
    route("sync/history", sync.SyncHistoryView, "sync.history.list"),
    route("experimental/control-plane/move-session", sync.MoveSessionView, "experimental.controlPlane.moveSession"),
    route("experimental/session", sessions.ExperimentalSessionListView, "experimental.session.list"),
    route("experimental/session/<str:sessionID>/background", sessions.ExperimentalSessionBackgroundView,
          "experimental.session.background"),
    # Before projects_app's experimental/workspace/<id>, which would take "warp" for an id.
    route("experimental/workspace/warp", workspaces.ExperimentalWarpView, "experimental.workspace.warp"),
]

v2: list = [
    route("session", sessions.V2SessionCollectionView, "session.list", "session.create"),
    # Before session/<sessionID>, which would take "active" for an id.
    route("session/active", sessions.V2SessionActiveView, "session.active"),
    route("session/<str:sessionID>", sessions.V2SessionItemView, "session.get", "session.update", "session.delete"),
    route("session/<str:sessionID>/todo", sessions.V2SessionTodoView, "session.todo"),
    route("session/<str:sessionID>/context", sessions.V2SessionContextView, "session.context"),
    route("session/<str:sessionID>/message", messages.V2SessionMessagesView, "session.message.list"),
    route("session/<str:sessionID>/message/<str:messageID>", messages.V2SessionMessageView, "session.message"),
    route("session/<str:sessionID>/agent", choice.V2SwitchAgentView, "session.switchAgent"),
    route("session/<str:sessionID>/model", choice.V2SwitchModelView, "session.switchModel"),
    route("session/<str:sessionID>/history", history.V2SessionHistoryView, "session.history"),
    route("session/<str:sessionID>/prompt", prompt.V2PromptView, "session.prompt"),
    route("session/<str:sessionID>/wait", prompt.V2WaitView, "session.wait"),
    route("session/<str:sessionID>/interrupt", prompt.V2SessionInterruptView, "session.interrupt"),
    route("session/<str:sessionID>/diff", revert.V2DiffView, "session.diff"),
    route("session/<str:sessionID>/revert/stage", revert.V2RevertStageView, "session.revert.stage"),
    route("session/<str:sessionID>/revert/clear", revert.V2RevertClearView, "session.revert.clear"),
    route("session/<str:sessionID>/revert/commit", revert.V2RevertCommitView, "session.revert.commit"),
    route("session/<str:sessionID>/compact", commands.V2CompactView, "session.compact"),
    route("agent", agents.V2AgentListView, "agent.list"),
    route("permission", permissions.V2PermissionListView, "permission.list"),
    route("permission/request", permissions.V2PermissionRequestListView, "permission.request.list"),
    route("permission/saved", permissions.V2SavedPermissionListView, "permission.saved.list"),
    route("permission/saved/<str:id>", permissions.V2SavedPermissionView, "permission.saved.remove"),
    route("permission/<str:permissionID>/reply", permissions.V2PermissionReplyView, "permission.reply"),
    route("session/<str:sessionID>/permission", permissions.V2SessionPermissionsView,
          "session.permission.list", "session.permission.create"),
    route("session/<str:sessionID>/permission/<str:requestID>", permissions.V2SessionPermissionView,
          "session.permission.get"),
    route("session/<str:sessionID>/permission/<str:requestID>/reply", permissions.V2SessionPermissionReplyView,
          "session.permission.reply"),
    route("question", questions.V2QuestionListView, "question.list"),
    route("question/request", questions.V2QuestionRequestListView, "question.request.list"),
    route("question/<str:questionID>/reply", questions.V2QuestionReplyView, "question.reply"),
    route("question/<str:questionID>/reject", questions.V2QuestionRejectView, "question.reject"),
    route("session/<str:sessionID>/question", questions.V2SessionQuestionListView, "session.question.list"),
    route("session/<str:sessionID>/question/<str:requestID>/reply", questions.V2SessionQuestionReplyView,
          "session.question.reply"),
    route("session/<str:sessionID>/question/<str:requestID>/reject", questions.V2SessionQuestionRejectView,
          "session.question.reject"),
    route("command", commands.V2CommandListView, "command.list"),
    route("skill", commands.V2SkillListView, "skill.list"),
    # workspace.warp moves a session; the rest of workspace.* is projects_app's, mounted after this app.
    route("workspace/warp", workspaces.WorkspaceWarpView, "workspace.warp"),
]
