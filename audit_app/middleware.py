"""The actor of a request signed in with the browser's session (the admin, the account page): whatever it
records is that person's, from that address. The API's credentials set theirs when DRF authenticates
(auth_app/authentication.py), which comes later and wins."""
from __future__ import annotations

from audit_app.actors import Actor, acting


class RequestActorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        def signed_in() -> Actor | None:
            user = getattr(request, "user", None)
            return Actor.person(user, request=request) if user is not None and user.is_authenticated else None

        with acting(signed_in):  # and nothing after the request
            return self.get_response(request)
