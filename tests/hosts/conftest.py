"""The two-host tests run only in the scaled mode (PostgreSQL + Redis, CI's second pass): on the embedded
default there is no second host to have, so these modules are not collected at all (rather than collected and
skipped: a skip in the embedded pass would read as a test that did not run where it should)."""
import os
import shutil

import pytest

from tests.conftest import SCALED, make_persona
from tests.hosts.cluster import (
    Cluster,
    Host,
    faketime_preload,
    host_env,
    start_nginx,
    stop_all,
)

if not SCALED:
    collect_ignore_glob = ["test_*.py"]

# Host a's clock runs behind the database's, host b's ahead: 8 s apart, near the 10 s lease. (To tell a
# failure of clocks from another: AGENTSERVER_TEST_HOST_CLOCKS="a=+0s,b=+0s".)
CLOCKS = dict(item.split("=", 1) for item in os.environ.get("AGENTSERVER_TEST_HOST_CLOCKS", "a=-4s,b=+4s").split(","))
WORKERS_PER_HOST = int(os.environ.get("AGENTSERVER_TEST_HOST_WORKERS", "2"))


def _require(program: str) -> None:
    if shutil.which(program) is None and not os.path.exists(f"/usr/sbin/{program}"):
        pytest.fail(f"the two-host tests need {program} (Debian: apt-get install nginx-light faketime gcc; "
                    "scripts/test.sh installs them when run as root)")


@pytest.fixture(scope="module")
def cluster(request, django_db_setup, django_db_blocker, tmp_path_factory):
    """The two hosts and nginx, for a module (a module may name the hosts: HOSTNAMES = {"a": ..., "b": ...})."""
    for program in ("nginx", "faketime", "unshare", "cc"):
        _require(program)
    from cryptography.fernet import Fernet
    from django.conf import settings

    # Keys come from the environment, the same on every host (deploy/agentserver.env.example).
    keys = {"SECRET_KEY": settings.SECRET_KEY, "AGENTSERVER_FERNET_KEYS": Fernet.generate_key().decode()}
    shared = tmp_path_factory.mktemp("shared-server-dir")
    logs = tmp_path_factory.mktemp("host-logs")
    preload = faketime_preload(tmp_path_factory.mktemp("faketime"))
    hosts = {}
    with django_db_blocker.unblock():
        for name, offset in CLOCKS.items():
            data_dir = tmp_path_factory.mktemp(f"host-{name}-data")
            hostname = getattr(request.module, "HOSTNAMES", {}).get(name, f"host-{name}")
            hosts[name] = Host(name=name, hostname=hostname, clock_offset=offset, preload=preload,
                               data_dir=data_dir, env=host_env(name=name, data_dir=data_dir, shared_dir=shared, keys=keys),
                               workers=WORKERS_PER_HOST, log_dir=logs)
    cluster = None
    try:
        for host in hosts.values():
            host.start()
        cluster = Cluster(hosts=hosts, nginx=start_nginx(tmp_path_factory.mktemp("nginx"), list(hosts.values())))
        yield cluster
    finally:
        stop_all(cluster, hosts)


@pytest.fixture
def hosts_up(cluster, request):
    """Every host running at the start of a test (a test may have killed or stopped one); their logs on failure."""
    cluster.ensure_up()
    marks = {name: len(host.log()) for name, host in cluster.hosts.items()}
    yield cluster
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for name, host in cluster.hosts.items():
            print(f"---- host {name} log ----\n" + host.log()[marks[name]:][-6000:])


@pytest.fixture
def alice(hosts_up, transactional_db, tmp_path):
    """alice, talking to the load balancer; her root is on the shared roots volume (tmp_path)."""
    persona = make_persona("alice", hosts_up.url, tmp_path / "alice")
    yield persona
    persona.client.close()


@pytest.fixture
def bob(hosts_up, transactional_db, tmp_path):
    persona = make_persona("bob", hosts_up.url, tmp_path / "bob")
    yield persona
    persona.client.close()


def pytest_itemcollected(item):
    """A test's 120 s are its own: the module's first test also starts the cluster (two hosts of two workers
    and nginx), which on a loaded machine took most of them in CI (a host that does not answer in a minute is
    started again). Each start has its own deadline (Host.start, start_nginx)."""
    declared = item.get_closest_marker("timeout")
    seconds = declared.args[0] if declared is not None and declared.args else 120
    item.add_marker(pytest.mark.timeout(seconds, func_only=True), append=False)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
