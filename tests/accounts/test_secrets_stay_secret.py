"""Credentials are ciphertext in the database and never appear in a response or a log line."""
import json

from auth_app import crypto
from auth_app.models import AuthAccount

SECRET = "sk-live-SUPERSECRET-7a1f9c33e0d24b5e"
ACCESS = "oauth-access-SECRET-1111111111"
REFRESH = "oauth-refresh-SECRET-2222222222"


def test_the_database_holds_only_ciphertext(alice):
    account = alice.post("/api/auth", json={"serviceID": "openai",
                                            "credential": {"type": "api", "key": SECRET}}).json()
    row = AuthAccount.objects.get(id=account["id"])
    assert SECRET not in row.ciphertext
    assert SECRET not in row.masked and SECRET not in row.fingerprint
    assert SECRET[4:-4] not in json.dumps([row.ciphertext, row.masked, row.fingerprint, row.description])
    assert crypto.decrypt_json(row.ciphertext) == {"type": "api", "key": SECRET}


def test_no_response_or_log_line_carries_the_secret(alice, server):
    responses = []
    created = alice.post("/api/auth", json={"serviceID": "openai", "description": "d",
                                            "credential": {"type": "api", "key": SECRET, "metadata": {"o": "x"}}})
    responses.append(created)
    account_id = created.json()["id"]
    oauth = alice.post("/api/auth", json={"serviceID": "anthropic", "credential": {
        "type": "oauth", "access": ACCESS, "refresh": REFRESH, "expires": 1}})
    responses.append(oauth)
    responses.append(alice.get("/api/auth"))
    responses.append(alice.get(f"/api/auth/{account_id}"))
    responses.append(alice.patch(f"/api/auth/{account_id}", json={"credential": {"type": "api", "key": SECRET}}))
    responses.append(alice.post(f"/api/auth/{account_id}/activate"))
    # a rejected update must not echo the offending secret back either
    responses.append(alice.patch(f"/api/auth/{account_id}", json={"credential": {"type": "bogus", "key": SECRET}}))
    responses.append(alice.post("/api/auth", json={"serviceID": "", "credential": {"type": "api", "key": SECRET}}))
    responses.append(alice.delete(f"/api/auth/{oauth.json()['id']}"))
    responses.append(alice.delete(f"/api/auth/{account_id}"))

    for response in responses:
        assert response.status_code in (200, 400), response.text
        for secret in (SECRET, ACCESS, REFRESH):
            assert secret not in response.text
            assert secret not in str(response.headers)
    log = server.log()
    for secret in (SECRET, ACCESS, REFRESH):
        assert secret not in log
