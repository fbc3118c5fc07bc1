"""Who did something: a person (with the token or browser they used, their address and user agent), an agent
acting in a session on a person's behalf, or the server itself (a command, a janitor).

A request's actor is set once, where the request is authenticated (auth_app), as the ambient actor of the
request's context; a record that names no actor takes it. Each request runs in a copy of the worker's context
(agentserver/http/admission.py), so an actor never outlives its request."""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

MAX_USER_AGENT = 300


@dataclass(frozen=True)
class Actor:
    person_id: int | None = None
    name: str = ""
    token_id: int | None = None
    address: str = ""
    user_agent: str = ""
    session_id: str = ""            # set: an agent in this session, on behalf of `person_id`

    @classmethod
    def system(cls, name: str = "server") -> Actor:
        return cls(name=name)

    @classmethod
    def agent(cls, *, session_id: str, person_id: int, name: str = "") -> Actor:
        return cls(person_id=person_id, name=name, session_id=session_id)

    @classmethod
    def person(cls, user, *, token_id: int | None = None, request=None) -> Actor:
        address, user_agent = client_of(request) if request is not None else ("", "")
        return cls(person_id=user.pk, name=user.get_username(), token_id=token_id, address=address,
                   user_agent=user_agent)

    @classmethod
    def anonymous(cls, request, *, name: str = "") -> Actor:
        address, user_agent = client_of(request)
        return cls(name=name, address=address, user_agent=user_agent)

    def describe(self) -> str:
        who = self.name or (f"person {self.person_id}" if self.person_id is not None else "anonymous")
        if self.session_id:
            return f"agent in session {self.session_id} on behalf of {who}"
        return who + (f" (token {self.token_id})" if self.token_id is not None else "")


def client_of(request) -> tuple[str, str]:
    """The address (REMOTE_ADDR: the server takes X-Forwarded-For only from the proxies it trusts) and the
    user agent of a Django request, or of an ASGI scope (a WebSocket's: its `client`, which the ASGI server
    has already taken from a trusted proxy's header, and its headers)."""
    if isinstance(request, dict):
        client = request.get("client") or ("",)
        user_agent = next((value.decode("latin-1") for key, value in request.get("headers", [])
                           if key == b"user-agent"), "")
        return str(client[0] or "")[:64], user_agent[:MAX_USER_AGENT]
    meta = getattr(request, "META", None) or {}
    return meta.get("REMOTE_ADDR", "")[:64], meta.get("HTTP_USER_AGENT", "")[:MAX_USER_AGENT]


_current: contextvars.ContextVar[Actor | Callable[[], Actor | None] | None] = contextvars.ContextVar(
    "audit_actor", default=None)


def act_as(actor: Actor | Callable[[], Actor | None]) -> None:
    """The actor of everything recorded from now on in this context (a request's, once authenticated); a
    callable is asked only when something is recorded (the browser's session is read only then)."""
    _current.set(actor)


@contextmanager
def acting(actor: Actor | Callable[[], Actor | None]) -> Iterator[None]:
    reset = _current.set(actor)
    try:
        yield
    finally:
        _current.reset(reset)


def current() -> Actor | None:
    actor = _current.get()
    if callable(actor):
        actor = actor()
        _current.set(actor)
    return actor
