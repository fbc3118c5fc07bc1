"""The /tui/* control routes: each call reaches the caller's own TUIs as a `tui.*` event and their control
client through the queue that tui.control.next hands out and tui.control.response answers."""
from agentserver import ids
from tests.events.sse_client import open_stream
from tests.sessions.helpers import create_session


def tui_events(persona, calls, count):
    """Make the calls with the caller's /global/event open; return the tui.* payloads it got."""
    with open_stream(persona, "/global/event") as stream:
        stream.next()
        for path, body in calls:
            response = persona.post(path, params={"directory": str(persona.repo)}, json=body)
            assert response.status_code == 200 and response.json() is True, (path, response.text)
        payloads = []
        while len(payloads) < count:
            frame, _ = stream.until(lambda d: d.get("payload", {}).get("type", "").startswith("tui."))
            payloads.append(frame.data["payload"])
    return payloads


def test_each_route_publishes_the_event_the_tui_acts_on(alice):
    session = create_session(alice)
    calls = [
        ("/tui/append-prompt", {"text": "hello"}),
        ("/tui/open-help", None),
        ("/tui/open-sessions", None),
        ("/tui/open-themes", None),
        ("/tui/open-models", None),
        ("/tui/submit-prompt", None),
        ("/tui/clear-prompt", None),
        ("/tui/execute-command", {"command": "session_new"}),
        ("/tui/execute-command", {"command": "agent.cycle"}),
        ("/tui/show-toast", {"message": "done", "variant": "success", "title": "Build"}),
        ("/tui/select-session", {"sessionID": session["id"]}),
        ("/tui/publish", {"type": "tui.prompt.append", "properties": {"text": "more"}}),
    ]
    payloads = tui_events(alice, calls, len(calls))
    assert [(p["type"], p["properties"]) for p in payloads] == [
        ("tui.prompt.append", {"text": "hello"}),
        ("tui.command.execute", {"command": "help.show"}),
        ("tui.command.execute", {"command": "session.list"}),
        ("tui.command.execute", {"command": "theme.switch"}),
        ("tui.command.execute", {"command": "model.list"}),
        ("tui.command.execute", {"command": "prompt.submit"}),
        ("tui.command.execute", {"command": "prompt.clear"}),
        ("tui.command.execute", {"command": "session.new"}),
        ("tui.command.execute", {"command": "agent.cycle"}),
        ("tui.toast.show", {"message": "done", "variant": "success", "title": "Build"}),
        ("tui.session.select", {"sessionID": session["id"]}),
        ("tui.prompt.append", {"text": "more"}),
    ]


def test_the_control_queue_hands_out_requests_in_order_and_takes_answers(alice):
    alice.post("/tui/append-prompt", json={"text": "first"})
    alice.post("/tui/open-help")
    first = alice.get("/tui/control/next")
    assert first.status_code == 200
    assert first.json() == {"path": "/tui/append-prompt", "body": {"text": "first"}}
    assert alice.post("/tui/control/response", json={"ok": True}).json() is True
    assert alice.get("/tui/control/next").json() == {"path": "/tui/open-help", "body": {"command": "help.show"}}
    assert alice.post("/tui/control/response", json=True).status_code == 200
    # Nothing handed out is waiting for an answer any more.
    assert alice.post("/tui/control/response", json={"late": 1}).status_code == 404
    from tui_app.models import TuiControlRequest

    assert list(TuiControlRequest.objects.filter(owner=alice.user).values_list("state", "response")) == [
        ("answered", {"ok": True}), ("answered", True)]


def test_users_only_reach_their_own_tuis(alice, bob):
    with open_stream(bob, "/global/event") as bob_stream:
        bob_stream.next()
        alice.post("/tui/show-toast", json={"message": "for alice", "variant": "info"})
        bob.post("/tui/show-toast", json={"message": "for bob", "variant": "info"})
        frame, before = bob_stream.until(lambda d: d.get("payload", {}).get("type") == "tui.toast.show")
    assert frame.data["payload"]["properties"]["message"] == "for bob"
    assert bob.get("/tui/control/next").json()["body"] == {"message": "for bob", "variant": "info"}
    assert alice.get("/tui/control/next").json()["body"] == {"message": "for alice", "variant": "info"}


def test_selecting_an_unknown_or_foreign_session_is_404_and_sends_nothing(alice, bob):
    from tui_app.models import TuiControlRequest

    session = create_session(alice)
    assert bob.post("/tui/select-session", json={"sessionID": session["id"]}).status_code == 404
    assert alice.post("/tui/select-session", json={"sessionID": ids.ascending("ses")}).status_code == 404
    published = bob.post("/tui/publish", json={"type": "tui.session.select",
                                               "properties": {"sessionID": session["id"]}})
    assert published.status_code == 404
    assert not TuiControlRequest.objects.exists()


def test_bad_input_is_400_naming_the_field_and_sends_nothing(alice):
    from tui_app.models import TuiControlRequest

    for path, body, field in (
            ("/tui/append-prompt", {}, "text"),
            ("/tui/append-prompt", {"text": 5}, "text"),
            ("/tui/execute-command", {"command": ""}, "command"),
            ("/tui/show-toast", {"message": "x", "variant": "loud"}, "variant"),
            ("/tui/show-toast", {"message": "x", "variant": "info", "duration": 0}, "duration"),
            ("/tui/select-session", {"sessionID": "nope"}, "session"),
            ("/tui/publish", {"type": "tui.other", "properties": {}}, "type"),
            ("/tui/publish", {"type": "tui.prompt.append", "properties": {}}, "text")):
        response = alice.post(path, json=body)
        assert response.status_code == 400, (path, body, response.text)
        assert field in response.json()["data"]["message"], (path, body, response.text)
    assert not TuiControlRequest.objects.exists()


def test_anonymous_callers_are_refused(anon):
    for path in ("/tui/append-prompt", "/tui/open-help", "/tui/show-toast", "/tui/publish", "/tui/control/response"):
        assert anon.post(path, json={}).status_code == 401
    assert anon.get("/tui/control/next").status_code == 401


def test_next_answers_204_when_nothing_came_within_the_wait(alice, server_factory):
    import httpx

    live = server_factory({"AGENTSERVER_TUI_CONTROL_WAIT_SECONDS": "0.3"})
    with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=30) as client:
        response = client.get("/tui/control/next")
        assert response.status_code == 204 and response.content == b""
        client.post("/tui/open-models")
        assert client.get("/tui/control/next").json() == {"path": "/tui/open-models", "body": {"command": "model.list"}}
