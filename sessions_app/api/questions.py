"""Questions the agent asked: question.list, question.reply, question.reject (original and v2) and
question.request.list, session.question.list/.reply/.reject (v2). A pending request's views are
api/pending.py's."""
from rest_framework import serializers

from agentserver.http.api import (
    StrictCharField,
    V2RequestView,
    opencode,
)
from sessions_app.api.pending import (
    PendingListView,
    PendingRejectView,
    PendingReplyView,
    PendingRequestListView,
    PendingSessionListView,
    PendingSessionRejectView,
    PendingSessionReplyView,
    PendingView,
    V2PendingRejectView,
    V2PendingReplyView,
)
from sessions_app.services import questions


class AnswersBody(serializers.Serializer):
    answers = serializers.ListField(child=serializers.ListField(child=StrictCharField(allow_blank=True)))


class QuestionView(PendingView):
    """What every question view of api/pending.py is given."""

    answering = questions.ANSWERING
    reply_body = AnswersBody
    reply_field = "answers"


class QuestionListView(QuestionView, PendingListView):
    operation_ids = {"GET": "question.list"}
    mounts = {"original": "question"}


class QuestionReplyView(QuestionView, PendingReplyView):
    operation_ids = {"POST": "question.reply"}
    mounts = {"original": "question/<str:requestID>/reply"}


class QuestionRejectView(QuestionView, PendingRejectView):
    operation_ids = {"POST": "question.reject"}
    mounts = {"original": "question/<str:requestID>/reject"}


# ---- v2 -----------------------------------------------------------------------------------------------

class V2QuestionListView(V2RequestView, QuestionListView):
    operation_ids = {"GET": "question.list"}
    mounts = {"v2": "question"}
    answer_schemas = {"GET": opencode("GET /question")}


class V2QuestionReplyView(QuestionView, V2PendingReplyView):
    operation_ids = {"POST": "question.reply"}
    mounts = {"v2": "question/<str:questionID>/reply"}


class V2QuestionRejectView(QuestionView, V2PendingRejectView):
    operation_ids = {"POST": "question.reject"}
    mounts = {"v2": "question/<str:questionID>/reject"}


class V2QuestionRequestListView(QuestionView, PendingRequestListView):
    operation_ids = {"GET": "question.request.list"}
    mounts = {"v2": "question/request"}


class V2SessionQuestionListView(QuestionView, PendingSessionListView):
    operation_ids = {"GET": "session.question.list"}
    mounts = {"v2": "session/<str:sessionID>/question"}


class V2SessionQuestionReplyView(QuestionView, PendingSessionReplyView):
    operation_ids = {"POST": "session.question.reply"}
    mounts = {"v2": "session/<str:sessionID>/question/<str:requestID>/reply"}


class V2SessionQuestionRejectView(QuestionView, PendingSessionRejectView):
    operation_ids = {"POST": "session.question.reject"}
    mounts = {"v2": "session/<str:sessionID>/question/<str:requestID>/reject"}
