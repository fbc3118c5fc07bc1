"""Provider auth methods and the OAuth flow: a real PKCE authorization URL; bad requests are 400s, never 500s.
(The token exchange needs the provider's servers, which tests cannot reach.)"""
from urllib.parse import parse_qs, urlparse

from providers_app.models import OAuthPending


def test_it_lists_auth_methods_per_provider(alice):
    methods = alice.get("/provider/auth").json()
    assert methods["openai"][0] == {"type": "oauth", "label": "ChatGPT Pro/Plus (browser)"}
    assert {"type": "api", "label": "Manually enter API Key"} in methods["anthropic"]


def test_openai_authorize_returns_a_pkce_url(alice):
    response = alice.post("/provider/openai/oauth/authorize", json={"method": 0})
    assert response.status_code == 200
    body = response.json()
    assert body["method"] == "code" and body["instructions"]
    url = urlparse(body["url"])
    assert (url.scheme, url.netloc, url.path) == ("https", "auth.openai.com", "/oauth/authorize")
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["response_type"] == "code" and query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43 and query["state"]
    pending = OAuthPending.objects.get(owner=alice.user, provider_id="openai")
    assert pending.state == query["state"]
    assert query["code_challenge"] not in pending.secret  # the verifier is stored encrypted


def test_anthropic_authorize_returns_a_console_url(alice):
    body = alice.post("/provider/anthropic/oauth/authorize", json={"method": 1}).json()
    url = urlparse(body["url"])
    assert url.netloc == "console.anthropic.com"
    assert parse_qs(url.query)["redirect_uri"] == ["https://console.anthropic.com/oauth/code/callback"]


def test_a_provider_without_oauth_or_that_method_is_a_404(alice):
    response = alice.post("/provider/groq/oauth/authorize", json={"method": 0})
    assert response.status_code == 404 and response.json()["name"] == "NotFoundError"
    assert alice.post("/provider/openai/oauth/authorize", json={"method": 1}).status_code == 404  # the API method
    assert alice.post("/provider/openai/oauth/authorize", json={"method": 7}).status_code == 404


def test_malformed_authorize_input_is_a_400(alice):
    assert alice.post("/provider/openai/oauth/authorize").status_code == 400
    assert alice.post("/provider/openai/oauth/authorize", json={"method": "zero"}).status_code == 400
    assert alice.post("/provider/openai/oauth/authorize", json=[1]).status_code == 400


def test_a_callback_without_a_pending_flow_is_a_400(alice, bob):
    alice.post("/provider/openai/oauth/authorize", json={"method": 0})
    response = bob.post("/provider/openai/oauth/callback", json={"method": 0, "code": "abc"})
    assert response.status_code == 400 and "authorize first" in response.json()["data"]["message"]


def test_a_callback_without_code_or_with_a_foreign_state_is_a_400_and_for_no_oauth_404(alice):
    alice.post("/provider/openai/oauth/authorize", json={"method": 0})
    assert alice.post("/provider/openai/oauth/callback", json={"method": 0}).status_code == 400
    response = alice.post("/provider/openai/oauth/callback", json={
        "method": 0, "code": "http://localhost:1455/auth/callback?code=abc&state=someone-else"})
    assert response.status_code == 400 and "state" in response.json()["data"]["message"]
    assert alice.post("/provider/groq/oauth/callback", json={"method": 0, "code": "x"}).status_code == 404
