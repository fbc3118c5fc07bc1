from tests.sessions.helpers import create_session


def test_status_lists_only_live_non_idle_sessions_of_the_caller(alice, bob):
    from projects_app.models import now_ms
    from sessions_app.models import SessionLease

    busy, retrying, expired, idle = (create_session(alice) for _ in range(4))
    now = now_ms()
    retry = {"type": "retry", "attempt": 2, "message": "rate limited", "next": now + 5000}
    SessionLease.objects.create(session_id=busy["id"], holder="w1", expires_at=now + 60_000, status={"type": "busy"})
    SessionLease.objects.create(session_id=retrying["id"], holder="w1", expires_at=now + 60_000, status=retry)
    SessionLease.objects.create(session_id=expired["id"], holder="w0", expires_at=now - 1, status={"type": "busy"})
    SessionLease.objects.create(session_id=idle["id"], holder="w1", expires_at=now + 60_000, status={"type": "idle"})
    assert alice.get("/session/status").json() == {busy["id"]: {"type": "busy"}, retrying["id"]: retry}
    assert bob.get("/session/status").json() == {}


def test_todo_is_empty_then_what_todowrite_stored(alice):
    from sessions_app.models import Session
    from sessions_app.store.todos import todos_replace

    session = create_session(alice)
    assert alice.get(f"/session/{session['id']}/todo").json() == []
    todos = [{"content": "write tests", "status": "in_progress", "priority": "high"},
             {"content": "ship", "status": "pending", "priority": "medium"}]
    todos_replace(session=Session.objects.get(id=session["id"]), todos=todos)
    assert alice.get(f"/session/{session['id']}/todo").json() == todos
    assert alice.get(f"/api/session/{session['id']}/todo").json() == {"data": todos}
