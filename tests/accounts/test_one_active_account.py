"""Exactly one active account per service and user: auth.activate, `active` on create, and a DB constraint."""
import pytest
from django.db import IntegrityError, transaction

from auth_app.accounts import active_credential
from auth_app.models import AuthAccount


def create(persona, key, **extra):
    body = {"serviceID": "openai", "credential": {"type": "api", "key": key}, **extra}
    response = persona.post("/api/auth", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_second_account_stays_inactive_unless_asked(alice):
    first = create(alice, "sk-first-000000000000001")
    second = create(alice, "sk-second-00000000000002")
    assert first["active"] and not second["active"]
    third = create(alice, "sk-third-000000000000003", active=True)
    assert third["active"]
    assert alice.get("/api/auth").json()["active"] == {"openai": third["id"]}
    assert alice.get(f"/api/auth/{first['id']}").json()["active"] is False


def test_activate_switches_the_active_account(alice):
    first = create(alice, "sk-first-000000000000001")
    second = create(alice, "sk-second-00000000000002")
    response = alice.post(f"/api/auth/{second['id']}/activate")
    assert response.status_code == 200
    assert response.json()["active"] is True
    assert alice.get(f"/api/auth/{first['id']}").json()["active"] is False
    assert AuthAccount.objects.filter(owner=alice.user, service_id="openai", active=True).count() == 1
    assert active_credential(alice.user, "openai") == {"type": "api", "key": "sk-second-00000000000002"}
    # activating twice is harmless
    assert alice.post(f"/api/auth/{second['id']}/activate").json()["active"] is True


def test_activation_is_per_user(alice, bob):
    mine = create(alice, "sk-alice-0000000000000001")
    theirs = create(bob, "sk-bob-000000000000000002")
    assert mine["active"] and theirs["active"]
    assert active_credential(alice.user, "openai")["key"] == "sk-alice-0000000000000001"
    assert active_credential(bob.user, "openai")["key"] == "sk-bob-000000000000000002"


def test_the_database_refuses_two_active_accounts_for_one_service(alice):
    first = create(alice, "sk-first-000000000000001")
    second = create(alice, "sk-second-00000000000002")
    with pytest.raises(IntegrityError), transaction.atomic():
        AuthAccount.objects.filter(id=second["id"]).update(active=True)
    assert AuthAccount.objects.get(id=first["id"]).active is True


def test_deleting_the_active_account_leaves_none_active(alice):
    first = create(alice, "sk-first-000000000000001")
    create(alice, "sk-second-00000000000002")
    alice.delete(f"/api/auth/{first['id']}")
    assert alice.get("/api/auth").json()["active"] == {}
    assert active_credential(alice.user, "openai") is None
    assert active_credential(alice.user, "unknown-service") is None
