"""Fixtures: a real server (server.serve) in a subprocess sharing the test database, and the personas
alice (owner), bob (another user) and charlie (no roots), each with an API token and an HTTP client.

Tests that use `server` must also use the database transactionally (the personas do), because the
server is another process: rows must be committed for it to see them."""
import base64
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests import answer_audit

pytest_plugins = ["tests.fakes.fixtures"]

# CI runs the suite twice: the embedded default (SQLite, in-memory layer) and the scaled deployment
# (PostgreSQL + Redis). A test of one deployment only is marked `scaled` or `embedded` and is not collected in
# the other pass (deselected, never skipped: a skip would read as a test that did not run where it should).
SCALED = bool(os.environ.get("REDIS_URL")) and os.environ.get("DATABASE_URL", "").startswith("postgres")


def pytest_configure(config):
    config.addinivalue_line("markers", "scaled: needs PostgreSQL + Redis (runs in the scaled pass only)")
    config.addinivalue_line("markers", "embedded: needs SQLite (runs in the embedded pass only)")
    config.addinivalue_line("markers", "long_running(seconds): a file that takes about this long; the longest "
                                       "files are handed to the test processes first")
    from django.test import TransactionTestCase

    TransactionTestCase._fixture_teardown = _empty_the_tables


_tables_to_empty: dict[str, list[str]] = {}


def _empty_the_tables(test_case) -> None:
    """After a transactional test (every test with a live server), DELETE every row instead of Django's flush.
    The flush TRUNCATEs every table and re-creates the content types and permissions: about 1 s per test on
    PostgreSQL (new files for each table, then a hundred inserts), a third of the scaled pass; these DELETEs
    take about 10 ms. The foreign keys are deferred, so one transaction deletes in any order."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType
    from django.db import IntegrityError, connections, transaction

    # What a flush gives back at once (post_migrate re-creates it) stays: the installed models' content types
    # and permissions.
    kept = {ContentType._meta.db_table, Permission._meta.db_table}
    for alias in test_case._databases_names(include_mirrors=False):
        connection = connections[alias]
        if alias not in _tables_to_empty:
            _tables_to_empty[alias] = [
                table for table in connection.introspection.django_table_names(only_existing=True,
                                                                                include_views=False)
                if table not in kept]
        # A live server still ending a turn may commit a row (a usage record) after its table was emptied and
        # before the deferred keys are checked at COMMIT, which then fails on the user it names: empty again.
        for attempt in range(5):
            try:
                with transaction.atomic(using=alias), connection.cursor() as cursor:
                    if connection.vendor == "postgresql":  # the audit trigger lets retention's DELETE alone through
                        cursor.execute("SELECT set_config('agentserver.audit_retention', 'on', true)")
                    for table in _tables_to_empty[alias]:
                        cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")
                break
            except IntegrityError:
                if attempt == 4:
                    raise


@pytest.hookimpl(trylast=True)  # after pytest-django's own order (by kind of database use), which it keeps
def pytest_collection_modifyitems(config, items):
    other = "embedded" if SCALED else "scaled"
    elsewhere = [item for item in items if item.get_closest_marker(other)]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items if not item.get_closest_marker(other)]
    # xdist's --dist loadfile hands out files in this order, each to the next free process: the longest first,
    # so that no process starts a long file while the others run out of work (the schemathesis file, 100 s,
    # once came last and ran alone for its whole budget). Then by where each file first came, its tests
    # together, in the order they had.
    first = {}
    for index, item in enumerate(items):
        first.setdefault(item.path, index)
    items.sort(key=lambda item: (-_expected_seconds(item), first[item.path]))


def _expected_seconds(item) -> float:
    marker = item.get_closest_marker("long_running")
    return marker.kwargs["seconds"] if marker else 0


def pytest_report_header(config):
    return (f"deployment: {'scaled (PostgreSQL + Redis)' if SCALED else 'embedded (SQLite)'}; "
            f"tests marked {'embedded' if SCALED else 'scaled'} run in the other pass")

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1
# The TLS context of the tests' own HTTP clients (verify=TLS), made once: httpx builds one for every client by
# loading the CA bundle, 61 ms of CPU, and the fixtures make two to four clients a test (and one per poll of a
# starting server). Sharing one is safe, as providers_app/tls.py does for the server's clients.
TLS = httpx.create_ssl_context()


def _die_with_parent() -> None:
    """A server subprocess must not outlive a killed test run (it would hold the test database). SIGKILL, not
    SIGTERM: with its run gone there is nobody to hand its turns to, and a graceful stop that waited for one
    kept servers of a killed run alive for half an hour; its sandboxes die with it (bubblewrap
    --die-with-parent)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # A run started under nohup hands its children SIGHUP ignored, and a worker keeps an ignored SIGHUP (the
    # operator's choice): a test server starts with it at its default, as a worker under a terminal or
    # systemd does, so the tests of what SIGHUP does see it arrive.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def wait_ended(pids, timeout: float) -> set[int]:
    """Wait until these processes have ended (exited or killed; a zombie has ended), woken by the kernel
    through a pidfd rather than polling /proc; returns those still running after `timeout`."""
    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            pass
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    running = set(fds)
    try:
        while running and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                running.discard(fd)
    finally:
        for fd in fds:
            os.close(fd)
    return {fds[fd] for fd in running}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url_for(settings_dict: dict) -> str:
    engine = settings_dict["ENGINE"]
    if engine == "agentserver.db.sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    user = settings_dict.get("USER") or ""
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen
    env: dict
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int | None = None) -> None:
        if self.process.poll() is None:
            if sig is None:
                self.process.terminate()
            else:
                self.process.send_signal(sig)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start_server(env_overrides: dict | None = None, *, log_dir: Path) -> LiveServer:
    from django.conf import settings
    from django.db import connection

    port = free_port()
    # DJANGO_ALLOW_ASYNC_UNSAFE: set while a browser test runs (tests/web/conftest.py), never for a server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.server_settings",  # the real settings, the tests' quick password hashing
        DATABASE_URL=database_url_for(connection.settings_dict),
        AGENTSERVER_DATA_DIR=str(settings.DATA_DIR),
        AGENTSERVER_SSE_HEARTBEAT_SECONDS=os.environ.get("AGENTSERVER_SSE_HEARTBEAT_SECONDS", "10"),
        # tui.control.next holds an empty queue's request this long before its 204 (25 s by default): the
        # battery's list check and the fuzzer call it with nothing queued, and waited 25 s a call.
        AGENTSERVER_TUI_CONTROL_WAIT_SECONDS=os.environ.get("AGENTSERVER_TUI_CONTROL_WAIT_SECONDS", "2"),
        PYTHONUNBUFFERED="1",
        AGENTSERVER_DB_POOL="8",  # many test workers share PostgreSQL's 100 connections
        # The interpreter (venv + base install) and tests/fakes, read-only in users' sandboxes: tests start
        # `sys.executable tests/fakes/...` as users' programs (MCP servers, PTY commands).
        AGENTSERVER_SANDBOX_EXPOSE=",".join([sys.prefix, os.path.realpath(sys.base_prefix),
                                             str(ROOT / "tests" / "fakes")]),
    )
    env.update(env_overrides or {})
    log_path = log_dir / f"server-{port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "server.serve", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "info", "--access-log"],
        cwd=ROOT, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_die_with_parent,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # a loaded CI machine (two suites at once) starts slowly
    with httpx.Client(timeout=1, verify=TLS) as poll:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server exited:\n{log_path.read_text()}")
            try:
                if poll.get(f"{url}/global/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            process.kill()
            raise RuntimeError(f"server did not start:\n{log_path.read_text()}")
    return LiveServer(url=url, process=process, env=env, log_path=log_path)


# The extra workers server_factory started and that still run, oldest first.
_extra_workers: list[LiveServer] = []


@pytest.fixture(scope="session")
def server_factory(django_db_setup, tmp_path_factory):
    """Start extra workers (e.g. with REDIS_URL) on the same test database."""
    started = _extra_workers
    log_dir = tmp_path_factory.mktemp("server-logs")

    def factory(env: dict | None = None) -> LiveServer:
        live = start_server(env, log_dir=log_dir)
        started.append(live)
        return live

    factory.started = started
    yield factory
    for live in started:
        live.stop()


@pytest.fixture(scope="session")
def server(django_db_setup, tmp_path_factory) -> LiveServer:
    """The shared worker of the whole run (extra workers come from server_factory)."""
    live = start_server(None, log_dir=tmp_path_factory.mktemp("server-log"))
    yield live
    live.stop()


@pytest.fixture(scope="module", autouse=True)
def _stop_servers_the_module_started():
    """Extra workers a module's fixtures start end with the module. Left running, they share the test database
    with the later modules' workers and adopt the sessions a later test's killed worker leaves (a session cap
    one module set ended another module's adopted turn)."""
    before = len(_extra_workers)
    yield
    for live in _extra_workers[before:]:
        live.stop()
    del _extra_workers[before:]


@pytest.fixture(autouse=True)
def _stop_servers_the_test_started(request):
    """Extra workers a test starts end with it: each holds database connections, and PostgreSQL has 100."""
    if "server_factory" not in request.fixturenames:
        yield
        return
    started = request.getfixturevalue("server_factory").started
    before = len(started)
    yield
    for live in started[before:]:
        live.stop()
    del started[before:]


@pytest.fixture(scope="session", autouse=True)
def _close_asgiref_thread_db_connections(django_db_setup, django_db_blocker):
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result()
    connection = connections["default"]
    if connection.vendor == "postgresql":
        django_db_blocker.unblock()
        # Threads of this process (tool waits, sync_to_async) keep their own connections; end them so the
        # test database can be dropped.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t"},
    ).stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, content in (files or {"README.md": "hello\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


_persona_repo_template: Path | None = None


def _persona_repo(path: Path) -> None:
    """A persona's repo: a copy of one made once per test process (README.md, one commit). Making it took three
    git processes per persona, two personas a test (0.28 s each on a loaded machine, the copy 0.06 s). git
    re-reads the copied files whose stat data its index no longer matches, so it sees them as they are."""
    global _persona_repo_template
    if _persona_repo_template is None:
        import tempfile

        _persona_repo_template = make_repo(Path(tempfile.mkdtemp(prefix="persona-repo-")) / "repo")
    shutil.copytree(_persona_repo_template, path, symlinks=True)


@dataclass
class Persona:
    user: object
    token: str
    root: Path | None
    base_url: str
    client: httpx.Client = field(repr=False)

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def basic_auth_token(self) -> str:
        return base64.b64encode(f"{self.user.username}:{self.token}".encode()).decode()

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def post(self, url, **kw):
        return self.client.post(url, **kw)

    def patch(self, url, **kw):
        return self.client.patch(url, **kw)

    def put(self, url, **kw):
        return self.client.put(url, **kw)

    def delete(self, url, **kw):
        return self.client.delete(url, **kw)


def make_persona(name: str, base_url: str, root: Path | None, *, staff: bool = False) -> Persona:
    from django.contrib.auth import get_user_model

    from auth_app.tokens import roots_add, token_create

    user = get_user_model().objects.create_user(username=name, password=f"{name}-password", is_staff=staff,
                                                is_superuser=staff)
    if root is not None:
        _persona_repo(root / "repo")
        roots_add(user=user, path=str(root))
    _, token = token_create(user=user)
    client = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30, verify=TLS,
                          event_hooks={"response": [answer_audit.checker(base_url, token)]})
    return Persona(user=user, token=token, root=root.resolve() if root else None, base_url=base_url, client=client)


@pytest.fixture
def alice(server, transactional_db, tmp_path) -> Persona:
    persona = make_persona("alice", server.url, tmp_path / "alice")
    yield persona
    persona.client.close()


@pytest.fixture
def bob(server, transactional_db, tmp_path) -> Persona:
    persona = make_persona("bob", server.url, tmp_path / "bob")
    yield persona
    persona.client.close()


@pytest.fixture
def charlie(server, transactional_db) -> Persona:
    persona = make_persona("charlie", server.url, None)
    yield persona
    persona.client.close()


@pytest.fixture
def anon(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=30, verify=TLS) as client:
        yield client
