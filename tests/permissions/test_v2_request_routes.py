"""opencode 1.18's v2 extras: pending permission/question requests of a location, session.active, interrupt,
and the customer's spec spelling `response` on the v2 reply routes (beside 1.18's `reply` / `answers`)."""
from agentserver import ids
from sessions_app.models import PermissionRequest, Question
from tests.permissions.helpers import ask_in_background, question_in_background, session_for, wait_pending

QUESTIONS = [{"question": "Which color?", "header": "Color",
              "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]


def test_permission_requests_of_the_location_in_the_v2_shape(alice, bob):
    session = session_for(alice)
    waiter = ask_in_background(session, patterns=("a.txt",), call_id="call_7")
    request = wait_pending(PermissionRequest, session)[0]
    listed = alice.get("/api/permission/request", params={"location[directory]": str(alice.repo)})
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["location"]["directory"] == str(alice.repo)
    assert body["data"] == [{"id": request.id, "sessionID": session.id, "action": "edit", "resources": ["a.txt"],
                             "save": ["*"], "metadata": {"filepath": "a.txt"},
                             "source": {"type": "tool", "messageID": "msg_1", "callID": "call_7"}}]
    other_dir = alice.repo.parent / "elsewhere"
    other_dir.mkdir()
    assert alice.get("/api/permission/request", params={"directory": str(other_dir)}).json()["data"] == []
    assert bob.get("/api/permission/request").json()["data"] == []
    alice.post(f"/api/permission/{request.id}/reply", json={"reply": "once"})
    waiter.join()


def test_question_requests_of_the_location(alice, bob):
    session = session_for(alice)
    waiter = question_in_background(session, QUESTIONS)
    question = wait_pending(Question, session)[0]
    body = alice.get("/api/question/request", params={"directory": str(alice.repo)}).json()
    assert [q["id"] for q in body["data"]] == [question.id]
    assert body["data"][0]["questions"] == QUESTIONS
    assert bob.get("/api/question/request").json()["data"] == []
    alice.post(f"/api/question/{question.id}/reject")
    waiter.join()


def test_the_spec_spelling_response_answers_a_permission(alice):
    session = session_for(alice)
    waiter = ask_in_background(session)
    request = wait_pending(PermissionRequest, session)[0]
    bad = alice.post(f"/api/permission/{request.id}/reply", json={"response": "maybe"})
    assert bad.status_code == 400 and "reply" in bad.json()["data"]["message"]
    assert PermissionRequest.objects.get(id=request.id).status == "pending"
    ok = alice.post(f"/api/permission/{request.id}/reply", json={"response": "once"})
    assert ok.status_code == 200, ok.text
    waiter.join()
    assert PermissionRequest.objects.get(id=request.id).reply == "once"


def test_the_spec_spelling_response_as_an_object_with_a_message(alice):
    session = session_for(alice)
    waiter = ask_in_background(session)
    request = wait_pending(PermissionRequest, session)[0]
    ok = alice.post(f"/api/permission/{request.id}/reply",
                    json={"response": {"reply": "reject", "message": "use the other file"}})
    assert ok.status_code == 200, ok.text
    waiter.join()
    row = PermissionRequest.objects.get(id=request.id)
    assert (row.reply, row.message) == ("reject", "use the other file")


def test_the_1_18_spelling_reply_still_works(alice):
    session = session_for(alice)
    waiter = ask_in_background(session)
    request = wait_pending(PermissionRequest, session)[0]
    assert alice.post(f"/api/permission/{request.id}/reply", json={"reply": "always"}).status_code == 200
    waiter.join()
    assert PermissionRequest.objects.get(id=request.id).reply == "always"


def test_the_spec_spelling_response_answers_a_question(alice):
    session = session_for(alice)
    waiter = question_in_background(session, QUESTIONS)
    question = wait_pending(Question, session)[0]
    bad = alice.post(f"/api/question/{question.id}/reply", json={"response": "Blue"})
    assert bad.status_code == 400 and "answers" in bad.json()["data"]["message"]
    assert Question.objects.get(id=question.id).status == "pending"
    ok = alice.post(f"/api/question/{question.id}/reply", json={"response": [["Blue"]]})
    assert ok.status_code == 200, ok.text
    waiter.join()
    row = Question.objects.get(id=question.id)
    assert row.status in ("replied", "used") and row.answers == [["Blue"]]


def test_the_spec_spelling_response_object_and_1_18_answers_both_answer_a_question(alice):
    for body in ({"response": {"answers": [["Red"]]}}, {"answers": [["Red"]]}):
        session = session_for(alice)
        waiter = question_in_background(session, QUESTIONS)
        question = wait_pending(Question, session)[0]
        assert alice.post(f"/api/question/{question.id}/reply", json=body).status_code == 200
        waiter.join()
        row = Question.objects.get(id=question.id)
        assert row.status in ("replied", "used") and row.answers == [["Red"]]


def test_session_active_lists_running_sessions_only(alice, bob):
    from sessions_app.runtime import leases

    busy, idle = session_for(alice), session_for(alice)
    response = alice.get("/api/session/active")
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {}}
    assert leases.acquire(busy.id, "test-holder")
    try:
        leases.set_status(busy.id, "test-holder", {"type": "busy"})
        assert alice.get("/api/session/active").json() == {"data": {busy.id: {"type": "running"}}}
        assert bob.get("/api/session/active").json() == {"data": {}}
    finally:
        leases.release(busy.id, "test-holder")
    assert idle.id not in alice.get("/api/session/active").json()["data"]


def test_interrupt_rejects_what_the_session_waits_for(alice, bob):
    session = session_for(alice)
    waiter = ask_in_background(session)
    request = wait_pending(PermissionRequest, session)[0]
    assert bob.post(f"/api/session/{session.id}/interrupt").status_code == 404
    assert PermissionRequest.objects.get(id=request.id).status == "pending"
    response = alice.post(f"/api/session/{session.id}/interrupt")
    assert response.status_code == 204
    waiter.join()
    assert PermissionRequest.objects.get(id=request.id).status != "pending"
    assert alice.post(f"/api/session/{ids.ascending('ses')}/interrupt").status_code == 404
    assert alice.post("/api/session/nope/interrupt").status_code == 400


def test_anonymous_callers_are_refused(anon):
    for method, url in (("GET", "/api/session/active"), ("GET", "/api/permission/request"),
                        ("GET", "/api/question/request"), ("POST", f"/api/session/{ids.ascending('ses')}/interrupt")):
        assert anon.request(method, url).status_code == 401


def test_a_saved_permission_is_removed_by_its_number_only(alice, bob):
    from sessions_app.models import PermissionApproval

    mine = PermissionApproval.objects.create(owner=alice.user, project_id="global", permission="bash", pattern="*")
    theirs = PermissionApproval.objects.create(owner=bob.user, project_id="global", permission="bash", pattern="*")
    # Digits that are not ASCII ('²', Arabic-Indic '٣'), signs, spaces and numbers past a 64-bit column.
    for bad in ("²", "٣", f"{mine.id}²", f"+{mine.id}", f" {mine.id}", "9" * 19, "9" * 40):
        response = alice.delete(f"/api/permission/saved/{bad}")
        assert response.status_code == 404, (bad, response.text)
        assert response.json()["name"] == "NotFoundError"
    assert alice.delete(f"/api/permission/saved/{theirs.id}").status_code == 404
    assert alice.delete(f"/api/permission/saved/{mine.id}").status_code == 204
    assert list(PermissionApproval.objects.values_list("id", flat=True)) == [theirs.id]
