"""Event ids replay without gaps across workers: several processes publish at once while a reader follows
the log the way a Last-Event-ID replay does (everything after the last id it saw). An id that committed
after a higher one had been read would be skipped for good."""
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.long_running(seconds=18)  # scheduled before shorter files (tests/conftest.py)

PUBLISHERS, EACH = 4, 1500


def test_concurrent_publishers_never_commit_an_id_below_one_already_read(server, alice):
    from agentserver.models import EventLog

    command = [sys.executable, "manage.py", "publish_load", "--user", alice.user.username,
               "--count", str(EACH), "--rate", "1000000", "--type", "test.gapless"]
    publishers = [subprocess.Popen(command, cwd=ROOT, env=server.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE) for _ in range(PUBLISHERS)]
    seen: list[int] = []
    last = 0

    def follow() -> None:
        nonlocal last
        fresh = list(EventLog.objects.filter(owner_id=alice.user.pk, id__gt=last).order_by("id")
                     .values_list("id", flat=True))
        if fresh:
            seen.extend(fresh)
            last = fresh[-1]

    deadline = time.monotonic() + 180
    while any(p.poll() is None for p in publishers) and time.monotonic() < deadline:
        follow()
    for publisher in publishers:
        _, err = publisher.communicate(timeout=60)
        assert publisher.returncode == 0, err.decode()
    follow()
    logged = list(EventLog.objects.filter(owner_id=alice.user.pk, type="test.gapless").order_by("id")
                  .values_list("id", flat=True))
    assert len(logged) == PUBLISHERS * EACH
    skipped = sorted(set(logged) - set(seen))
    assert skipped == [], f"{len(skipped)} events committed below an id the reader had already passed"
