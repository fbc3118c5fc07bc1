"""POST /instance/dispose: the directory's /event streams receive server.instance.disposed and close;
/global/event and streams of other directories stay open."""
import os

from tests.events.sse_client import open_stream


def test_dispose_closes_the_directorys_instance_stream_after_the_event(alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/event", params={"directory": repo}) as stream:
        stream.next()
        response = alice.post("/instance/dispose", params={"directory": repo})
        assert response.status_code == 200 and response.json() is True
        frames = stream.read_to_end()
    assert [f.data["type"] for f in frames] == ["server.instance.disposed"]
    assert frames[0].data["properties"] == {"directory": repo}


def test_dispose_leaves_global_and_other_directories_open(alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event") as global_stream, \
            open_stream(alice, "/event", params={"directory": str(alice.root)}) as other:
        global_stream.next()
        other.next()
        alice.post("/instance/dispose", params={"directory": repo})
        alice.post("/instance/dispose", params={"directory": str(alice.root)})
        first, second = global_stream.next(), global_stream.next()
        assert first.data["directory"] == repo
        assert second.data["directory"] == os.path.realpath(alice.root)
        assert [f.data["type"] for f in other.read_to_end()] == ["server.instance.disposed"]


def test_dispose_uses_the_directory_header_too(alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/event", params={"directory": repo}) as stream:
        stream.next()
        alice.post("/instance/dispose", headers={"x-opencode-directory": repo})
        assert [f.data["type"] for f in stream.read_to_end()] == ["server.instance.disposed"]
