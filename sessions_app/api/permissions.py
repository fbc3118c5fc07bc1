"""Permission and question routes: list the caller's pending requests, answer them (original and v2 mounts)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.api import ApiView, V2RequestView, id_param, parse
from sessions_app.selectors import session_get
from sessions_app.services import permissions, questions

REPLY_ERROR = 'Expected "once" | "always" | "reject"'


class ReplyBody(serializers.Serializer):
    reply = serializers.ChoiceField(choices=permissions.REPLIES, error_messages={"invalid_choice": REPLY_ERROR})
    message = serializers.CharField(required=False, allow_blank=True, max_length=100_000)


class RespondBody(serializers.Serializer):
    response = serializers.ChoiceField(choices=permissions.REPLIES, error_messages={"invalid_choice": REPLY_ERROR})


class AnswersBody(serializers.Serializer):
    answers = serializers.ListField(child=serializers.ListField(child=serializers.CharField(allow_blank=True)))


class PermissionListView(ApiView):
    operation_ids = {"GET": "permission.list"}

    def get(self, request):
        return Response(permissions.permission_list(user=request.user))


class PermissionReplyView(ApiView):
    operation_ids = {"POST": "permission.reply"}
    id_kwarg = "requestID"

    def body(self, data) -> dict:
        return parse(ReplyBody, data)

    def post(self, request, **kwargs):
        request_id = id_param(kwargs[self.id_kwarg], "per", "permission")
        body = self.body(request.data)
        return Response(permissions.permission_reply(user=request.user, request_id=request_id, reply=body["reply"],
                                                     message=body.get("message") or None))


class PermissionRespondView(ApiView):
    """The seed's route: POST /session/{sessionID}/permissions/{permissionID} {response}."""

    operation_ids = {"POST": "permission.respond"}

    def post(self, request, sessionID: str, permissionID: str):
        session_id = id_param(sessionID, "ses", "session")
        request_id = id_param(permissionID, "per", "permission")
        body = parse(RespondBody, request.data)
        session_get(user=request.user, session_id=session_id)
        return Response(permissions.permission_reply(user=request.user, request_id=request_id,
                                                     reply=body["response"], session_id=session_id))


class QuestionListView(ApiView):
    operation_ids = {"GET": "question.list"}

    def get(self, request):
        return Response(questions.question_list(user=request.user))


class QuestionReplyView(ApiView):
    operation_ids = {"POST": "question.reply"}
    id_kwarg = "requestID"

    def body(self, data) -> dict:
        return parse(AnswersBody, data)

    def post(self, request, **kwargs):
        request_id = id_param(kwargs[self.id_kwarg], "que", "question")
        body = self.body(request.data)
        return Response(questions.question_reply(user=request.user, request_id=request_id, answers=body["answers"]))


class QuestionRejectView(ApiView):
    operation_ids = {"POST": "question.reject"}
    id_kwarg = "requestID"

    def post(self, request, **kwargs):
        request_id = id_param(kwargs[self.id_kwarg], "que", "question")
        return Response(questions.question_reject(user=request.user, request_id=request_id))


class V2PermissionListView(V2RequestView, PermissionListView):
    operation_ids = {"GET": "permission.list"}


def spec_response(data, inner: str):
    """The customer's spec names the v2 reply's input `response` (a PermissionReply / QuestionResponse);
    opencode 1.18 sends `reply` / `answers`. `response` may be the bare value or an object holding `inner`."""
    if not isinstance(data, dict) or "response" not in data or inner in data:
        return data
    response = data["response"]
    if isinstance(response, dict):
        return {**{k: v for k, v in data.items() if k != "response"}, **response}
    return {**{k: v for k, v in data.items() if k != "response"}, inner: response}


class V2PermissionReplyView(V2RequestView, PermissionReplyView):
    operation_ids = {"POST": "permission.reply"}
    id_kwarg = "permissionID"

    def body(self, data) -> dict:
        return parse(ReplyBody, spec_response(data, "reply"))


class V2QuestionListView(V2RequestView, QuestionListView):
    operation_ids = {"GET": "question.list"}


class V2QuestionReplyView(V2RequestView, QuestionReplyView):
    operation_ids = {"POST": "question.reply"}
    id_kwarg = "questionID"

    def body(self, data) -> dict:
        return parse(AnswersBody, spec_response(data, "answers"))


class V2QuestionRejectView(V2RequestView, QuestionRejectView):
    operation_ids = {"POST": "question.reject"}
    id_kwarg = "questionID"
