from django.conf import settings
from django.core.exceptions import RequestDataTooBig

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
            if not declared:
                # A chunked body announces no length (the server may drop Transfer-Encoding): measure it.
                try:
                    size = len(request.body)
                except RequestDataTooBig:
                    size = limit + 1
                if size > limit:
                    return error_response(PayloadTooLarge(f"Request body exceeds {limit} bytes"))
                if size:
                    # DRF reads nothing from a request without Content-Length: give it the measured one.
                    request.META["CONTENT_LENGTH"] = str(size)
        return self.get_response(request)
