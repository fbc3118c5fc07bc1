"""The /etc a sandbox shows: made once per user and system /etc (concurrent first launches share one copy, a
restarted server finds it on disk), its own name service and one resolv.conf whatever the launch's network."""
import os
import subprocess
import sys
import threading
from pathlib import Path

from django.conf import settings

from agentserver.sandbox import host as sandbox_host
from agentserver.sandbox import launcher as sandbox


def _user(django_user_model, tmp_path, name):
    user = django_user_model.objects.create_user(username=name, password="x")
    root = tmp_path / name
    root.mkdir()
    return user, str(root)


def _etc_copies(user) -> set[str]:
    """The copies of /etc made for this user. Test users' ids repeat across tests, so the state directory may
    hold an earlier user's copies too, and the live server may still be making one for such a user (work a
    previous test left running): those name another user in their passwd, or are being written by another
    process."""
    state = sandbox_host.user_state_dir(user.pk)
    if not os.path.isdir(state):
        return set()
    name, mine = sandbox_host.identity_of(user).name, set()
    for entry in os.listdir(state):
        passwd = Path(state, entry, "passwd")
        if ".tmp" in entry:
            # A copy being written is named for the process writing it: this test's launches run here, a
            # live server's (for an earlier test's user with the same id) elsewhere.
            if entry.startswith("etc") and entry.endswith(f".tmp{os.getpid()}"):
                mine.add(entry)
        elif entry.startswith("etc") and (not passwd.exists() or f"\n{name}:" in "\n" + passwd.read_text()):
            mine.add(entry)
    return mine


def test_concurrent_first_launches_share_one_copy_of_etc(db, tmp_path, django_user_model):
    user, root = _user(django_user_model, tmp_path, "etc-race")
    earlier = _etc_copies(user)
    results = []

    def launch():
        results.append(sandbox.run(user, ["/bin/cat", "/etc/passwd"], cwd=root, roots=[root], offline=True))

    threads = [threading.Thread(target=launch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [result.returncode for result in results] == [0] * 4, [result.stderr for result in results]
    assert all(b"etc-race" in result.stdout for result in results)
    made = _etc_copies(user) - earlier
    assert len(made) == 1 and not any(".tmp" in name for name in made), made  # one copy, no half-written one


def test_a_restarted_server_finds_the_users_etc_on_disk(db, tmp_path, django_user_model):
    user, root = _user(django_user_model, tmp_path, "etc-restart")
    sandbox.run(user, ["/bin/true"], cwd=root, roots=[root])
    identity = sandbox_host.identity_of(user)
    etc = Path(sandbox_host.prepare_identity(identity, sandbox.network(), sandbox.ETC_FILES).own)
    before, copies = (etc / "passwd").stat().st_ino, _etc_copies(user)
    code = ("import django; django.setup(); from agentserver.sandbox import launcher as sandbox, host as sandbox_host; "
            f"print(sandbox_host.prepare_identity(sandbox_host.Identity(uid={identity.uid}, gid={identity.gid}, "
            f"name={identity.name!r}, state={identity.state!r}), sandbox.network(), sandbox.ETC_FILES).own)")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "AGENTSERVER_DATA_DIR": str(settings.DATA_DIR)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == str(etc)  # the same directory, not copied again
    assert (etc / "passwd").stat().st_ino == before and _etc_copies(user) == copies


def test_users_are_looked_up_in_the_sandboxs_own_files(db, tmp_path, django_user_model):
    user, root = _user(django_user_model, tmp_path, "etc-names")
    result = sandbox.run(user, ["/bin/sh", "-c", "grep -E '^(passwd|group):' /etc/nsswitch.conf; id -un"],
                         cwd=root, roots=[root], offline=True)
    assert result.stdout.decode().split() == ["passwd:", "files", "group:", "files", "etc-names"], result.stderr


def test_an_offline_launch_leaves_the_networks_resolv_conf_in_place(db, tmp_path, django_user_model):
    user, root = _user(django_user_model, tmp_path, "etc-dns")
    show = ["/bin/cat", "/etc/resolv.conf"]
    offline = sandbox.run(user, show, cwd=root, roots=[root], offline=True).stdout
    networked = sandbox.run(user, show, cwd=root, roots=[root]).stdout
    assert offline == networked
    if sandbox.network() == "outbound":
        assert networked.decode().strip() == f"nameserver {sandbox_host.SLIRP_DNS}"


def test_users_share_one_copy_of_the_systems_part_and_each_has_its_own_names(db, tmp_path, django_user_model):
    """Every sandbox's /etc is one copy of the system's part (made once, not per user), with the files
    generated per user mounted over it: each user sees their own names, and nothing of theirs is in the shared
    copy, which holds an empty file at each generated name and nothing else of them."""
    first, first_root = _user(django_user_model, tmp_path, "etc-share-a")
    second, second_root = _user(django_user_model, tmp_path, "etc-share-b")
    etcs = [sandbox_host.prepare_identity(sandbox_host.identity_of(user), sandbox.network(), sandbox.ETC_FILES)
            for user in (first, second)]
    shared = Path(sandbox_host._system_etc(sandbox.ETC_FILES))
    assert {etc.system for etc in etcs} == {str(shared)}
    assert (shared / "gitconfig").read_text().endswith("[safe]\n\tdirectory = *\n")
    assert (shared / "ld.so.cache").stat().st_size > 0
    for name in sandbox_host.GENERATED:
        assert (shared / name).stat().st_size == 0
    for etc in etcs:
        assert sorted(os.listdir(etc.own)) == sorted(sandbox_host.GENERATED)  # no tree per user
    assert "etc-share-a" in Path(etcs[0].own, "passwd").read_text()
    assert "etc-share-a" not in Path(etcs[1].own, "passwd").read_text()
    show = "id -un; test -s /etc/ld.so.cache && echo libs; grep -c . /etc/passwd; grep -c files /etc/nsswitch.conf"
    for user, root in ((first, first_root), (second, second_root)):
        result = sandbox.run(user, ["/bin/sh", "-c", show], cwd=root, roots=[root], offline=True)
        assert result.stdout.decode().split() == [user.username, "libs", "3", "11"], result.stderr
    again = sandbox.run(first, ["/bin/sh", "-c", "echo nope > /etc/passwd"], cwd=first_root, roots=[first_root],
                        offline=True)
    assert again.returncode != 0 and "etc-share-a" in Path(etcs[0].own, "passwd").read_text()


def test_a_shared_copy_an_earlier_version_left_is_not_taken_for_this_ones(db, tmp_path, django_user_model):
    """An upgraded server finds the shared copy the earlier version made under the old name (no empty files
    to mount the user's own over): it makes its own, and the sandbox starts."""
    import shutil

    stamp = sandbox_host._system_stamp(sandbox.ETC_FILES)
    earlier = Path(settings.DATA_DIR, "sandbox-etc", f"etc.{stamp[:16]}")
    current = Path(sandbox_host._system_etc(sandbox.ETC_FILES))
    earlier.mkdir(parents=True, exist_ok=True)
    (earlier / "ld.so.cache").write_bytes(b"")
    try:
        assert current != earlier and current.name.startswith(f"etc.{sandbox_host.SHARED_ETC_LAYOUT}.")
        user, root = _user(django_user_model, tmp_path, "etc-upgrade")
        result = sandbox.run(user, ["/bin/sh", "-c", "id -un"], cwd=root, roots=[root], offline=True)
        assert result.stdout.decode().split() == ["etc-upgrade"], result.stderr
    finally:
        shutil.rmtree(earlier, ignore_errors=True)
