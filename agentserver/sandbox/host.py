"""The host side of the sandbox: whether bubblewrap works here, each user's uid and state directory (HOME,
generated /etc files), the POSIX ACLs that let a user's uid write in their roots, and the per-user network
namespaces of the `outbound` mode. agentserver/sandbox/launcher.py builds the command lines from these."""
from __future__ import annotations

import errno
import functools
import hashlib
import logging
import os
import shutil
import struct
import subprocess
import threading
import time
from dataclasses import dataclass

from django.conf import settings

from agentserver import paths

log = logging.getLogger("agentserver.sandbox.launcher")

# Directories never handed over to a user's uid even when they are someone's root (staff may be given `/`).
SYSTEM_DIRECTORIES = {"/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/var", "/boot", "/dev", "/proc",
                      "/sys", "/run", "/root", "/home", "/tmp", "/opt", "/srv", "/mnt", "/media"}
SLIRP_DNS = "10.0.2.3"


def is_root() -> bool:
    return os.geteuid() == 0


@functools.lru_cache(maxsize=16)
def which(program: str) -> str | None:
    """A program's path, looked up once per process (every launch needs several; PATH walks add up)."""
    return shutil.which(program)


def tool(program: str) -> str:
    """The absolute path, so neither bwrap nor a helper before the user's program searches PATH for it."""
    return which(program) or program


@dataclass(frozen=True)
class Identity:
    uid: int
    gid: int
    name: str
    state: str  # <data dir>/users/<id>: this host's copies of the sandbox's /etc
    shared: str = ""  # <shared dir>/users/<id>: what follows the user to every host (HOME)

    @property
    def home(self) -> str:
        return os.path.join(self.shared or self.state, "home")


def user_state_dir(user_id: int) -> str:
    return os.path.join(str(settings.DATA_DIR), "users", str(int(user_id)))


def user_shared_dir(user_id: int) -> str:
    return os.path.join(str(settings.SHARED_DIR), "users", str(int(user_id)))


def identity_of(user) -> Identity:
    """As root each user gets uid = base + id (the kernel separates users); otherwise the server's own uid
    (the mount view alone separates them)."""
    if is_root():
        uid = settings.SANDBOX_UID_BASE + int(user.pk)
        gid = uid
    else:
        uid, gid = os.getuid(), os.getgid()
    name = "".join(ch for ch in (getattr(user, "username", "") or "") if ch.isalnum() or ch in "._-")[:32]
    return Identity(uid=uid, gid=gid, name=name or f"user{user.pk}", state=user_state_dir(user.pk),
                    shared=user_shared_dir(user.pk))


def server_dirs(user) -> list[str]:
    """The user's own corners of the shared dir that their sandbox may write: server-created worktrees and the
    snapshot store (created on demand so they can be mounted)."""
    data = str(settings.SHARED_DIR)
    found = []
    for name in ("worktrees", "snapshot"):
        path = os.path.realpath(os.path.join(data, name, str(int(user.pk))))
        os.makedirs(path, exist_ok=True)
        found.append(path)
    return found


@dataclass(frozen=True)
class SandboxEtc:
    """What a sandbox shows as /etc: `system` mounted there, then each of `own`'s files (GENERATED) over it."""
    system: str  # the system's part, one copy for every user (_system_etc)
    own: str  # the user's generated files

    def binds(self) -> list[str]:
        """bubblewrap's arguments: the shared copy holds an empty file at each generated name to mount over."""
        argv = ["--ro-bind", self.system, "/etc"]
        for name in GENERATED:
            argv += ["--ro-bind", os.path.join(self.own, name), f"/etc/{name}"]
        return argv


_etc_dirs: dict[tuple, SandboxEtc] = {}
_etc_lock = threading.Lock()
STALE_SECONDS = 86400
# The files of a sandbox's /etc made for each user rather than copied from the system's.
GENERATED = ("passwd", "group", "nsswitch.conf", "hosts", "resolv.conf")
# In the shared copy's name: a copy an earlier version left in the data dir (without the empty files the
# user's own are mounted over) is not taken for this one's after an upgrade.
SHARED_ETC_LAYOUT = "v2"
# The sandbox's own name service: its passwd and group are the generated files, and nothing behind the host's
# other sources (systemd-userdb, sss, LDAP) is reachable from inside. `files` alone also spares every program
# that looks a user up (setpriv, bash, git) loading libnss_systemd for a miss.
NSSWITCH = ("passwd: files\ngroup: files\nshadow: files\ngshadow: files\nhosts: files dns\nnetworks: files\n"
            "protocols: files\nservices: files\nethers: files\nrpc: files\nnetgroup: files\n")


def prepare_identity(identity: Identity, network: str, etc_entries: tuple[str, ...]) -> SandboxEtc:
    """Create the user's state directory and HOME (owned by their uid), and return the sandbox's /etc: the
    system's `etc_entries` in their one shared copy (_system_etc), and the user's own passwd/group naming them,
    nsswitch.conf, hosts and resolv.conf for `network`, mounted over it file by file (five more bind mounts
    cost a launch about 0.1 ms; a per-user tree of links to the shared copy cost each new user 22 ms).
    The user's files are in a directory named by a digest of their content, so a server process (or a
    restarted one) finds them on disk instead of writing them again; a stat per launch notices one removed."""
    key = (identity, network, etc_entries)
    found = _etc_dirs.get(key)
    if found is not None and os.path.isdir(found.own) and os.path.isdir(found.system):
        return found
    with _etc_lock:  # one copy at a time: two threads starting a user's first sandboxes would both write it
        found = _etc_dirs.get(key)
        if found is None or not (os.path.isdir(found.own) and os.path.isdir(found.system)):
            os.makedirs(identity.state, mode=0o711, exist_ok=True)
            if identity.shared:
                os.makedirs(identity.shared, mode=0o711, exist_ok=True)
            os.makedirs(identity.home, mode=0o700, exist_ok=True)
            if is_root():
                os.chown(identity.home, identity.uid, identity.gid)
            found = _etc_dirs[key] = SandboxEtc(system=_system_etc(etc_entries),
                                                own=_own_etc(identity, network))
        return found


def _own_etc(identity: Identity, network: str) -> str:
    generated = _generated_etc(identity, network)
    digest = hashlib.sha256(repr(sorted(generated.items())).encode())
    target = os.path.join(identity.state, f"etc.{digest.hexdigest()[:16]}")
    if os.path.isdir(target):
        return target
    fresh = f"{target}.tmp{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    os.makedirs(fresh, mode=0o755)
    for name, text in generated.items():
        path = os.path.join(fresh, name)
        with open(path, "x") as handle:
            handle.write(text)
        os.chmod(path, 0o644)
    try:
        os.rename(fresh, target)  # whole, so no sandbox ever mounts a half-written file set
    except OSError:
        shutil.rmtree(fresh, ignore_errors=True)  # another server process made the same one first
    _remove_stale_etc(identity.state, keep=target)
    return target


def _system_etc(etc_entries: tuple[str, ...]) -> str:
    """The system's part of every sandbox's /etc (`etc_entries` copied, git told to trust the user's roots,
    an empty file at each GENERATED name for the user's own to be mounted over), made once per system /etc
    (its stamp) for all users, in the data dir's `sandbox-etc`."""
    stamp = _system_stamp(etc_entries)
    shared = os.path.join(str(settings.DATA_DIR), "sandbox-etc")
    target = os.path.join(shared, f"etc.{SHARED_ETC_LAYOUT}.{stamp[:16]}")
    if os.path.isdir(target):
        return target
    os.makedirs(shared, mode=0o711, exist_ok=True)
    fresh = f"{target}.tmp{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    os.makedirs(fresh, mode=0o755)
    for name in etc_entries:
        source, destination = os.path.join("/etc", name), os.path.join(fresh, name)
        os.makedirs(os.path.dirname(destination), mode=0o755, exist_ok=True)
        try:
            if os.path.isdir(source) and not os.path.islink(source):
                shutil.copytree(source, destination, symlinks=True)
            else:
                shutil.copy2(source, destination, follow_symlinks=False)
        except OSError:
            continue  # unreadable or vanished: the sandbox simply lacks it
    # git refuses a repository owned by another uid ("dubious ownership"); the user's roots are theirs by ACL,
    # not by owner, and only their roots are mounted: the sandbox's system config trusts them.
    with open(os.path.join(fresh, "gitconfig"), "a") as handle:
        handle.write("\n[safe]\n\tdirectory = *\n")
    for name in GENERATED:
        path = os.path.join(fresh, name)
        if os.path.lexists(path):
            os.unlink(path)
        open(path, "x").close()
        os.chmod(path, 0o644)
    try:
        os.rename(fresh, target)
    except OSError:
        shutil.rmtree(fresh, ignore_errors=True)  # another server process made the same one first
    _remove_stale_etc(shared, keep=target)
    return target


def _generated_etc(identity: Identity, network: str) -> dict[str, str]:
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    return {
        "passwd": (f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
                   f"{identity.name}:x:{identity.uid}:{identity.gid}::{identity.home}:{shell}\n"
                   f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"),
        "group": f"root:x:0:\n{identity.name}:x:{identity.gid}:\nnogroup:x:65534:\n",
        "nsswitch.conf": NSSWITCH,
        "resolv.conf": _resolv_conf(network),
        "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    }


@functools.lru_cache(maxsize=4)
def _system_stamp(etc_entries: tuple[str, ...]) -> str:
    """What the copied part of /etc is made of (every path's size, mtime and inode), once per process: a
    package upgrade or an edit gives a new per-user copy at the next server start."""
    digest = hashlib.sha256()
    for name in etc_entries:
        for directory, names in _walk(os.path.join("/etc", name)):
            for path in [directory, *(os.path.join(directory, entry) for entry in names)]:
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode())
    return digest.hexdigest()


def _walk(path: str):
    if os.path.isdir(path) and not os.path.islink(path):
        for directory, dirs, files in os.walk(path):
            yield directory, sorted(dirs + files)
    else:
        yield path, []


def _remove_stale_etc(state: str, *, keep: str) -> None:
    """Earlier copies (an older system /etc, the pre-digest `etc`, a crashed copy's leftovers). Only old
    ones: another server process that started before an upgrade may still be mounting its own."""
    now = time.time()
    for entry in os.listdir(state):
        path = os.path.join(state, entry)
        if entry != "etc" and not entry.startswith("etc.") or path == keep:
            continue
        try:
            if entry == "etc" or now - os.lstat(path).st_mtime > STALE_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def _resolv_conf(network: str) -> str:
    if network == "outbound":
        return f"nameserver {SLIRP_DNS}\n"
    if network == "host":
        try:
            with open("/etc/resolv.conf") as handle:
                return handle.read()
        except OSError:
            return ""
    return ""


# -- write access to the user's roots -------------------------------------------------------------------------
# POSIX ACL xattrs (linux/posix_acl_xattr.h): a version header, then (tag, perm, id) entries sorted by tag, id.
_ACCESS, _DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_NO_ID = 0xFFFFFFFF
_granted: set[tuple[int, str]] = set()
_grant_lock = threading.Lock()


def _acl_read(path: str, name: str) -> list[tuple[int, int, int]]:
    try:
        blob = os.getxattr(path, name, follow_symlinks=False)
    except OSError as error:
        if error.errno in (errno.ENODATA, getattr(errno, "ENOATTR", errno.ENODATA)):
            return []
        raise
    return [struct.unpack_from("<HHI", blob, 4 + 8 * i) for i in range((len(blob) - 4) // 8)]


def _acl_with_user(entries: list, mode: int, uid: int, perm: int) -> bytes:
    if not entries:
        entries = [(_USER_OBJ, (mode >> 6) & 7, _NO_ID), (_GROUP_OBJ, (mode >> 3) & 7, _NO_ID),
                   (_OTHER, mode & 7, _NO_ID)]
    kept = [e for e in entries if not (e[0] == _USER and e[2] == uid) and e[0] != _MASK]
    kept.append((_USER, perm, uid))
    mask = 0
    for tag, bits, _ in kept:
        if tag in (_USER, _GROUP, _GROUP_OBJ):
            mask |= bits
    kept.append((_MASK, mask, _NO_ID))
    kept.sort(key=lambda e: (e[0], e[2]))
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in kept)


def grant(path: str, uid: int, *, is_dir: bool) -> None:
    """Give `uid` rwX on `path`, and on a directory the same for whatever is created in it later (a default
    ACL), so files the server writes in-process stay usable by the user's processes."""
    st = os.lstat(path)
    perm = 7 if is_dir or st.st_mode & 0o111 else 6
    current = _acl_read(path, _ACCESS)
    if (_USER, perm, uid) not in current:
        os.setxattr(path, _ACCESS, _acl_with_user(current, st.st_mode, uid, perm), follow_symlinks=False)
    if is_dir:
        current = _acl_read(path, _DEFAULT)
        if (_USER, 7, uid) not in current:
            os.setxattr(path, _DEFAULT, _acl_with_user(current, st.st_mode, uid, 7), follow_symlinks=False)


def grant_roots(identity: Identity, roots: list[str]) -> None:
    """As root: the user's uid may read and write everything in their roots (once per root per process). A
    system directory given as a root (staff with `/`) is never handed over."""
    if not is_root():
        return
    for root in roots:
        key = (identity.uid, root)
        if key in _granted or root in SYSTEM_DIRECTORIES or not os.path.isdir(root):
            continue
        with _grant_lock:
            if key in _granted:
                continue
            try:
                _grant_tree(root, identity.uid)
            except OSError as error:
                if error.errno != errno.EOPNOTSUPP:
                    raise
                log.warning("sandbox: %s has no POSIX ACLs; handing it over to uid %s with chown", root,
                            identity.uid)
                _chown_tree(root, identity.uid, identity.gid)
            _granted.add(key)


def _grant_tree(root: str, uid: int) -> None:
    # The server's own directories inside a root (its data dir, code, virtualenv) stay the server's alone:
    # never walked, never granted (the user's corners of the data dir are granted as roots of their own).
    skip = set(paths.masked_in(root))
    grant(root, uid, is_dir=True)
    for directory, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if os.path.join(directory, name) not in skip]
        for name in dirs:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                grant(path, uid, is_dir=True)
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                grant(path, uid, is_dir=False)


def _chown_tree(root: str, uid: int, gid: int) -> None:
    skip = set(paths.masked_in(root))
    os.chown(root, uid, gid)
    for directory, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if os.path.join(directory, name) not in skip]
        for name in dirs + files:
            os.chown(os.path.join(directory, name), uid, gid, follow_symlinks=False)


def hand_over(path: str, user) -> None:
    """A file or directory the server created for `user` outside their roots (their HOME, their snapshot
    store) becomes theirs."""
    if is_root() and user is not None:
        identity = identity_of(user)
        os.chown(path, identity.uid, identity.gid, follow_symlinks=False)


# -- networks --------------------------------------------------------------------------------------------------
class Network:
    """A network namespace per user with slirp4netns in front (outbound, no host loopback). Both processes
    end when the server process does (a pipe they read reaches EOF), never with one thread."""

    def __init__(self, holder: subprocess.Popen, slirp: subprocess.Popen, keep: int):
        self.holder, self.slirp, self.keep = holder, slirp, keep

    @property
    def namespace(self) -> str:
        return f"/proc/{self.holder.pid}/ns/net"

    def alive(self) -> bool:
        return self.holder.poll() is None and self.slirp.poll() is None

    def close(self) -> None:
        for process in (self.slirp, self.holder):
            if process.poll() is None:
                process.kill()
                process.wait()
        os.close(self.keep)


_networks: dict[int, Network] = {}
_network_lock = threading.Lock()


def outbound_namespace(user_id: int) -> str:
    with _network_lock:
        network = _networks.get(user_id)
        if network is not None and network.alive():
            return network.namespace
        if network is not None:
            network.close()
        network = _networks[user_id] = _start_network()
        return network.namespace


def _await_own_namespace(holder: subprocess.Popen, seconds: float = 10.0) -> None:
    """slirp4netns attaches to whatever namespace the pid has: until `unshare` has run, that is the host's."""
    host = os.readlink("/proc/self/ns/net")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and holder.poll() is None:
        try:
            if os.readlink(f"/proc/{holder.pid}/ns/net") != host:
                return
        except OSError:
            pass
        time.sleep(0.002)
    holder.kill()
    raise OSError("the sandbox network namespace did not come up")


def _start_network() -> Network:
    life_read, life_write = os.pipe()
    ready_read, ready_write = os.pipe()
    try:
        # Server-owned programs on no user file: they build the namespace the sandboxes then enter.
        holder = subprocess.Popen([tool("unshare"), "--net", "--", tool("sh"), "-c", "read line"], stdin=life_read,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _await_own_namespace(holder)
        slirp = subprocess.Popen(
            [tool("slirp4netns"), "--configure", "--disable-host-loopback", "--mtu",
             "65520", "--ready-fd", str(ready_write), "--exit-fd", str(life_read), str(holder.pid), "tap0"],
            pass_fds=(ready_write, life_read), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(ready_write)
        ready_write = -1
        if os.read(ready_read, 1) != b"1":
            slirp.kill()
            holder.kill()
            raise OSError("slirp4netns did not start")
    finally:
        os.close(ready_read)
        os.close(life_read)
        if ready_write >= 0:
            os.close(ready_write)
    return Network(holder, slirp, life_write)
