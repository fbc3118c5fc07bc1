"""Routes of sessions_app: `original` at the root, `v2` under /api. Two operations on one URL (GET
session.messages and POST session.prompt on /session/{id}/message) share a pattern through
`combine(ViewA, ViewB)`. The runner machinery starts with the first request (SessionsAppConfig.ready)."""
from django.urls import path

from sessions_app.api import command_views as cv
from sessions_app.api import message_edit_views
from sessions_app.api import original as o
from sessions_app.api import permissions_views as pv
from sessions_app.api import prompt_views as rv
from sessions_app.api import revert_views as sv
from sessions_app.api import share
from sessions_app.api import tools_views as tv
from sessions_app.api import v2
from sessions_app.api import v2_requests_views
from sessions_app.api.routing import combine

original: list = [
    # the session store
    path("session", o.SessionCollectionView.as_view(), name="session.list"),
    path("session/status", o.SessionStatusView.as_view(), name="session.status"),
    path("session/<str:sessionID>", o.SessionItemView.as_view(), name="session.get"),
    path("session/<str:sessionID>/children", o.SessionChildrenView.as_view(), name="session.children"),
    path("session/<str:sessionID>/todo", o.SessionTodoView.as_view(), name="session.todo"),
    path("session/<str:sessionID>/fork", o.SessionForkView.as_view(), name="session.fork"),
    path("session/<str:sessionID>/share", o.SessionShareView.as_view(), name="session.share"),
    path("session/<str:sessionID>/message", combine(o.SessionMessagesView, rv.PromptView).as_view(),
         name="session.messages"),
    path("session/<str:sessionID>/message/<str:messageID>",
         combine(o.SessionMessageView, message_edit_views.MessageDeleteView).as_view(), name="session.message"),
    path("session/<str:sessionID>/message/<str:messageID>/part/<str:partID>",
         message_edit_views.PartItemView.as_view(), name="part.update"),
    # Public, anonymous: the self-hosted share page and its JSON.
    path("share/<str:shareID>", share.SharePageView.as_view(), name="share.page"),
    path("share/<str:shareID>/data", share.ShareDataView.as_view(), name="share.data"),
    # tools, agents, permissions, questions
    path("experimental/tool/ids", tv.ToolIdsView.as_view(), name="tool.ids"),
    path("experimental/tool", tv.ToolListView.as_view(), name="tool.list"),
    path("agent", tv.AgentsView.as_view(), name="app.agents"),
    path("session/<str:sessionID>/permissions/<str:permissionID>", pv.PermissionRespondView.as_view(),
         name="permission.respond"),
    path("permission", pv.PermissionListView.as_view(), name="permission.list"),
    path("permission/<str:requestID>/reply", pv.PermissionReplyView.as_view(), name="permission.reply"),
    path("question", pv.QuestionListView.as_view(), name="question.list"),
    path("question/<str:requestID>/reply", pv.QuestionReplyView.as_view(), name="question.reply"),
    path("question/<str:requestID>/reject", pv.QuestionRejectView.as_view(), name="question.reject"),
    # prompting, abort, shell
    path("session/<str:sessionID>/prompt_async", rv.PromptAsyncView.as_view(), name="session.prompt_async"),
    path("session/<str:sessionID>/abort", rv.AbortView.as_view(), name="session.abort"),
    path("session/<str:sessionID>/shell", rv.ShellView.as_view(), name="session.shell"),
    # revert, unrevert, diff
    path("session/<str:sessionID>/revert", sv.RevertView.as_view(), name="session.revert"),
    path("session/<str:sessionID>/unrevert", sv.UnrevertView.as_view(), name="session.unrevert"),
    path("session/<str:sessionID>/diff", sv.DiffView.as_view(), name="session.diff"),
    # commands, init, summarize, skills
    path("command", cv.CommandListView.as_view(), name="command.list"),
    path("skill", cv.SkillListView.as_view(), name="app.skills"),
    path("session/<str:sessionID>/command", cv.SessionCommandView.as_view(), name="session.command"),
    path("session/<str:sessionID>/init", cv.SessionInitView.as_view(), name="session.init"),
    path("session/<str:sessionID>/summarize", cv.SessionSummarizeView.as_view(), name="session.summarize"),
]

v2: list = [
    path("session", v2.V2SessionCollectionView.as_view(), name="session.list"),
    # Before session/<sessionID>, which would take "active" for an id.
    path("session/active", v2_requests_views.V2SessionActiveView.as_view(), name="session.active"),
    path("session/<str:sessionID>/interrupt", v2_requests_views.V2SessionInterruptView.as_view(),
         name="session.interrupt"),
    path("permission/request", v2_requests_views.V2PermissionRequestListView.as_view(),
         name="permission.request.list"),
    path("question/request", v2_requests_views.V2QuestionRequestListView.as_view(), name="question.request.list"),
    path("session/<str:sessionID>", v2.V2SessionItemView.as_view(), name="session.get"),
    path("session/<str:sessionID>/message", v2.V2SessionMessagesView.as_view(), name="session.message.list"),
    path("session/<str:sessionID>/todo", v2.V2SessionTodoView.as_view(), name="session.todo"),
    path("session/<str:sessionID>/context", v2.V2SessionContextView.as_view(), name="session.context"),
    path("agent", tv.V2AgentListView.as_view(), name="agent.list"),
    path("permission", pv.V2PermissionListView.as_view(), name="permission.list"),
    path("permission/<str:permissionID>/reply", pv.V2PermissionReplyView.as_view(), name="permission.reply"),
    path("question", pv.V2QuestionListView.as_view(), name="question.list"),
    path("question/<str:questionID>/reply", pv.V2QuestionReplyView.as_view(), name="question.reply"),
    path("question/<str:questionID>/reject", pv.V2QuestionRejectView.as_view(), name="question.reject"),
    path("session/<str:sessionID>/prompt", rv.V2PromptView.as_view(), name="session.prompt"),
    path("session/<str:sessionID>/wait", rv.V2WaitView.as_view(), name="session.wait"),
    path("session/<str:sessionID>/diff", sv.V2DiffView.as_view(), name="session.diff"),
    path("command", cv.V2CommandListView.as_view(), name="command.list"),
    path("skill", cv.V2SkillListView.as_view(), name="skill.list"),
    path("session/<str:sessionID>/compact", cv.V2CompactView.as_view(), name="session.compact"),
]
