"""The one launcher of every process the server starts on behalf of a user: PTYs, the bash tool,
session.shell, command-template shell expansions, local MCP servers, formatters, language servers, and every
git or other external program run in a user's directory. A repository is hostile input (its git config and
attributes name programs), so even a read-only `git status` goes through here.

Callers describe what to run; this module decides how it is confined. `prepare` gives the wrapped argv and
environment for callers that own their spawning primitive (ptyprocess, the MCP stdio client); `run`, `popen`
and `start` cover subprocess.run, subprocess.Popen and asyncio subprocesses.

The default confinement is bubblewrap: the system read-only, the user's roots read-write at their real paths,
a per-user HOME under the data dir, a private /tmp, minimal /proc and /dev, nothing else (no data dir, no other
user's roots, no server code or virtualenv, no /root); a new PID namespace, no capabilities, resource limits;
a network without the host's loopback; and, when the server runs as root, a uid of the user's own (setpriv).
`AGENTSERVER_SANDBOX=off` runs processes unconfined as before.

The environment always comes from `agentserver.sandbox.childenv` (an allowlist, never the server's own)."""
from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence

from django.conf import settings

from agentserver import paths
from agentserver.errors import ApiError
from agentserver.paths import is_within
from agentserver.sandbox import host as sandbox_host
from agentserver.sandbox import process as sandbox_process
from agentserver.sandbox import resident as sandbox_resident
from agentserver.sandbox.childenv import safe_environment
from agentserver.sandbox.launch import Launch
from agentserver.workers.loop import free_db, let_others_run

log = logging.getLogger("agentserver.sandbox.launcher")

# The parts of /etc programs need (libraries, DNS, TLS, locales, shells), copied once into the /etc every
# sandbox shows; passwd, group, nsswitch.conf, hosts and resolv.conf are generated per user and mounted over it.
ETC_FILES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "host.conf",
             "gai.conf", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "localtime", "timezone",
             "locale.alias", "locale.conf", "default/locale", "mime.types", "protocols", "services", "shells",
             "profile", "profile.d", "bash.bashrc", "bash_completion", "bash_completion.d", "inputrc", "terminfo",
             "environment", "os-release", "debian_version", "gitconfig", "magic", "magic.mime", "vim", "nanorc",
             "npmrc", "pip.conf", "xdg")
SYSTEM_TREES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxUnavailable(ApiError):
    """The sandbox cannot start a process here (for instance bubblewrap is missing): a 503 in the error shape
    from any route; git helpers treat it as "no git here"."""
    status = 503
    name = "SandboxUnavailableError"


# -- on whose behalf ----------------------------------------------------------------------------------------------
# Modules whose small git helpers take only a directory (vcs.*, workspaces, file listing) learn the user from
# their public function's `user=`/`context=` keyword instead of threading it through every helper.
_acting: contextvars.ContextVar = contextvars.ContextVar("sandbox_acting_user", default=None)


def acting_user():
    """The user named by the nearest enclosing @on_behalf function (None outside one: launching then fails)."""
    return _acting.get()


def on_behalf(function):
    """Decorator: programs started (via acting_user()) while `function` runs are run for its `user=` keyword,
    or its `context=` keyword's user."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        user = kwargs.get("user")
        if user is None and kwargs.get("context") is not None:
            user = getattr(kwargs["context"], "user", None)
        if user is None:
            return function(*args, **kwargs)
        token = _acting.set(user)
        try:
            return function(*args, **kwargs)
        finally:
            _acting.reset(token)
    return wrapper


def acting_as(user):
    """Context manager form of on_behalf for a block."""
    import contextlib

    @contextlib.contextmanager
    def scope():
        token = _acting.set(user)
        try:
            yield
        finally:
            _acting.reset(token)
    return scope()


# -- mode and availability --------------------------------------------------------------------------------------
def mode() -> str:
    """'off' only when asked for explicitly; anything else means the bubblewrap sandbox."""
    return "off" if settings.SANDBOX_MODE in ("off", "0", "false", "no", "none") else "bwrap"


def network() -> str:
    """The network the sandbox actually gets: `outbound` needs root (a namespace per user with slirp4netns);
    without it the safe fallback is `none`."""
    wanted = settings.SANDBOX_NETWORK
    if wanted not in ("outbound", "none", "host"):
        wanted = "outbound"
    if wanted == "outbound" and not (sandbox_host.is_root() and sandbox_host.which("slirp4netns")
                                     and sandbox_host.which("nsenter") and sandbox_host.which("unshare")):
        return "none"
    return wanted


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """None when the sandbox works here; else why not (checked once per process by running one)."""
    if mode() == "off":
        return None
    bwrap = sandbox_host.which(settings.SANDBOX_BWRAP)
    if not bwrap:
        return (f"bubblewrap ({settings.SANDBOX_BWRAP}) is not installed: install the `bubblewrap` package, "
                "or set AGENTSERVER_SANDBOX=off to run users' processes unconfined (unsafe)")
    missing = [tool for tool in _helpers() if not sandbox_host.which(tool)]
    if missing:
        return f"{', '.join(missing)} not found (package util-linux)"
    probe = [*_static_argv(bwrap, new_session=True), "--", "/bin/true"]
    try:
        result = subprocess.run(probe, check=False, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap could not run: {error}"
    if result.returncode:
        detail = result.stderr.decode(errors="replace").strip()
        return (f"bubblewrap cannot create a sandbox here ({detail}); user namespaces may be disabled "
                "(sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces)")
    return None


def require() -> None:
    """Raise SandboxUnavailable now (before a feature records anything) when processes cannot be started."""
    reason = unavailable_reason()
    if reason:
        raise SandboxUnavailable(f"Sandbox unavailable: {reason}")


def _helpers() -> list[str]:
    return ["setpriv", "prlimit", "setsid"] if sandbox_host.is_root() else ["prlimit"]


def describe() -> dict:
    """What GET /global/health reports."""
    if mode() == "off":
        return {"mode": "off"}
    reason = unavailable_reason()
    if reason:
        return {"mode": "unavailable", "reason": reason}
    return {"mode": "bwrap", "network": network(), "identity": "uid" if sandbox_host.is_root() else "shared"}


def check_at_startup() -> None:
    if mode() == "off":
        log.warning("SANDBOX OFF (AGENTSERVER_SANDBOX=off): every user's shells, tools, MCP servers and git run "
                    "unconfined as this server's own user and can read every other user's files and the data dir")
        return
    reason = unavailable_reason()
    if reason:
        log.error("sandbox unavailable, process features (PTY, shell, bash tool, git, MCP) are refused: %s",
                  reason)
    else:
        log.info("sandbox: bubblewrap, network %s", network())


# -- the command line --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _static_argv(bwrap: str, *, new_session: bool) -> tuple[str, ...]:
    """The part of the bwrap command line that is the same for every process (computed once)."""
    argv = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent"]
    if not sandbox_host.is_root():
        argv.append("--unshare-user")
    if new_session:
        argv.append("--new-session")
    argv += ["--perms", "0755", "--dir", "/usr", "--ro-bind", "/usr", "/usr"]
    for tree in SYSTEM_TREES:
        if os.path.islink(tree):
            argv += ["--symlink", os.readlink(tree), tree]
        elif os.path.isdir(tree):
            argv += ["--ro-bind", tree, tree]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
             "--perms", "0755", "--dir", "/var", "--perms", "1777", "--dir", "/var/tmp",
             "--perms", "0755", "--dir", "/run"]
    return tuple(argv)


def _limits(root: bool) -> list[str]:
    limits = settings.SANDBOX_LIMITS
    argv = [sandbox_host.tool("prlimit")]
    if limits["cpu_seconds"]:
        argv.append(f"--cpu={limits['cpu_seconds']}")
    if limits["memory_mb"]:
        argv.append(f"--as={limits['memory_mb'] * 1024 * 1024}")
    if limits["file_mb"]:
        argv.append(f"--fsize={limits['file_mb'] * 1024 * 1024}")
    if limits["open_files"]:
        argv.append(f"--nofile={limits['open_files']}")
    if root and limits["processes"]:
        # RLIMIT_NPROC counts every process of the real uid: only meaningful when the user has a uid of their own.
        argv.append(f"--nproc={limits['processes']}")
    return [*argv, "--"] if len(argv) > 1 else []


def _ancestors(path: str) -> list[str]:
    parts, current = [], os.path.dirname(path)
    while current and current != os.sep:
        parts.append(current)
        current = os.path.dirname(current)
    return parts[::-1]


def _expose(path: str, mount, wrapped: list[str], created: set[str], depth: int = 0) -> None:
    """Read-only at its real path; a symlink on the way (a virtualenv's `.venv` link) is recreated as a
    symlink and its target exposed in turn, so the path works as written."""
    path = os.path.abspath(path)
    if not os.path.lexists(path) or depth > 8:
        return
    for prefix in [*_ancestors(path), path]:
        if os.path.islink(prefix):
            for parent in _ancestors(prefix):
                if parent not in created:
                    created.add(parent)
                    wrapped.extend(["--perms", "0755", "--dir", parent])
            if prefix not in created:
                created.add(prefix)
                wrapped.extend(["--symlink", os.readlink(prefix), prefix])
            target = os.path.realpath(prefix)
            rest = os.path.relpath(path, prefix)
            _expose(target if rest == "." else os.path.join(target, rest), mount, wrapped, created, depth + 1)
            return
    mount("--ro-bind", path)


def _hidden() -> list[str]:
    """What must stay invisible even when a root contains it (a staff root of `/` or of a parent directory):
    the server's own directories (agentserver.paths.server_dirs, the list confinement refuses too) and /root."""
    return [*paths.server_dirs(), "/root"]


def _mountable(roots: list[str], cwd: str, hidden: list[str]) -> list[str]:
    """A root that is `/` or a system directory (a staff user's) is never mounted whole: it would bring the
    host's /proc, /dev and everything else back. Such a user's sandbox gets the working directory instead."""
    mountable = [root for root in roots if root not in sandbox_host.SYSTEM_DIRECTORIES]
    broad = [root for root in roots if root in sandbox_host.SYSTEM_DIRECTORIES]
    if (broad and any(is_within(cwd, base) for base in broad) and not any(is_within(cwd, r) for r in mountable)
            and cwd not in sandbox_host.SYSTEM_DIRECTORIES and not any(is_within(cwd, h) for h in hidden)):
        mountable.append(cwd)
    return mountable


# A user's roots are auth_app's to know; it hands its reader in at start-up (AuthAppConfig.ready).
_read_roots: Callable[[object], list[str]] | None = None


def read_roots_with(reader: Callable[[object], list[str]]) -> None:
    """`reader(user)` → the user's roots, default first."""
    global _read_roots
    _read_roots = reader


def _roots_of(user) -> list[str]:
    if user is None:
        return []
    if _read_roots is None:
        raise RuntimeError("the sandbox has no reader of users' roots: is auth_app installed?")
    return _read_roots(user)


def prepare(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
            expose: Sequence[str] = (), writable: Sequence[str] = (), roots: Sequence[str] | None = None,
            terminal: bool = False, offline: bool = False) -> Launch:
    """What to exec for `argv` run by `user` in `cwd`; `env` adds variables to the safe environment;
    `expose` names extra files or directories (a language server's install, the ripgrep binary) that the
    process may read and execute at their real paths; `writable` extra directories it may write (the user's
    own server-side state, e.g. their snapshot store). `roots` saves a database query when the caller has them
    (required from async code). `terminal=True`: stdin is a terminal (a PTY) that must become the program's
    controlling terminal inside the sandbox, for job control, Ctrl-C and exit statuses."""
    if roots is None:
        roots = _roots_of(user)
    roots = [os.path.realpath(root) for root in roots]
    if mode() == "off" or user is None:
        if user is None and mode() != "off":
            # A programming error, not an unavailable sandbox: callers treat SandboxUnavailable as "no git
            # here" and would silently answer without it. Name the user, or decorate with @on_behalf.
            raise RuntimeError("a sandboxed process needs the user it runs for (see sandbox.on_behalf)")
        environment = safe_environment(home=roots[0] if roots else cwd)
        environment.update(env or {})
        return Launch(argv=list(argv), env=environment, cwd=cwd)
    require()
    root = sandbox_host.is_root()
    identity = sandbox_host.identity_of(user)
    # offline: the server's own programs on a user's files (git, ripgrep, formatters) need no network, and
    # then do not depend on the user's outbound namespace being up.
    net = "none" if offline else network()
    real_cwd = os.path.realpath(cwd)
    hidden = _hidden()
    # A root inside the server's own directories is no root (agentserver.paths.usable_base): never mounted.
    roots = _mountable([root for root in roots if paths.usable_base(root)], real_cwd, hidden)
    # resolv.conf names the configured network's DNS: a sandbox without a network ignores it, and one /etc
    # per user serves both kinds of launch.
    etc = sandbox_host.prepare_identity(identity, network(), ETC_FILES)
    own = sandbox_host.server_dirs(user)
    sandbox_host.grant_roots(identity, [*roots, *own])
    writable = [*own, *map(os.path.realpath, writable)]
    # In a root, but not in a server directory inside it (agentserver.paths: the same rule as every route).
    if not (paths.within_any(real_cwd, roots)
            or any(is_within(real_cwd, base) for base in [identity.home, *writable])):
        raise SandboxUnavailable(f"Working directory is outside the user's roots: {cwd}")

    prefix: list[str] = []
    if net == "outbound":
        prefix = [sandbox_host.tool("nsenter"), f"--net={sandbox_host.outbound_namespace(int(user.pk))}", "--"]
    # As root a terminal is re-acquired inside (setsid --ctty steals it from the outer session: that needs
    # CAP_SYS_ADMIN, kept only until setpriv drops every capability); unprivileged bwrap cannot, so there the
    # sandbox stays in the terminal's session instead.
    steal_terminal = terminal and root
    bwrap = sandbox_host.which(settings.SANDBOX_BWRAP)
    # Without a terminal the launch is a session of its own and has no controlling terminal (popen and
    # start pass start_new_session), so bwrap's --new-session would guard nothing, and it would move the
    # sandbox's init out of the launch's process group before bwrap binds the init to its parent's life:
    # a kill_group in that window (an abort right after the start) left the command running.
    wrapped = [*prefix, *_static_argv(bwrap, new_session=steal_terminal)]
    if steal_terminal:
        wrapped += ["--cap-add", "CAP_SYS_ADMIN"]
    if net == "none":
        wrapped.append("--unshare-net")
    created: set[str] = {"/tmp", "/var", "/var/tmp", "/run"}

    def mount(kind: str, path: str) -> None:
        for parent in _ancestors(path):
            if parent not in created and not parent.startswith(("/usr/", "/etc/", "/proc/", "/dev/")):
                created.add(parent)
                wrapped.extend(["--perms", "0755", "--dir", parent])
        wrapped.extend([kind, path, path])
        created.add(path)

    for base in roots:
        if os.path.isdir(base):
            mount("--bind", base)
    # An empty tmpfs over each server directory inside a mounted root, outermost first (one inside another
    # already hidden needs none). Readable and searchable (0755, the server's): the user's own corners of
    # the data dir (HOME, worktrees, snapshot store) are mounted below it next, and their uid must reach
    # them through it; a 0700 one owned by root left a root's snapshot store unreachable ("not a git
    # repository") whenever the data dir lay inside one of the user's roots.
    covered: list[str] = []
    for secret in sorted(set(hidden)):
        if any(is_within(secret, base) for base in roots) and not any(is_within(secret, c) for c in covered):
            covered.append(secret)
            wrapped.extend(["--perms", "0755", "--tmpfs", secret])
    mount("--bind", identity.home)
    for extra in writable:
        mount("--bind", extra)
    for extra in [*settings.SANDBOX_EXPOSE, *expose]:
        _expose(extra, mount, wrapped, created)
    wrapped.extend(etc.binds())
    # Two helper execs (~1 ms each): no packaged program sets the limits and the identity with every capability
    # set emptied (chpst has no address-space-only limit; it, unshare -S and nsenter -S keep bwrap's bounding set).
    wrappers = _limits(root)
    if steal_terminal:
        wrappers += [sandbox_host.tool("setsid"), "--ctty", "--wait"]
    if root:
        wrappers += [sandbox_host.tool("setpriv"), f"--reuid={identity.uid}", f"--regid={identity.gid}",
                     "--clear-groups", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]

    environment = safe_environment(home=identity.home, USER=identity.name, LOGNAME=identity.name, TMPDIR="/tmp")
    environment.update(env or {})
    environment.update(HOME=identity.home, USER=identity.name, LOGNAME=identity.name, TMPDIR="/tmp")
    return Launch(argv=[*wrapped, "--chdir", real_cwd, "--", *wrappers, *argv], env=environment, cwd=real_cwd,
                  confinement=tuple(wrapped), wrappers=tuple(wrappers), command=tuple(argv))


def run(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None, input: bytes | None = None,
        timeout: float | None = None, expose: Sequence[str] = (), **options) -> subprocess.CompletedProcess:
    """subprocess.run with bytes output captured; stdin is empty unless `input` is given. A timeout kills the
    whole sandbox (its PID namespace dies with bubblewrap). The server's own offline programs on the user's
    files (git) run in the user's resident sandbox (agentserver.sandbox.resident): same confinement, no
    sandbox built per program."""
    launch = prepare(user, argv, cwd=cwd, env=env, expose=expose, **options)
    let_others_run()
    if (launch.confinement and options.get("offline") and not expose and not options.get("writable")
            and not options.get("terminal") and sandbox_resident.available()):
        try:
            return sandbox_resident.run(launch, input=input, timeout=timeout)
        except sandbox_resident.Gone:
            pass
    with subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True,
                          stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            process.communicate()
            raise
    return subprocess.CompletedProcess(launch.argv, process.returncode, stdout, stderr)


def popen(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
          expose: Sequence[str] = (), writable: Sequence[str] = (), roots: Sequence[str] | None = None,
          offline: bool = False, **kwargs) -> subprocess.Popen:
    launch = prepare(user, argv, cwd=cwd, env=env, expose=expose, writable=writable, roots=roots, offline=offline)
    kwargs.setdefault("start_new_session", True)
    return subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env, **kwargs)


async def start(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
                expose: Sequence[str] = (), writable: Sequence[str] = (), roots: Sequence[str] | None = None,
                offline: bool = False, **kwargs) -> sandbox_process.LoopProcess:
    """Start `argv` for `user` from async code (sandbox_process: spawned off the loop, awaited on it)."""
    if roots is None:
        roots = await free_db(_roots_of)(user)
    launch = await asyncio.to_thread(prepare, user, argv, cwd=cwd, env=env, expose=expose, writable=writable,
                                     roots=roots, offline=offline)
    kwargs.setdefault("start_new_session", True)
    return await sandbox_process.spawn(launch, **kwargs)


def kill_group(pid: int | None, sig: int = signal.SIGKILL) -> None:
    """Signal the process group a launch started (`start_new_session`): the sandbox and, through its PID
    namespace, everything in it. Gone already is fine."""
    if pid is None:
        return
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
