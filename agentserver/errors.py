"""Domain errors and the one DRF exception handler that renders them in the spec's shapes.

400 {"name":"BadRequestError","data":{"message","kind","issues"}}
404 {"name":"NotFoundError","data":{"message"}}
Everything else keeps the NamedError shape {"name", "data": {"message", ...}}."""
import logging

from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

log = logging.getLogger(__name__)
# The challenge every 401 carries (HTTP, event streams): the API takes Basic username:token or a Bearer token.
REALM = 'Basic realm="agentserver"'


class ApiError(Exception):
    status = 500
    name = "UnknownError"

    def __init__(self, message: str, **data):
        super().__init__(message)
        self.message = message
        self.data = data

    def body(self) -> dict:
        return {"name": self.name, "data": {"message": self.message, **self.data}}


class BadRequest(ApiError):
    status = 400
    name = "BadRequestError"

    def __init__(self, message: str, *, kind: str = "Body", issues: list | None = None, **data):
        super().__init__(message, kind=kind, issues=issues or [], **data)


class Unauthorized(ApiError):
    status = 401
    name = "UnauthorizedError"

    def __init__(self, message: str, *, challenge: str = REALM):
        super().__init__(message)
        self.challenge = challenge  # the WWW-Authenticate of the 401


class NotFound(ApiError):
    status = 404
    name = "NotFoundError"


class Forbidden(ApiError):
    status = 403
    name = "ForbiddenError"


class PolicyError(Forbidden):
    """Refused by the organization's managed policy (policy_app): the message names the policy and its scope,
    `policy` says which scope decided and `field` which setting of it."""
    name = "PolicyError"

    def __init__(self, message: str, *, policy: str, field: str, **data):
        super().__init__(message, policy=policy, field=field, **data)


class Conflict(ApiError):
    status = 409
    name = "ConflictError"


class SessionBusy(Conflict):
    name = "SessionBusyError"


class SnapshotUnavailable(Conflict):
    """A revert or unrevert that cannot restore the files it would promise (its snapshots were deleted,
    damaged or never taken): refused with nothing changed, never a success that restored nothing."""
    name = "SnapshotUnavailableError"


class PayloadTooLarge(ApiError):
    status = 413
    name = "PayloadTooLargeError"


class TooManyRequests(ApiError):
    status = 429
    name = "TooManyRequestsError"


class BudgetExceeded(TooManyRequests):
    """A usage budget is spent (usage_app.budgets): nothing more is asked of a model until it resets."""
    name = "BudgetExceededError"


def error_response(error: ApiError, response_class=JsonResponse):
    response = response_class(error.body(), status=error.status)
    if error.status == 401:
        response["WWW-Authenticate"] = getattr(error, "challenge", REALM)
    return response


def issues_from_detail(detail, path=()) -> list[dict]:
    """A DRF error detail (nested dicts and lists) as the spec's issues: [{path, message}]."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            out.extend(issues_from_detail(value, path + (key,)))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"path": list(path), "message": str(item)} for item in detail]
        out = []
        for index, item in enumerate(detail):
            out.extend(issues_from_detail(item, path + (index,)))
        return out
    return [{"path": list(path), "message": str(detail)}]


def bad_input(issues: list[dict], *, kind: str = "Body") -> BadRequest:
    """The spec's 400 for invalid input: every issue, and a message that names each with its path."""
    message = "; ".join(f"{'.'.join(str(p) for p in issue['path']) or kind.lower()}: {issue['message']}"
                        for issue in issues)
    return BadRequest(message or "Invalid input", kind=kind, issues=issues)


def invalid_input(detail, *, kind: str = "Body") -> BadRequest:
    """A DRF validation error (nested dicts and lists of messages) as the spec's 400."""
    return bad_input(issues_from_detail(detail), kind=kind)


def exception_handler(exc, context):
    if isinstance(exc, ApiError):
        return Response(exc.body(), status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        return Response(PayloadTooLarge("Request body is too large").body(), status=413)
    if isinstance(exc, drf_exceptions.ParseError):
        return Response(BadRequest(f"Malformed JSON: {exc.detail}", kind="Body").body(), status=400)
    if isinstance(exc, drf_exceptions.ValidationError):
        return Response(invalid_input(exc.detail).body(), status=400)
    if isinstance(exc, (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed)):
        # The authenticator's challenge (DRF puts it on the exception): none a browser prompts for when the
        # request came with a session cookie (auth_app.authentication.challenge).
        return error_response(Unauthorized(str(exc.detail), challenge=getattr(exc, "auth_header", None) or REALM),
                              Response)
    if isinstance(exc, drf_exceptions.PermissionDenied):
        return Response(Forbidden(str(exc.detail)).body(), status=403)
    if isinstance(exc, drf_exceptions.NotFound):
        return Response(NotFound(str(exc.detail)).body(), status=404)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return Response({"name": "MethodNotAllowedError", "data": {"message": str(exc.detail)}}, status=405)
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return Response(BadRequest(str(exc.detail), kind="Headers").body(), status=415)
    if isinstance(exc, drf_exceptions.APIException):
        return Response({"name": "UnknownError", "data": {"message": str(exc.detail)}}, status=exc.status_code)
    log.exception("unhandled error", exc_info=exc)
    return Response({"name": "UnknownError", "data": {"message": "Unexpected server error"}}, status=500)


def not_found(request, exception=None) -> JsonResponse:
    """handler404: a URL no route serves."""
    return JsonResponse({"name": "NotFoundError", "data": {"message": f"No route: {request.method} {request.path}"}},
                        status=404)


def server_error(request) -> JsonResponse:
    """handler500."""
    return JsonResponse({"name": "UnknownError", "data": {"message": "Unexpected server error"}}, status=500)
