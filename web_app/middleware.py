from django.conf import settings


class SecureCookiesOverTls:
    """Mark the session and CSRF cookies Secure on a request that came over TLS (directly, or through a
    proxy on the loopback that says so: uvicorn reads X-Forwarded-Proto from 127.0.0.1), so a cookie set
    behind TLS never travels over plain HTTP, while a plain-HTTP deployment still signs in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response
