import pytest

from sessions_app.models import PermissionApproval, PermissionRequest
from sessions_app.runtime.tools.base import PermissionRejected
from tests.permissions.helpers import ask_in_background, session_for, wait_pending


@pytest.fixture
def pending(alice):
    session = session_for(alice)
    waiter = ask_in_background(session)
    [request] = wait_pending(PermissionRequest, session)
    return session, waiter, request


def test_anonymous_callers_get_401(anon):
    assert anon.get("/permission").status_code == 401
    assert anon.post("/permission/per_x/reply", json={"reply": "once"}).status_code == 401
    assert anon.post("/session/ses_x/permissions/per_x", json={"response": "once"}).status_code == 401
    assert anon.get("/api/permission").status_code == 401


def test_the_pending_list_shows_the_request_record(alice, bob, pending):
    session, waiter, request = pending
    body = alice.get("/permission").json()
    assert body == [{"id": request.id, "sessionID": session.id, "permission": "edit", "patterns": ["a.txt"],
                     "metadata": {"filepath": "a.txt"}, "always": ["*"],
                     "tool": {"messageID": "msg_1", "callID": "call_1"}}]
    assert alice.get("/api/permission").json() == body
    assert bob.get("/permission").json() == []
    alice.post(f"/permission/{request.id}/reply", json={"reply": "once"})
    waiter.join()


def test_once_unblocks_the_tool_and_the_request_is_then_gone(alice, pending):
    _, waiter, request = pending
    response = alice.post(f"/permission/{request.id}/reply", json={"reply": "once"})
    assert response.status_code == 200 and response.json() is True
    assert waiter.join().error is None
    again = alice.post(f"/permission/{request.id}/reply", json={"reply": "once"})
    assert again.status_code == 404
    assert again.json()["data"]["message"] == f"Permission request not found: {request.id}"


def test_always_through_the_seed_route_remembers_the_pattern(alice, pending):
    session, waiter, request = pending
    response = alice.post(f"/session/{session.id}/permissions/{request.id}", json={"response": "always"})
    assert response.status_code == 200 and response.json() is True
    assert waiter.join().error is None
    assert list(PermissionApproval.objects.values_list("permission", "pattern")) == [("edit", "*")]


def test_reject_errors_the_tool_and_halts(alice, pending):
    _, waiter, request = pending
    assert alice.post(f"/api/permission/{request.id}/reply", json={"reply": "reject"}).status_code == 200
    error = waiter.join().error
    assert isinstance(error, PermissionRejected) and error.halts


def test_reject_with_a_message_passes_the_feedback(alice, pending):
    _, waiter, request = pending
    alice.post(f"/permission/{request.id}/reply", json={"reply": "reject", "message": "use git mv"})
    error = waiter.join().error
    assert str(error).endswith("with the following feedback: use git mv") and not error.halts


def test_bob_cannot_answer_alices_request(alice, bob, pending):
    session, waiter, request = pending
    assert bob.post(f"/permission/{request.id}/reply", json={"reply": "once"}).status_code == 404
    assert bob.post(f"/session/{session.id}/permissions/{request.id}", json={"response": "once"}).status_code == 404
    assert bob.post(f"/api/permission/{request.id}/reply", json={"reply": "once"}).status_code == 404
    alice.post(f"/permission/{request.id}/reply", json={"reply": "once"})
    waiter.join()


def test_unknown_ids_are_404_and_malformed_input_400(alice, pending):
    session, waiter, request = pending
    assert alice.post("/permission/per_nope/reply", json={"reply": "once"}).status_code == 404
    assert alice.post(f"/session/{session.id}/permissions/per_nope", json={"response": "once"}).status_code == 404
    assert alice.post(f"/session/ses_nope/permissions/{request.id}", json={"response": "once"}).status_code == 404
    bad = alice.post(f"/session/{session.id}/permissions/{request.id}", json={"response": "maybe"})
    assert bad.status_code == 400 and bad.json()["name"] == "BadRequestError"
    assert alice.post(f"/permission/{request.id}/reply", json={"response": "once"}).status_code == 400
    assert alice.post(f"/permission/{request.id}/reply", json=["once"]).status_code == 400
    assert alice.post(f"/permission/{request.id}/reply", content=b"{", headers={
        "content-type": "application/json"}).status_code == 400
    assert alice.post("/permission/abc/reply", json={"reply": "once"}).status_code == 400
    assert PermissionRequest.objects.get(id=request.id).status == "pending"
    alice.post(f"/permission/{request.id}/reply", json={"reply": "once"})
    waiter.join()
