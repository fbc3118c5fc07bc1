"""Questions the agent asked: question.list, question.reply, question.reject (original and v2) and
question.request.list, session.question.list/.reply/.reject (v2). A pending request's views are
api/pending.py's."""
from rest_framework import serializers

from agentserver.api import BOOLEAN, StrictCharField, V2RequestView, opencode, parse
from sessions_app.api.pending import (
    PendingListView,
    PendingRejectView,
    PendingReplyView,
    PendingRequestListView,
    PendingSessionListView,
    PendingSessionRejectView,
    PendingSessionReplyView,
    PendingView,
)
from sessions_app.api.serializers import spec_response
from sessions_app.services import questions


class AnswersBody(serializers.Serializer):
    answers = serializers.ListField(child=serializers.ListField(child=StrictCharField(allow_blank=True)))


def answers_body(data) -> dict:
    return parse(AnswersBody, data)


def v2_answers_body(data) -> dict:
    return parse(AnswersBody, spec_response(data, "answers"))


class QuestionView(PendingView):
    """What every question view of api/pending.py is given."""

    answering = questions.ANSWERING
    body = staticmethod(answers_body)


class QuestionListView(QuestionView, PendingListView):
    operation_ids = {"GET": "question.list"}


class QuestionReplyView(QuestionView, PendingReplyView):
    operation_ids = {"POST": "question.reply"}
    path_ids = {"requestID": "que"}


class QuestionRejectView(QuestionView, PendingRejectView):
    operation_ids = {"POST": "question.reject"}
    path_ids = {"requestID": "que"}


# ---- v2 -----------------------------------------------------------------------------------------------

class V2QuestionListView(V2RequestView, QuestionListView):
    operation_ids = {"GET": "question.list"}
    answer_schemas = {"GET": opencode("GET /question")}


class V2QuestionReplyView(V2RequestView, QuestionReplyView):
    operation_ids = {"POST": "question.reply"}
    answer_schemas = {"POST": BOOLEAN}
    id_kwarg = "questionID"
    body = staticmethod(v2_answers_body)


class V2QuestionRejectView(V2RequestView, QuestionRejectView):
    operation_ids = {"POST": "question.reject"}
    answer_schemas = {"POST": BOOLEAN}
    id_kwarg = "questionID"


class V2QuestionRequestListView(QuestionView, PendingRequestListView):
    operation_ids = {"GET": "question.request.list"}


class V2SessionQuestionListView(QuestionView, PendingSessionListView):
    operation_ids = {"GET": "session.question.list"}


class V2SessionQuestionReplyView(QuestionView, PendingSessionReplyView):
    operation_ids = {"POST": "session.question.reply"}


class V2SessionQuestionRejectView(QuestionView, PendingSessionRejectView):
    operation_ids = {"POST": "session.question.reject"}
