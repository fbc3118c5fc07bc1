"""A server that has seen a token keeps it warm (auth_app/tokens.py), yet every change to what the token may
do counts on the very next request, whichever route made it: the services, the admin or a plain database
edit from another process (here the test process, beside the live server)."""
from django.contrib.auth import get_user_model
from django.utils import timezone

from auth_app.models import AllowedRoot, ApiToken
from auth_app.tokens import roots_add, roots_remove


def test_a_token_revoked_behind_the_servers_back_is_401_at_once(alice):
    assert alice.get("/path").status_code == 200
    ApiToken.objects.filter(user=alice.user).update(revoked=timezone.now())
    response = alice.get("/path")
    assert response.status_code == 401
    assert response.json()["name"] == "UnauthorizedError"


def test_a_deleted_token_is_401_at_once(alice):
    assert alice.get("/session").status_code == 200
    ApiToken.objects.filter(user=alice.user).delete()
    assert alice.get("/session").status_code == 401


def test_a_deactivated_user_is_401_at_once_and_back_when_reactivated(alice):
    assert alice.get("/path").status_code == 200
    get_user_model().objects.filter(pk=alice.user.pk).update(is_active=False)
    assert alice.get("/path").status_code == 401
    get_user_model().objects.filter(pk=alice.user.pk).update(is_active=True)
    assert alice.get("/path").status_code == 200


def test_a_renamed_user_must_use_the_new_name_with_basic_auth(alice, anon):
    import base64

    def basic(name):
        return {"Authorization": "Basic " + base64.b64encode(f"{name}:{alice.token}".encode()).decode()}

    assert anon.get("/path", headers=basic("alice")).status_code == 200
    get_user_model().objects.filter(pk=alice.user.pk).update(username="alicia")
    assert anon.get("/path", headers=basic("alice")).status_code == 401
    assert anon.get("/path", headers=basic("alicia")).status_code == 200


def test_a_removed_root_is_403_at_once_and_an_added_one_is_usable_at_once(alice, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    assert alice.get("/path", params={"directory": str(extra)}).status_code == 403
    roots_add(user=alice.user, path=str(extra))
    assert alice.get("/path", params={"directory": str(extra)}).status_code == 200
    roots_remove(user=alice.user, path=str(extra))
    assert alice.get("/path", params={"directory": str(extra)}).status_code == 403


def test_the_default_directory_follows_the_first_root(alice, tmp_path):
    first = tmp_path / "first"
    first.mkdir()
    assert alice.get("/path").json()["directory"] == str(alice.root)
    AllowedRoot.objects.filter(user=alice.user).update(position=5)
    roots_add(user=alice.user, path=str(first))
    AllowedRoot.objects.filter(user=alice.user, path=str(first.resolve())).update(position=0)
    assert alice.get("/path").json()["directory"] == str(first.resolve())


def test_one_users_warm_token_never_answers_for_another(alice, bob):
    created = alice.post("/session", json={"title": "mine"}).json()
    assert bob.get(f"/session/{created['id']}").status_code == 404
    assert alice.get(f"/session/{created['id']}").json()["title"] == "mine"
    assert [s["id"] for s in bob.get("/session").json()] == []
