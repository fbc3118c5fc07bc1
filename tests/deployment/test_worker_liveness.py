"""Worker liveness (agentserver/workers/liveness.py): a worker killed with -9 takes its terminals with it — they leave
every list, stop counting toward their owner's limit and are announced as deleted — while a live worker's
terminals stay, even when its host has the same name as ours and its pid means nothing here."""
import os
import signal

import pytest

from tests.events.sse_client import open_stream
from tests.pty.conftest import shell_body, wait_for
from tests.runner.test_restart_and_retry import Remote

FAST_LIVENESS = {"AGENTSERVER_WORKER_TTL_SECONDS": "2", "AGENTSERVER_PTY_MAX_PER_USER": "1"}


pytestmark = pytest.mark.scaled


def test_a_killed_workers_terminals_are_removed_and_announced(alice, server_factory):
    first = Remote(alice, server_factory(FAST_LIVENESS).url)
    doomed_worker = server_factory(FAST_LIVENESS)
    doomed = Remote(alice, doomed_worker.url)
    pty = doomed.post("/pty", json=shell_body()).json()
    assert [p["id"] for p in first.get("/pty").json()] == [pty["id"]]
    refused = first.post("/pty", json=shell_body())
    assert refused.status_code == 429  # the terminal on the other worker counts toward alice's limit

    with open_stream(alice, "/global/event", base_url=first.base_url) as stream:
        stream.next()  # server.connected
        doomed_worker.stop(signal.SIGKILL)
        try:
            deleted = None
            while deleted is None:
                frame = stream.next()
                assert frame is not None, "the stream ended before pty.deleted"
                if frame.data["payload"]["type"] == "pty.deleted":
                    deleted = frame.data["payload"]["properties"]
        finally:
            os.killpg(pty["pid"], signal.SIGKILL) if _alive(pty["pid"]) else None
    assert deleted == {"id": pty["id"]}
    assert first.get("/pty").json() == []
    assert first.get(f"/pty/{pty['id']}").status_code == 404
    replacement = first.post("/pty", json=shell_body())
    assert replacement.status_code == 200, replacement.text
    assert first.client.delete(f"/pty/{replacement.json()['id']}").json() is True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_live_worker_on_a_host_with_our_name_keeps_its_terminals(alice, server):
    """Its pid does not exist here; only its heartbeat says whether it lives."""
    import redis

    from agentserver.models import EventLog
    from agentserver.workers import liveness as workers
    from pty_app.models import Pty

    twin = f"{workers.HOST}:999999:0badcafe"
    beat = redis.Redis.from_url(os.environ["REDIS_URL"])
    beat.set(workers._key(twin), "1", ex=60)
    Pty.objects.create(id="pty_0000000000000TwinHostTerminal", owner=alice.user, directory=str(alice.repo),
                       title="twin", command="/bin/sh", cwd=str(alice.repo), worker_id=twin,
                       worker_host=workers.HOST, worker_pid=999999, worker_channel="")
    try:
        listed = alice.get("/pty", params={"directory": str(alice.repo)}).json()
        assert [p["id"] for p in listed] == ["pty_0000000000000TwinHostTerminal"]
        assert Pty.objects.filter(worker_id=twin).exists()
    finally:
        beat.delete(workers._key(twin))  # now it is dead
    assert wait_for(lambda: alice.get("/pty", params={"directory": str(alice.repo)}).json() == [])
    assert not Pty.objects.filter(worker_id=twin).exists()
    assert wait_for(lambda: EventLog.objects.filter(owner_id=alice.user.pk, type="pty.deleted").exists())
    [announced] = EventLog.objects.filter(owner_id=alice.user.pk, type="pty.deleted")
    assert announced.properties == {"id": "pty_0000000000000TwinHostTerminal"}


class CuttableProxy:
    """A TCP forwarder to Redis that the test can cut, as a network partition would: a worker behind it loses
    Redis while its process, its terminals and its database stay."""

    def __init__(self, target: tuple[str, int]):
        import socket
        import threading

        self.target, self.connections, self.cut_off = target, [], False
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while not self.cut_off:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.connections += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        import socket

        self.cut_off = True
        self.listener.close()
        for connection in self.connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()


def test_a_worker_cut_off_from_redis_ends_its_terminals_once_the_others_take_it_for_dead(alice, server_factory):
    from urllib.parse import urlparse

    redis_url = urlparse(os.environ["REDIS_URL"])
    proxy = CuttableProxy((redis_url.hostname, redis_url.port or 6379))
    through_proxy = f"redis://127.0.0.1:{proxy.port}{redis_url.path}"
    cut_off_worker = server_factory({**FAST_LIVENESS, "REDIS_URL": through_proxy})
    cut_off = Remote(alice, cut_off_worker.url)
    pty = cut_off.post("/pty", json=shell_body()).json()
    assert _alive(pty["pid"])
    try:
        proxy.cut()
        # Its key expires within the 2 s TTL; its next failed beat after that ends the terminal, whose exit
        # the worker still records (the database is reachable): gone from every list.
        assert wait_for(lambda: not _alive(pty["pid"]), timeout=20)
        assert wait_for(lambda: alice.get("/pty", params={"directory": str(alice.repo)}).json() == [], timeout=20)
        assert cut_off_worker.process.poll() is None  # the worker itself lives on
    finally:
        if _alive(pty["pid"]):
            os.killpg(pty["pid"], signal.SIGKILL)
