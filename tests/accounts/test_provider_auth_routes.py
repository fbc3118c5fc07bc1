"""opencode's PUT / DELETE /auth/{providerID} (the TUI's "connect a provider"): the key becomes the caller's
active auth account for the provider, and the provider shows as connected."""
from auth_app.models import AuthAccount

KEY = "sk-connect-0123456789abcdefWXYZ"
OTHER = "sk-second-0123456789abcdefABCD"


def test_setting_a_key_connects_the_provider(alice, bob):
    assert "openai" not in alice.get("/provider").json()["connected"]
    response = alice.put("/auth/openai", json={"type": "api", "key": KEY})
    assert response.status_code == 200 and response.json() is True
    assert "openai" in alice.get("/provider").json()["connected"]
    assert "openai" not in bob.get("/provider").json()["connected"]
    account = AuthAccount.objects.get(owner=alice.user, service_id="openai")
    assert account.active and KEY not in account.ciphertext
    listed = alice.get("/api/auth", params={"serviceID": "openai"}).json()
    assert [a["credential"]["masked"] for a in listed["accounts"]] == ["sk-…WXYZ"]


def test_setting_it_again_replaces_the_key_of_the_active_account(alice):
    alice.put("/auth/openai", json={"type": "api", "key": KEY})
    assert alice.put("/auth/openai", json={"type": "api", "key": OTHER}).status_code == 200
    accounts = list(AuthAccount.objects.filter(owner=alice.user, service_id="openai"))
    assert len(accounts) == 1
    from auth_app.accounts import active_credential

    assert active_credential(alice.user, "openai")["key"] == OTHER


def test_an_oauth_credential_is_stored_too(alice):
    body = {"type": "oauth", "refresh": "refresh-token-value", "access": "access-token-value-123456",
            "expires": 1_900_000_000_000}
    assert alice.put("/auth/anthropic", json=body).status_code == 200
    assert AuthAccount.objects.get(owner=alice.user, service_id="anthropic").credential_type == "oauth"


def test_bad_credentials_are_400_naming_the_field_and_store_nothing(alice):
    for body, field in (({"type": "api"}, "key"), ({"type": "api", "key": ""}, "key"),
                        ({"type": "api", "key": 5}, "key"), ({"type": "magic", "key": KEY}, "type"),
                        ({"type": "wellknown", "key": "k", "token": "t"}, "type"),
                        ({"type": "oauth", "access": "a"}, "refresh"), ([KEY], "object")):
        response = alice.put("/auth/openai", json=body)
        assert response.status_code == 400, body
        data = response.json()["data"]
        named = data["message"] + " " + " ".join(".".join(i["path"]) for i in data.get("issues", []))
        assert field in named, (body, response.text)
    assert not AuthAccount.objects.filter(owner=alice.user).exists()


def test_removing_disconnects_the_provider(alice):
    alice.put("/auth/openai", json={"type": "api", "key": KEY})
    response = alice.delete("/auth/openai")
    assert response.status_code == 200 and response.json() is True
    assert not AuthAccount.objects.filter(owner=alice.user, service_id="openai").exists()
    assert "openai" not in alice.get("/provider").json()["connected"]
    assert alice.delete("/auth/openai").status_code == 404


def test_bob_cannot_remove_alices_key(alice, bob):
    alice.put("/auth/openai", json={"type": "api", "key": KEY})
    assert bob.delete("/auth/openai").status_code == 404
    assert AuthAccount.objects.filter(owner=alice.user, service_id="openai").exists()


def test_anonymous_callers_are_refused(anon, transactional_db):
    assert anon.put("/auth/openai", json={"type": "api", "key": KEY}).status_code == 401
    assert anon.delete("/auth/openai").status_code == 401
    assert not AuthAccount.objects.exists()
