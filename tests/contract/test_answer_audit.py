"""The personas' answer check (tests/answer_audit.py) refuses a body outside what /doc states, and takes one
inside it: every test of the suite relies on it to say that /doc tells the truth about success bodies."""
import httpx
import pytest

from tests.answer_audit import AnswerOutsideDoc, checker


def answer(persona, method: str, path: str, status: int, body) -> httpx.Response:
    request = httpx.Request(method, persona.base_url + path)
    return httpx.Response(status, json=body, request=request)


def test_a_body_outside_doc_fails_and_one_inside_passes(alice):
    check = checker(alice.base_url, alice.token)
    check(answer(alice, "GET", "/vcs", 200, {"branch": "main"}))
    with pytest.raises(AnswerOutsideDoc, match=r"GET /vcs answered 200 .* at branch: None is not of type"):
        check(answer(alice, "GET", "/vcs", 200, {"branch": None}))
    with pytest.raises(AnswerOutsideDoc, match=r"GET /session/\{sessionID\} answered 200 .* 'id' is a required"):
        check(answer(alice, "GET", "/session/ses_x", 200, {"title": "no id"}))


def test_a_literal_route_is_told_apart_from_a_templated_one(alice):
    check = checker(alice.base_url, alice.token)
    check(answer(alice, "GET", "/session/status", 200, {"ses_a": {"type": "busy"}}))  # not a Session
    with pytest.raises(AnswerOutsideDoc, match="GET /session/status"):
        check(answer(alice, "GET", "/session/status", 200, {"ses_a": {"type": "nonsense"}}))


def test_errors_and_event_streams_are_not_its_business(alice):
    check = checker(alice.base_url, alice.token)
    check(answer(alice, "GET", "/vcs", 404, {"name": "NotFoundError", "data": {"message": "x"}}))
    stream = httpx.Response(200, text="data: {}\n\n", headers={"content-type": "text/event-stream"},
                            request=httpx.Request("GET", alice.base_url + "/event"))
    check(stream)
