from django.conf import settings

from agentserver.errors import PayloadTooLarge, error_response


class BodySizeLimitMiddleware:
    """413 for bodies over DATA_UPLOAD_MAX_MEMORY_SIZE, whether announced by Content-Length or chunked."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and request.method in ("POST", "PUT", "PATCH", "DELETE"):
            try:
                declared = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                declared = 0
            if declared > limit:
                return error_response(PayloadTooLarge(f"Request body exceeds {limit} bytes"))
            if not declared and request.META.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
                if len(request.body) > limit:
                    return error_response(PayloadTooLarge(f"Request body exceeds {limit} bytes"))
        return self.get_response(request)
