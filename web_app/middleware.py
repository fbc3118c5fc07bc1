from django.conf import settings

from web_app.throttle import DEVICE_COOKIE, DEVICE_DAYS, new_device_cookie


class SecureCookiesOverTls:
    """Mark the session and CSRF cookies Secure on a request that came over TLS (directly, or through a
    proxy named in AGENTSERVER_TRUSTED_PROXIES that says so with X-Forwarded-Proto), so a cookie set behind
    TLS never travels over plain HTTP, while a plain-HTTP deployment still signs in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response


class TrustedDeviceCookie:
    """Give a browser that just signed in with a password its device cookie (web_app/throttle.py), whichever
    form it signed in with (ours or the admin's)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        value = new_device_cookie(request)
        if value is not None:
            response.set_cookie(DEVICE_COOKIE, value, max_age=DEVICE_DAYS * 86400, httponly=True, samesite="Lax",
                                secure=request.is_secure())
        return response
