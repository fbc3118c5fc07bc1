"""A user never sees another user's events, on any stream, live or replayed."""
import os

from tests.events.sse_client import open_stream


def test_bob_never_sees_alices_events(alice, bob):
    with open_stream(bob, "/global/event") as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": str(alice.repo)})
        alice.post("/instance/dispose", params={"directory": str(alice.root)})
        bob.post("/instance/dispose", params={"directory": str(bob.repo)})
        mine, before = stream.until(lambda d: d["payload"]["type"] == "server.instance.disposed")
    assert before == []
    assert mine.data["directory"] == os.path.realpath(bob.repo)


def test_bob_cannot_open_a_stream_on_alices_directory(alice, bob):
    with open_stream(bob, "/event", params={"directory": str(alice.repo)}) as stream:
        assert stream.status_code == 403
        assert stream.json()["name"] == "ForbiddenError"


def test_bob_cannot_replay_alices_events(alice, bob):
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        bob.post("/instance/dispose", params={"directory": str(bob.root)})  # an id bob may use
        alice.post("/instance/dispose", params={"directory": str(alice.root)})
        alices = stream.next()
    with open_stream(bob, "/global/event") as stream:
        stream.next()
        bob.post("/instance/dispose", params={"directory": str(bob.root)})
        bobs = stream.next()
    with open_stream(bob, "/global/event", headers={"Last-Event-ID": str(int(alices.id) - 1)}) as stream:
        stream.next()
        bob.post("/instance/dispose", params={"directory": str(bob.repo)})
        _, before = stream.until(lambda d: d["payload"]["properties"].get("directory") == os.path.realpath(bob.repo))
    assert [f.id for f in before] == [bobs.id]
