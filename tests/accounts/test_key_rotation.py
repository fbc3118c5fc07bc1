"""Several Fernet keys, newest first: rotate_credentials re-encrypts under the newest, after which a server
holding only the new key still reads every account; without rotation it cannot (and says so, no 500)."""
import httpx
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.test import override_settings

from auth_app import crypto
from auth_app.accounts import active_credential
from auth_app.models import AuthAccount

SECRET = "sk-rotate-me-0000000000000000abcd"


def _account(persona) -> dict:
    response = persona.post("/api/auth", json={"serviceID": "openai",
                                               "credential": {"type": "api", "key": SECRET, "metadata": {"o": "1"}}})
    assert response.status_code == 200
    return response.json()


def _get(server, persona, account_id) -> dict:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {persona.token}"}) as client:
        response = client.get(f"/api/auth/{account_id}")
    assert response.status_code == 200, response.text
    return response.json()


def test_rotate_then_serve_with_the_new_key(alice, server_factory):
    old_key = crypto.configured_keys()[0]  # the embedded default, derived from SECRET_KEY
    new_key = Fernet.generate_key().decode()
    account = _account(alice)
    before = AuthAccount.objects.get(id=account["id"]).ciphertext

    with override_settings(FERNET_KEYS=[new_key, old_key]):
        call_command("rotate_credentials", stdout=open("/dev/null", "w"))
        after = AuthAccount.objects.get(id=account["id"]).ciphertext
        assert after != before
        assert active_credential(alice.user, "openai")["key"] == SECRET
    # only the new key opens it now
    assert Fernet(new_key.encode()).decrypt(after.encode())
    assert SECRET not in after

    both = server_factory({"AGENTSERVER_FERNET_KEYS": f"{new_key},{old_key}"})
    seen = _get(both, alice, account["id"])
    assert seen["credential"]["metadata"] == {"o": "1"} and "undecryptable" not in seen["credential"]

    only_new = server_factory({"AGENTSERVER_FERNET_KEYS": new_key})
    seen = _get(only_new, alice, account["id"])
    assert seen["credential"]["masked"] == "sk-…abcd"
    assert "undecryptable" not in seen["credential"]
    assert SECRET not in both.log() + only_new.log()


def test_a_server_without_the_old_key_reports_undecryptable_accounts(alice, server_factory):
    account = _account(alice)
    stranger = server_factory({"AGENTSERVER_FERNET_KEYS": Fernet.generate_key().decode()})
    seen = _get(stranger, alice, account["id"])
    assert seen["credential"]["undecryptable"] is True
    assert seen["credential"]["masked"] == "sk-…abcd"


def test_passphrase_keys_are_accepted():
    with override_settings(FERNET_KEYS=["correct horse battery staple"]):
        token = crypto.encrypt_json({"type": "api", "key": "k"})
        assert crypto.decrypt_json(token) == {"type": "api", "key": "k"}
