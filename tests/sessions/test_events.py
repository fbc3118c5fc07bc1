import json
import threading

import httpx

from tests.sessions.helpers import add_turns, create_session


def read_events(persona, until_type: str, action, *, limit: int = 200) -> list[dict]:
    """Open the instance stream of the persona's repo, run `action`, collect events up to `until_type`."""
    events: list[dict] = []
    worker = threading.Thread(target=action, daemon=True)
    try:
        _collect(persona, until_type, worker, events, limit)
    finally:
        if worker.is_alive() or worker.ident:
            worker.join(30)
    return events


def _collect(persona, until_type, worker, events, limit) -> None:
    headers = {"Authorization": f"Bearer {persona.token}"}
    with httpx.Client(base_url=persona.base_url, timeout=httpx.Timeout(10, read=15)) as client:
        with client.stream("GET", "/event", params={"directory": str(persona.repo)}, headers=headers) as stream:
            assert stream.status_code == 200
            buffer, started = b"", False
            for chunk in stream.iter_raw():
                buffer += chunk
                while b"\n\n" in buffer:
                    frame, _, buffer = buffer.partition(b"\n\n")
                    data = next((json.loads(line[6:]) for line in frame.decode().split("\n")
                                 if line.startswith("data: ")), None)
                    if data is None:
                        continue
                    if data["type"] == "server.connected" and not started:
                        started = True
                        worker.start()
                        continue
                    events.append(data)
                    if data["type"] == until_type or len(events) >= limit:
                        return


def test_session_routes_publish_their_events_with_the_reference_payloads(alice):
    created: dict = {}

    def action():
        session = create_session(alice, title="evented")
        created.update(session)
        alice.patch(f"/session/{session['id']}", json={"title": "renamed"})
        alice.post(f"/session/{session['id']}/share")
        alice.delete(f"/session/{session['id']}")

    events = [e for e in read_events(alice, "session.deleted", action) if e["type"].startswith("session.")]
    types = [e["type"] for e in events]
    assert types == ["session.created", "session.updated", "session.updated", "session.updated", "session.deleted"]
    sid = created["id"]
    for event in events:
        assert event["properties"]["sessionID"] == sid
        assert event["properties"]["info"]["id"] == sid
    assert events[0]["properties"]["info"] == created
    assert events[2]["properties"]["info"]["title"] == "renamed"
    assert "share" in events[3]["properties"]["info"]


def test_fork_publishes_the_copied_messages_and_parts(alice):
    session = create_session(alice)
    add_turns(session["id"], 1)

    def action():
        alice.post(f"/session/{session['id']}/fork", json={})

    events = read_events(alice, "message.part.updated", action, limit=20)
    types = [e["type"] for e in events]
    assert types[:3] == ["session.created", "session.updated", "message.updated"]
    fork_id = events[0]["properties"]["info"]["id"]
    assert events[2]["properties"] == {"sessionID": fork_id, "info": events[2]["properties"]["info"]}
    assert events[-1]["properties"]["part"]["sessionID"] == fork_id


def test_bob_does_not_receive_alices_session_events(alice, bob):
    def action():
        create_session(alice, title="alice only")
        create_session(bob, directory=bob.repo, title="bob marker")

    events = read_events(bob, "session.updated", action)
    assert [e["properties"]["info"]["title"] for e in events] == ["bob marker", "bob marker"]


def test_stored_messages_and_parts_publish_message_events(alice, fake_llm):
    from tests.fakes.fixtures import configure_fake_provider
    from tests.sessions.helpers import post_note

    configure_fake_provider(alice, fake_llm)
    session = create_session(alice)
    stored: dict = {}

    def action():
        stored.update(post_note(alice, session["id"], "hello there"))

    events = read_events(alice, "message.part.updated", action, limit=20)
    message_event = next(e for e in events if e["type"] == "message.updated")
    part_event = events[-1]
    assert message_event["properties"]["sessionID"] == session["id"]
    assert message_event["properties"]["info"]["role"] == "user"
    assert part_event["properties"]["sessionID"] == session["id"]
    assert part_event["properties"]["part"]["text"] == "hello there"
    assert part_event["properties"]["part"]["messageID"] == message_event["properties"]["info"]["id"]
    assert isinstance(part_event["properties"]["time"], int)
    assert stored["info"]["id"] == message_event["properties"]["info"]["id"]
