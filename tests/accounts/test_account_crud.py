"""auth.create / list / get / update / delete with good and bad input, and who may see what."""
import re

import pytest

KEY = "sk-test-0123456789abcdefWXYZ"


def create(persona, **overrides):
    body = {"serviceID": "openai", "credential": {"type": "api", "key": KEY}, "description": "work key"}
    body.update(overrides)
    return persona.post("/api/auth", json=body)


def test_it_creates_an_api_account_and_shows_only_a_mask(alice):
    response = create(alice)
    assert response.status_code == 200, response.text
    account = response.json()
    assert account["id"].startswith("acc_")
    assert account["serviceID"] == "openai"
    assert account["description"] == "work key"
    assert account["active"] is True  # the first account of a service becomes active
    assert account["credential"]["type"] == "api"
    assert account["credential"]["masked"] == "sk-…WXYZ"
    assert account["credential"]["fingerprint"].startswith("sha256:")
    assert "key" not in account["credential"]
    assert set(account["time"]) == {"created", "updated"}


def test_it_creates_an_oauth_account(alice):
    response = alice.post("/api/auth", json={
        "serviceID": "anthropic",
        "credential": {"type": "oauth", "refresh": "refresh-token-123456789", "access": "access-token-abcdefghij",
                       "expires": 1900000000000},
    })
    assert response.status_code == 200, response.text
    credential = response.json()["credential"]
    assert credential["type"] == "oauth"
    assert credential["expires"] == 1900000000000
    assert "access" not in credential and "refresh" not in credential
    assert "access-token-abcdefghij" not in response.text and "refresh-token-123456789" not in response.text


def test_api_metadata_is_kept(alice):
    response = create(alice, credential={"type": "api", "key": KEY, "metadata": {"org": "acme"}})
    assert response.json()["credential"]["metadata"] == {"org": "acme"}


@pytest.mark.parametrize("body", [
    {},
    {"serviceID": "openai"},
    {"credential": {"type": "api", "key": KEY}},
    {"serviceID": "", "credential": {"type": "api", "key": KEY}},
    {"serviceID": "\x1e\u00a0 ", "credential": {"type": "api", "key": KEY}},
    {"serviceID": "openai", "credential": "sk-plain-string"},
    {"serviceID": "openai", "credential": {"type": "api"}},
    {"serviceID": "openai", "credential": {"type": "api", "key": ""}},
    {"serviceID": "openai", "credential": {"type": "api", "key": 42}},
    {"serviceID": "openai", "credential": {"type": "api", "key": KEY, "metadata": {"a": 1}}},
    {"serviceID": "openai", "credential": {"type": "password", "key": KEY}},
    {"serviceID": "openai", "credential": {"type": "oauth", "refresh": "r", "access": "a"}},
    {"serviceID": "openai", "credential": {"type": "oauth", "refresh": "r", "access": "a", "expires": -1}},
    {"serviceID": "openai", "credential": {"type": "oauth", "refresh": "r", "access": "a", "expires": "soon"}},
    {"serviceID": "openai", "credential": {"type": "api", "key": KEY}, "active": "maybe"},
    {"serviceID": ["openai"], "credential": {"type": "api", "key": KEY}},
])
def test_it_rejects_malformed_create_input(alice, body):
    response = alice.post("/api/auth", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["name"] == "BadRequestError"


def test_doc_states_that_a_blank_service_id_is_refused(alice):
    """The fuzzer once sent serviceID "\\x1e\\xa0", which /doc allowed and the server refused as blank."""
    doc = alice.get("/doc").json()
    schema = doc["paths"]["/api/auth"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    patterns = [part["pattern"] for part in schema["properties"]["serviceID"]["allOf"]]
    assert not all(re.search(pattern, "\x1e\u00a0 ") for pattern in patterns)
    assert all(re.search(pattern, " openai") for pattern in patterns)
    assert alice.post("/api/auth", json={"serviceID": " openai", "credential": {"type": "api", "key": KEY}}
                      ).json()["serviceID"] == " openai"  # kept as sent


def test_it_rejects_a_non_object_body(alice):
    assert alice.post("/api/auth", json=["x"]).status_code == 400
    assert alice.post("/api/auth", content=b"{not json", headers={"content-type": "application/json"}).status_code == 400


def test_list_includes_the_active_mapping_and_filters_by_service(alice):
    openai = create(alice).json()
    anthropic = create(alice, serviceID="anthropic").json()
    second = create(alice, description="spare").json()

    listing = alice.get("/api/auth").json()
    assert [a["id"] for a in listing["accounts"]] == [anthropic["id"], openai["id"], second["id"]]
    assert listing["active"] == {"openai": openai["id"], "anthropic": anthropic["id"]}

    only = alice.get("/api/auth", params={"serviceID": "anthropic"}).json()
    assert [a["id"] for a in only["accounts"]] == [anthropic["id"]]


def test_get_update_and_delete(alice):
    account = create(alice).json()
    url = f"/api/auth/{account['id']}"
    assert alice.get(url).json() == account

    updated = alice.patch(url, json={"description": "renamed"})
    assert updated.status_code == 200
    assert updated.json()["description"] == "renamed"
    assert updated.json()["credential"]["masked"] == "sk-…WXYZ"

    new_key = "sk-new-key-00000000000000000QRST"
    replaced = alice.patch(url, json={"credential": {"type": "api", "key": new_key}}).json()
    assert replaced["credential"]["masked"] == "sk-…QRST"
    assert replaced["credential"]["fingerprint"] != account["credential"]["fingerprint"]

    assert alice.delete(url).json() is True
    assert alice.get(url).status_code == 404
    assert alice.delete(url).status_code == 404


@pytest.mark.parametrize("body", [
    {"credential": {"type": "api"}},
    {"credential": None},
    {"description": 5},
    {"description": None},
])
def test_it_rejects_malformed_update_input(alice, body):
    account = create(alice).json()
    response = alice.patch(f"/api/auth/{account['id']}", json=body)
    assert response.status_code == 400, response.text


def test_unknown_and_malformed_ids(alice):
    assert alice.get("/api/auth/acc_00000000000000000000000000").status_code == 404
    assert alice.patch("/api/auth/acc_00000000000000000000000000", json={}).status_code == 404
    assert alice.post("/api/auth/acc_00000000000000000000000000/activate").status_code == 404
    assert alice.get("/api/auth/not-an-account").status_code == 400
    assert alice.post("/api/auth/ses_123/activate").status_code == 400


def test_bob_cannot_read_or_change_alices_accounts(alice, bob):
    account = create(alice).json()
    url = f"/api/auth/{account['id']}"
    assert bob.get(url).status_code == 404
    assert bob.patch(url, json={"description": "mine now"}).status_code == 404
    assert bob.post(f"{url}/activate").status_code == 404
    assert bob.delete(url).status_code == 404
    assert bob.get("/api/auth").json() == {"accounts": [], "active": {}}
    assert alice.get(url).json()["description"] == "work key"


def test_anonymous_callers_get_401(anon):
    assert anon.get("/api/auth").status_code == 401
    assert anon.post("/api/auth", json={}).status_code == 401
    assert anon.get("/api/auth/acc_00000000000000000000000000").status_code == 401
    assert anon.patch("/api/auth/acc_00000000000000000000000000", json={}).status_code == 401
    assert anon.delete("/api/auth/acc_00000000000000000000000000").status_code == 401
    assert anon.post("/api/auth/acc_00000000000000000000000000/activate").status_code == 401
