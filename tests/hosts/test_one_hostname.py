"""Two machines that happen to share one hostname (cloned images, containers) keep each other's terminals: each
host lists and serves the other's, and when one dies only its own terminals go."""
import time

import pytest

from tests.hosts.helpers import via
from tests.pty.conftest import shell_body
from tests.runner.conftest import wait_until

pytestmark = pytest.mark.long_running(seconds=30)  # scheduled before shorter files (tests/conftest.py)

HOSTNAMES = {"a": "agentserver", "b": "agentserver"}


def test_hosts_of_one_name_keep_each_others_terminals(alice, hosts_up):
    a, b = via(alice, "a"), via(alice, "b")
    on_a = a.post("/pty", json=shell_body()).json()
    on_b = b.post("/pty", json=shell_body()).json()
    both = {on_a["id"], on_b["id"]}
    time.sleep(12)  # past a worker's liveness TTL (10 s): a live worker of our name is not a dead one
    for host in (a, b):
        assert {p["id"] for p in host.get("/pty").json()} == both
    assert b.put(f"/pty/{on_a['id']}", json={"title": "renamed through b"}).json()["title"] == "renamed through b"
    assert a.put(f"/pty/{on_b['id']}", json={"title": "renamed through a"}).json()["title"] == "renamed through a"

    hosts_up.hosts["a"].kill()
    wait_until(lambda: [p["id"] for p in alice.get("/pty").json()] == [on_b["id"]], timeout=60, interval=0.5)
    assert alice.get(f"/pty/{on_a['id']}").status_code == 404
    assert b.delete(f"/pty/{on_b['id']}").json() is True
