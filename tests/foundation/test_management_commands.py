"""createtoken, roots and bootstrap."""
from io import StringIO

import httpx
import pytest
from django.core.management import CommandError, call_command


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_createtoken_prints_a_working_token_as_the_last_word(alice, server):
    token = run("createtoken", "alice").split()[-1]
    response = httpx.get(f"{server.url}/path", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200


def test_createtoken_for_an_unknown_user_fails(transactional_db):
    with pytest.raises(CommandError):
        run("createtoken", "nobody")


def test_roots_add_and_remove(alice, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    listed = run("roots", "alice", "--add", str(extra)).split()
    assert listed == [str(alice.root), str(extra.resolve())]
    assert alice.get("/path", params={"directory": str(extra)}).status_code == 200
    assert run("roots", "alice", "--remove", str(extra)).split() == [str(alice.root)]
    assert alice.get("/path", params={"directory": str(extra)}).status_code == 403
    with pytest.raises(CommandError):
        run("roots", "alice", "--remove", str(extra))


def test_bootstrap_creates_the_first_admin_once(transactional_db, tmp_path):
    from django.contrib.auth import get_user_model

    from auth_app.tokens import roots_of, token_lookup

    output = run("bootstrap", "--username", "root-admin", "--root", str(tmp_path))
    admin = get_user_model().objects.get(username="root-admin")
    assert admin.is_superuser and admin.is_staff
    assert roots_of(admin) == [str(tmp_path.resolve())]
    token = output.split("API token (shown once):")[1].split()[0]
    assert token_lookup(token).user == admin
    assert run("bootstrap", "--username", "second") == ""
    assert not get_user_model().objects.filter(username="second").exists()
