"""Streams need credentials (Bearer, Basic, or auth_token in the query) and a directory inside the roots."""
import base64

import pytest

from tests.events.sse_client import SseStream, open_stream

PATHS = ["/global/event", "/event", "/api/event"]


@pytest.mark.parametrize("path", PATHS)
def test_anonymous_callers_get_401(server, path):
    with SseStream(server.url, path) as stream:
        assert stream.status_code == 401
        assert stream.response.headers["www-authenticate"] == 'Basic realm="agentserver"'
        assert stream.json()["name"] == "UnauthorizedError"


@pytest.mark.parametrize("path", PATHS)
def test_a_wrong_token_gets_401(server, path):
    with SseStream(server.url, path, headers={"Authorization": "Bearer as_nope"}) as stream:
        assert stream.status_code == 401


def test_basic_auth_and_query_token_open_streams(alice):
    basic = {"Authorization": "Basic " + alice.basic_auth_token}
    with SseStream(alice.base_url, "/global/event", headers=basic) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"
    with SseStream(alice.base_url, "/global/event", params={"auth_token": alice.basic_auth_token}) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"


def test_a_directory_outside_the_roots_is_403(alice):
    with open_stream(alice, "/event", params={"directory": "/etc"}) as stream:
        assert stream.status_code == 403
        assert stream.json()["name"] == "ForbiddenError"


def test_a_user_without_roots_is_403_on_directory_streams(charlie):
    with open_stream(charlie, "/event") as stream:
        assert stream.status_code == 403
    with open_stream(charlie, "/global/event") as stream:
        assert stream.status_code == 200


def test_a_missing_directory_is_400(alice):
    with open_stream(alice, "/event", params={"directory": str(alice.root / "nope")}) as stream:
        assert stream.status_code == 400
        assert stream.json()["name"] == "BadRequestError"


def test_an_unknown_workspace_is_404(alice):
    with open_stream(alice, "/api/event", params={"workspace": "wrk_nope"}) as stream:
        assert stream.status_code == 404


def test_streams_only_answer_get(alice):
    assert alice.post("/global/event").status_code == 405


def test_dispose_needs_credentials_and_a_directory_in_the_roots(anon, alice, bob):
    assert anon.post("/instance/dispose").status_code == 401
    assert bob.post("/instance/dispose", params={"directory": str(alice.repo)}).status_code == 403
    assert alice.post("/instance/dispose", params={"directory": str(alice.root / "nope")}).status_code == 400
    encoded = base64.b64encode(b"x").decode()
    assert anon.post("/instance/dispose", params={"auth_token": encoded}).status_code == 401
