"""The one confinement function on its own: real paths against bases given as real paths, through symlinks,
or not normalised; symlinks out of a base and prefix-sharing siblings stay outside."""
import os

import pytest

from agentserver.paths import OutsideRoots, confine, within_any


@pytest.fixture
def tree(tmp_path):
    real = tmp_path.resolve()
    (real / "root" / "sub").mkdir(parents=True)
    (real / "rootish").mkdir()
    (real / "outside").mkdir()
    os.symlink(real / "root", real / "link-to-root")
    os.symlink(real / "outside", real / "root" / "escape")
    return real


def test_a_path_inside_a_real_base_is_its_real_path(tree):
    assert confine(str(tree / "root" / "sub"), [str(tree / "root")]) == str(tree / "root" / "sub")
    assert confine(str(tree / "root"), [str(tree / "root")]) == str(tree / "root")


def test_a_base_given_through_a_symlink_or_unnormalised_still_admits_its_tree(tree):
    assert confine(str(tree / "root" / "sub"), [str(tree / "link-to-root")]) == str(tree / "root" / "sub")
    assert confine(str(tree / "root" / "sub"), [str(tree / "root") + "/./"]) == str(tree / "root" / "sub")
    assert confine(str(tree / "link-to-root" / "sub"), [str(tree / "root")]) == str(tree / "root" / "sub")


def test_a_symlink_out_of_the_base_and_a_sibling_sharing_its_prefix_are_outside(tree):
    with pytest.raises(OutsideRoots):
        confine(str(tree / "root" / "escape"), [str(tree / "root")])
    with pytest.raises(OutsideRoots):
        confine(str(tree / "rootish"), [str(tree / "root")])
    with pytest.raises(OutsideRoots):
        confine(str(tree / "root" / ".." / "outside"), [str(tree / "root")])
    assert not within_any(str(tree / "root" / "escape" ), [str(tree / "root"), str(tree / "link-to-root")])


def test_the_second_base_can_be_the_one_that_admits(tree):
    bases = [str(tree / "rootish"), str(tree / "root")]
    assert confine(str(tree / "root" / "sub"), bases) == str(tree / "root" / "sub")
    assert within_any(str(tree / "rootish"), bases)


# ---- the server's own directories (issue 29) ---------------------------------------------------------------

@pytest.fixture
def served(tmp_path, settings):
    """A root (`home`) holding the server's data dir, as a checkout's `.data` under `$HOME/src` does."""
    home = (tmp_path / "home").resolve()
    data = home / "agentserver" / ".data"
    (data / "worktrees" / "1" / "proj" / "wt").mkdir(parents=True)
    (data / "snapshot" / "1").mkdir(parents=True)
    (data / "secret_key").write_text("secret\n")
    (home / "repo").mkdir()
    settings.DATA_DIR = data
    settings.SHARED_DIR = data
    return home, data


def test_the_server_dirs_are_the_data_and_shared_dirs_the_code_and_the_virtualenv(served, settings):
    import sys

    from agentserver.paths import server_dirs

    _, data = served
    owned = server_dirs()
    assert str(data) in owned
    assert os.path.realpath(settings.BASE_DIR) in owned
    if sys.prefix != sys.base_prefix:
        assert os.path.realpath(sys.prefix) in owned


def test_a_path_inside_the_data_dir_is_refused_whatever_the_roots_say(served):
    home, data = served
    for path in (data / "secret_key", data, data / "worktrees", home / "agentserver" / ".data" / ".." / ".data"):
        with pytest.raises(OutsideRoots):
            confine(str(path), [str(home)])
        assert not within_any(str(path), [str(home), "/"])
    assert confine(str(home / "repo"), [str(home)]) == str(home / "repo")
    assert confine(str(home / "agentserver"), [str(home)]) == str(home / "agentserver")


def test_a_symlink_into_the_data_dir_is_refused(served):
    home, data = served
    os.symlink(data / "secret_key", home / "repo" / "key")
    os.symlink(data, home / "repo" / "state")
    for path in (home / "repo" / "key", home / "repo" / "state" / "secret_key"):
        with pytest.raises(OutsideRoots):
            confine(str(path), [str(home)])


def test_a_base_inside_a_server_dir_admits_nothing_but_the_servers_own_corners_do(served, settings):
    home, data = served
    for base in (data, data / "users", settings.BASE_DIR):
        with pytest.raises(OutsideRoots):
            confine(str(base), [str(base)])
    worktree = data / "worktrees" / "1" / "proj" / "wt"
    assert confine(str(worktree / "x.py"), [str(worktree)]) == str(worktree / "x.py")
    store = data / "snapshot" / "1"
    assert confine(str(store / "p" / "h"), [str(data / "snapshot")]) == str(store / "p" / "h")
    # A corner admits only its own tree, never the rest of the data dir.
    with pytest.raises(OutsideRoots):
        confine(str(data / "secret_key"), [str(worktree), str(home)])


def test_roots_inside_a_server_dir_are_refused_where_roots_are_set(served, settings, transactional_db):
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command

    from auth_app.admin import AllowedRootForm
    from auth_app.roots import RootRefused, check_root
    from auth_app.tokens import roots_of

    home, data = served
    for refused in (data, data / "users", settings.BASE_DIR, os.path.join(settings.BASE_DIR, "docs")):
        with pytest.raises(RootRefused, match="server's own directory"):
            check_root(str(refused))
    assert check_root(str(home)) == str(home)

    user = get_user_model().objects.create_user(username="dora", password="x")
    with pytest.raises(CommandError, match="server's own directory"):
        call_command("roots", "dora", "--add", str(home), "--add", str(data), stdout=StringIO())
    assert roots_of(user) == []  # nothing added when one of them is refused
    call_command("roots", "dora", "--add", str(home), stdout=StringIO())
    assert roots_of(user) == [str(home)]

    form = AllowedRootForm(data={"path": str(settings.BASE_DIR), "position": 0})
    assert not form.is_valid() and "server's own directory" in form.errors["path"][0]
    assert AllowedRootForm(data={"path": str(home), "position": 0}).is_valid()


def test_the_first_admins_default_root_is_never_the_checkout(served, settings, transactional_db, monkeypatch):
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command

    from auth_app.tokens import roots_of

    home, _ = served
    settings.DEFAULT_ROOTS = [str(settings.BASE_DIR)]  # as `make serve` used to pass
    with pytest.raises(CommandError, match="server's own directory"):
        call_command("bootstrap", "--username", "first", stdout=StringIO())
    assert not get_user_model().objects.exists()  # refused before the admin existed

    settings.DEFAULT_ROOTS = []
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(settings.BASE_DIR)  # `make serve` runs bootstrap in the checkout
    call_command("bootstrap", "--username", "first", stdout=StringIO())
    assert roots_of(get_user_model().objects.get(username="first")) == [str(home)]


def test_on_a_fresh_machine_run_as_root_from_tmp_the_first_root_is_srv_projects(settings, transactional_db,
                                                                                 monkeypatch):
    """`make serve` as root in a checkout under /tmp: neither /root (hidden from every sandbox) nor /tmp (each
    sandbox's own) will do, and the set-up still serves, with /srv/projects made for the first admin."""
    import os
    import shutil
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from auth_app.roots import FALLBACK_ROOT
    from auth_app.tokens import roots_of

    checkout = os.path.join("/tmp", f"agentserver-checkout-{os.getpid()}")
    os.makedirs(checkout, exist_ok=True)
    existed = os.path.exists(FALLBACK_ROOT)
    try:
        settings.BASE_DIR = checkout
        settings.DEFAULT_ROOTS = []
        monkeypatch.setenv("HOME", "/root")
        call_command("bootstrap", "--username", "first", stdout=StringIO())
        assert roots_of(get_user_model().objects.get(username="first")) == [os.path.realpath(FALLBACK_ROOT)]
        assert os.path.isdir(FALLBACK_ROOT)
    finally:
        shutil.rmtree(checkout, ignore_errors=True)
        if not existed:
            shutil.rmtree(FALLBACK_ROOT, ignore_errors=True)
