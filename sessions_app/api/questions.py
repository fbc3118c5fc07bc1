"""Questions the agent asked: question.list, question.reply, question.reject (original and v2) and
question.request.list, session.question.list/.reply/.reject (v2)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.api import (
    BOOLEAN,
    ApiView,
    LocatedView,
    StrictCharField,
    V2RequestView,
    id_param,
    opencode,
    parse,
)
from sessions_app.api.serializers import spec_response
from sessions_app.api.sessions import session_from_path
from sessions_app.services import questions


class AnswersBody(serializers.Serializer):
    answers = serializers.ListField(child=serializers.ListField(child=StrictCharField(allow_blank=True)))


class QuestionListView(ApiView):
    operation_ids = {"GET": "question.list"}

    def get(self, request):
        return Response(questions.question_list(user=request.user))


class QuestionReplyView(ApiView):
    operation_ids = {"POST": "question.reply"}
    id_kwarg = "requestID"
    path_ids = {"requestID": "que"}

    def body(self, data) -> dict:
        return parse(AnswersBody, data)

    def post(self, request, **kwargs):
        request_id = id_param(kwargs[self.id_kwarg], "que", "question")
        body = self.body(request.data)
        return Response(questions.question_reply(user=request.user, request_id=request_id, answers=body["answers"]))


class QuestionRejectView(ApiView):
    operation_ids = {"POST": "question.reject"}
    id_kwarg = "requestID"
    path_ids = {"requestID": "que"}

    def post(self, request, **kwargs):
        request_id = id_param(kwargs[self.id_kwarg], "que", "question")
        return Response(questions.question_reject(user=request.user, request_id=request_id))


# ---- v2 -----------------------------------------------------------------------------------------------

class V2QuestionListView(V2RequestView, QuestionListView):
    operation_ids = {"GET": "question.list"}
    answer_schemas = {"GET": opencode("GET /question")}


class V2QuestionReplyView(V2RequestView, QuestionReplyView):
    operation_ids = {"POST": "question.reply"}
    answer_schemas = {"POST": BOOLEAN}
    id_kwarg = "questionID"

    def body(self, data) -> dict:
        return parse(AnswersBody, spec_response(data, "answers"))


class V2QuestionRejectView(V2RequestView, QuestionRejectView):
    operation_ids = {"POST": "question.reject"}
    answer_schemas = {"POST": BOOLEAN}
    id_kwarg = "questionID"


class V2QuestionRequestListView(LocatedView):
    operation_ids = {"GET": "question.request.list"}

    def get(self, request):
        context = self.context(request)
        pending = questions.question_list(user=request.user, project_id=context.project_id)
        return self.located(request, pending)


class V2SessionQuestionListView(ApiView):
    operation_ids = {"GET": "session.question.list"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response({"data": questions.question_list(user=request.user, session=session)})


class V2SessionQuestionReplyView(ApiView):
    operation_ids = {"POST": "session.question.reply"}

    def post(self, request, sessionID: str, requestID: str):
        session = session_from_path(request, sessionID)
        request_id = id_param(requestID, "que", "question")
        body = parse(AnswersBody, request.data)
        questions.question_reply(user=request.user, request_id=request_id, answers=body["answers"],
                                 session_id=session.id)
        return Response(status=204)


class V2SessionQuestionRejectView(ApiView):
    operation_ids = {"POST": "session.question.reject"}

    def post(self, request, sessionID: str, requestID: str):
        session = session_from_path(request, sessionID)
        request_id = id_param(requestID, "que", "question")
        questions.question_reject(user=request.user, request_id=request_id, session_id=session.id)
        return Response(status=204)
