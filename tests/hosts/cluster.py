"""Two simulated hosts on one machine behind a real nginx started from deploy/ (README "Several hosts").

Each host is one `python -m server.serve --workers N` with its own data dir, its own hostname (a UTS namespace:
`unshare --uts`, the tests run as root) and its own wall clock (Debian's libfaketime, a few seconds off the
database's; the monotonic clock stays real, with the fix of monotonic_sleep.c), sharing
the test database (PostgreSQL), Redis, the keys, the shared server dir and the users' roots (temp dirs). nginx
runs deploy/nginx-agentserver.conf as it is, but for the listen port, the upstream's servers and one addition
the tests need: the header `X-Agentserver-Host: a|b` steers a request to one host (no header: the deployment's
own balancing)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.conftest import ROOT, TLS, _die_with_parent, database_url_for, free_port


def _killed_with_parent() -> None:
    """A host must not outlive a killed test run; SIGKILL, as its graceful stop could wait on open streams."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

DEPLOY_NGINX = ROOT / "deploy" / "nginx-agentserver.conf"
STEER_HEADER = "X-Agentserver-Host"


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class _DidNotStart(RuntimeError):
    pass


@dataclass
class Host:
    """One machine's workers: `python -m server.serve` under its own hostname and clock."""
    name: str
    hostname: str
    clock_offset: str                     # faketime's relative offset, e.g. "+4s"
    preload: str                          # LD_PRELOAD: monotonic_sleep.so, then libfaketime
    data_dir: Path
    env: dict
    workers: int
    log_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the host; a host that does not answer within two minutes is started once more, after its
        processes' stacks are written to its log. A worker's start is about 6 s of CPU (its imports); at a
        load of 12 on two cores the stacks showed both workers of a host still importing, or in the
        lifespan's gc.collect, after a minute. The same port both times: nginx's upstream names it, and a
        restart mid-module keeps it."""
        try:
            self._start_once()
        except _DidNotStart as first:
            try:
                self._start_once()
            except _DidNotStart as second:
                raise RuntimeError(f"host {self.name} did not start, twice:\n{first}\n{second}") from None

    def _start_once(self) -> None:
        self.starts += 1
        self.log_path = self.log_dir / f"host-{self.name}-{self.starts}.log"
        # A machine of its own: its hostname (UTS namespace) and its processes (PID namespace, with its own
        # /proc). When the namespace's first process dies, the kernel kills every other one in it.
        command = [
            "unshare", "--uts", "--pid", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--",
            "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", self.hostname,
            "env", f"FAKETIME={self.clock_offset}", f"LD_PRELOAD={self.preload}",
            sys.executable, "-m", "server.serve", "--host", "127.0.0.1", "--port", str(self.port),
            "--workers", str(self.workers), "--log-level", "info", "--access-log",
        ]
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=self.log_path.open("wb"),
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_killed_with_parent)  # noqa: PLW1509  (before any thread)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"host {self.name} exited:\n{self.log()}")
            try:
                # A first request on a loaded machine can take over a second (the URL conf's imports).
                if httpx.get(f"{self.url}/global/health", timeout=5, verify=TLS).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self._dump_stacks()
        self.kill()
        raise _DidNotStart(f"host {self.name} did not start ({self.log_path}):\n{self.log()}")

    def _dump_stacks(self) -> None:
        """Every Python thread's stack of the host's processes into its log: SIGABRT, which faulthandler
        (PYTHONFAULTHANDLER, host_env) answers with a dump before the process dies."""
        for pid in self.pids() - {self.process.pid}:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"python" not in handle.read():
                        continue
                os.kill(pid, signal.SIGABRT)
            except OSError:
                continue
        time.sleep(2)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pids(self) -> set[int]:
        if not self.alive:
            return set()
        return {self.process.pid} | descendants(self.process.pid)

    def _first_process(self) -> int:
        """The host's `server.serve` (pid 1 of its namespace), the child of `unshare`."""
        children = _children().get(self.process.pid, [])
        assert len(children) == 1, children
        return children[0]

    def kill(self) -> None:
        """The machine dies: SIGKILL to `unshare`, which kills its child (--kill-child), the first process of the
        host's PID namespace, and with it the kernel kills every process of the host (workers, terminals,
        sandboxes, tools) at once."""
        if self.process is None:
            return
        remaining = self.pids()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        deadline = time.monotonic() + 10
        while remaining and time.monotonic() < deadline:
            remaining = {pid for pid in remaining if os.path.exists(f"/proc/{pid}")}
            time.sleep(0.05)
        assert not remaining, f"host {self.name}: processes survived the kill: {remaining}"

    def stop(self, timeout: float = 90) -> int:
        """A graceful stop, as systemd's (KillMode=mixed): SIGTERM to the main process only."""
        if not self.alive:
            return self.process.returncode if self.process else 0
        os.kill(self._first_process(), signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"host {self.name} did not stop within {timeout} s:\n{self.log()[-4000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""


def faketime_preload(build_dir: Path) -> str:
    """LD_PRELOAD for a host whose wall clock is off: our clock_nanosleep fix first, then Debian's libfaketime
    (what `faketime -f OFFSET` preloads; its wrapper would put libfaketime first)."""
    found = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1")) + sorted(
        Path("/usr/lib").glob("faketime/libfaketime.so.1"))
    assert found, "libfaketime not found (Debian: apt-get install faketime)"
    library = build_dir / "monotonic_sleep.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(library), str(Path(__file__).with_name(
        "monotonic_sleep.c")), "-ldl"], check=True)
    return f"{library} {found[0]}"


def render_nginx(prefix: Path, listen: int, hosts: list[Host]) -> Path:
    """deploy/'s site config inside a minimal main config of our own (paths under `prefix`)."""
    site = DEPLOY_NGINX.read_text()
    servers = "".join(f"    server 127.0.0.1:{h.port} max_fails=1 fail_timeout=2s;\n" for h in hosts)
    site, upstreams = re.subn(r"(upstream agentserver \{\n(?:    #[^\n]*\n|    least_conn;\n)*)(?:    server [^\n]*\n)+",
                              lambda m: m.group(1) + servers, site)
    assert upstreams == 1, "deploy/nginx-agentserver.conf: the upstream block changed shape"
    site, listens = re.subn(r"^    listen 80;$", f"    listen 127.0.0.1:{listen};", site, flags=re.MULTILINE)
    assert listens == 1, "deploy/nginx-agentserver.conf: the listen line changed"
    site = site.replace("proxy_pass http://agentserver;", "proxy_pass http://$agentserver_steer;")
    steer = "".join(f"upstream host_{h.name} {{ server 127.0.0.1:{h.port}; keepalive 8; }}\n" for h in hosts)
    steer += "map $http_x_agentserver_host $agentserver_steer {\n    default agentserver;\n"
    steer += "".join(f"    {h.name} host_{h.name};\n" for h in hosts) + "}\n"
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(f"""daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 1024; }}
http {{
    log_format steer '$request_method $uri $status upstream=$upstream_addr steer=$http_x_agentserver_host';
    access_log {prefix}/access.log steer;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{steer}
{site}
}}
""")
    return conf


@dataclass
class Nginx:
    prefix: Path
    port: int
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def access_log(self) -> list[str]:
        path = self.prefix / "access.log"
        return path.read_text().splitlines() if path.exists() else []

    def stop(self) -> None:
        if self.process.poll() is None:
            for master in _children().get(self.process.pid, []):  # nginx's master, the child of `unshare`
                os.kill(master, signal.SIGQUIT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start_nginx(prefix: Path, hosts: list[Host]) -> Nginx:
    port = free_port()
    conf = render_nginx(prefix, port, hosts)
    base = [shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(conf)]
    checked = subprocess.run([*base, "-t"], check=False, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    # nginx's worker outlives a master killed with SIGKILL: both run in a PID namespace of their own, whose
    # first process (killed with `unshare`, killed with the test run) takes every other one with it.
    process = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child=SIGKILL", "--", *base],
                               stdout=subprocess.DEVNULL, stderr=(prefix / "stderr.log").open("wb"),
                               start_new_session=True, preexec_fn=_die_with_parent)  # noqa: PLW1509  (before any thread)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((prefix / "error.log").read_text())
        try:
            httpx.get(f"http://127.0.0.1:{port}/global/health", timeout=1, verify=TLS)
            return Nginx(prefix=prefix, port=port, process=process)
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("nginx did not start")


@dataclass
class Cluster:
    hosts: dict[str, Host]
    nginx: Nginx

    @property
    def url(self) -> str:
        return self.nginx.url

    def ensure_up(self) -> None:
        for host in self.hosts.values():
            if not host.alive:
                host.start()

    def stop(self) -> None:
        self.nginx.stop()
        for host in self.hosts.values():
            host.kill()  # the end of the module: no need to be gentle, and nothing may outlive it


def stop_all(cluster: Cluster | None, hosts: dict[str, Host]) -> None:
    """Whatever was started, the cluster or (if nginx never came up) the hosts alone."""
    if cluster is not None:
        cluster.stop()
        return
    for host in hosts.values():
        if host.alive:
            host.kill()


def host_env(*, name: str, data_dir: Path, shared_dir: Path, keys: dict) -> dict:
    from django.db import connection

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(keys)
    env.update(
        DJANGO_SETTINGS_MODULE="server.settings",
        DATABASE_URL=database_url_for(connection.settings_dict),
        REDIS_URL=os.environ["REDIS_URL"],
        AGENTSERVER_DATA_DIR=str(data_dir),
        AGENTSERVER_SHARED_DIR=str(shared_dir),
        AGENTSERVER_DB_POOL="4",
        AGENTSERVER_SSE_HEARTBEAT_SECONDS="2",
        AGENTSERVER_GRACE_SECONDS="30",
        AGENTSERVER_TRUSTED_PROXIES="127.0.0.1",  # nginx, on this machine's loopback
        # Only the host's wall clock is off; its monotonic clock is the machine's (monotonic_sleep.c).
        FAKETIME_DONT_FAKE_MONOTONIC="1",
        PYTHONUNBUFFERED="1",
        PYTHONFAULTHANDLER="1",  # a host that does not start has its stacks dumped (Host._dump_stacks)
        AGENTSERVER_SANDBOX_EXPOSE=",".join([sys.prefix, os.path.realpath(sys.base_prefix),
                                             str(ROOT / "tests" / "fakes")]),
    )
    return env
