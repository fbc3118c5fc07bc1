"""Provider auth methods and OAuth (PKCE, authorization-code with a pasted code).

Our server is not on the user's machine, so the redirect cannot land on us: the user opens `url`, signs in,
and pastes the code (or the whole redirected URL) into `provider.oauth.callback`. The PKCE verifier waits,
encrypted, in OAuthPending between the two calls (any worker can finish the flow)."""
from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
from django.db import transaction

from agentserver.clock import now_ms
from agentserver.errors import BadRequest, NotFound
from agentserver.http.api import json_integer
from providers_app import store

PENDING_TTL_MS = 10 * 60 * 1000


@dataclass(frozen=True)
class OAuthMethod:
    label: str
    authorize_url: str
    token_url: str
    client_id: str
    redirect_uri: str
    scope: str
    token_format: str = "form"          # "form" | "json"
    extra_params: tuple = ()
    creates_api_key: str | None = None  # URL that turns the OAuth token into an API key


OPENAI_CHATGPT = OAuthMethod(
    label="ChatGPT Pro/Plus (browser)",
    authorize_url="https://auth.openai.com/oauth/authorize", token_url="https://auth.openai.com/oauth/token",
    client_id="app_EMoamEEZ73f0CkXaXp7hrann", redirect_uri="http://localhost:1455/auth/callback",
    scope="openid profile email offline_access",
    extra_params=(("id_token_add_organizations", "true"), ("codex_cli_simplified_flow", "true"),
                  ("originator", "opencode")),
)
_ANTHROPIC = dict(token_url="https://console.anthropic.com/v1/oauth/token",
                  client_id="9d1c250a-e61b-44d9-88ed-5944d1962f5e",
                  redirect_uri="https://console.anthropic.com/oauth/code/callback",
                  scope="org:create_api_key user:profile user:inference", token_format="json",
                  extra_params=(("code", "true"),))
ANTHROPIC_MAX = OAuthMethod(label="Claude Pro/Max", authorize_url="https://claude.ai/oauth/authorize", **_ANTHROPIC)
ANTHROPIC_CONSOLE = OAuthMethod(label="Create an API Key", authorize_url="https://console.anthropic.com/oauth/authorize",
                                creates_api_key="https://api.anthropic.com/api/oauth/claude_cli/create_api_key",
                                **_ANTHROPIC)
API_KEY = {"type": "api", "label": "Manually enter API Key"}

# providerID → methods in index order: an OAuthMethod, or the plain API-key method.
METHODS: dict[str, list] = {
    "openai": [OPENAI_CHATGPT, API_KEY],
    "anthropic": [ANTHROPIC_MAX, ANTHROPIC_CONSOLE, API_KEY],
}


def auth_methods() -> dict[str, list[dict]]:
    """`GET /provider/auth`: ProviderAuthMethod lists `{type, label}`."""
    return {provider_id: [{"type": "oauth", "label": m.label} if isinstance(m, OAuthMethod) else dict(m)
                          for m in methods]
            for provider_id, methods in METHODS.items()}


def _oauth_method(provider_id: str, index) -> OAuthMethod:
    methods = METHODS.get(provider_id)
    if not methods:
        raise NotFound(f"Provider {provider_id} has no OAuth sign-in; use an API key")
    index = json_integer(index)
    if index is None or not 0 <= index < len(methods) or not isinstance(methods[index], OAuthMethod):
        raise NotFound(f"Auth method {index!r} of provider {provider_id} is not an OAuth method")
    return methods[index]


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@transaction.atomic
def oauth_authorize(*, user, provider_id: str, method: int) -> dict:
    """Start a PKCE flow: `{url, method: "code", instructions}`."""
    from auth_app import crypto

    chosen = _oauth_method(provider_id, method)
    verifier, challenge = _pkce()
    state = secrets.token_urlsafe(32)
    params = {"response_type": "code", "client_id": chosen.client_id, "redirect_uri": chosen.redirect_uri,
              "scope": chosen.scope, "code_challenge": challenge, "code_challenge_method": "S256",
              "state": state, **dict(chosen.extra_params)}
    store.sign_in_started(user=user, provider_id=provider_id, method=method, state=state,
                          secret=crypto.encrypt_json({"verifier": verifier}))
    return {"url": f"{chosen.authorize_url}?{urlencode(params)}", "method": "code",
            "instructions": "Open the link, sign in, then paste the code you are shown (or the whole URL your "
                            "browser was sent to) to finish."}


def _split_code(raw: str) -> tuple[str, str | None]:
    """Accept a bare code, `code#state` (Anthropic's page) or the redirected URL (OpenAI's localhost page)."""
    raw = raw.strip()
    if raw.startswith(("http://", "https://")):
        query = parse_qs(urlparse(raw).query)
        return (query.get("code") or [""])[0], (query.get("state") or [None])[0]
    if "#" in raw:
        code, state = raw.split("#", 1)
        return code, state
    return raw, None


def _exchange(chosen: OAuthMethod, code: str, state: str, verifier: str) -> dict:
    payload = {"grant_type": "authorization_code", "code": code, "redirect_uri": chosen.redirect_uri,
               "client_id": chosen.client_id, "code_verifier": verifier}
    try:
        if chosen.token_format == "json":
            response = httpx.post(chosen.token_url, json={**payload, "state": state}, timeout=20)
        else:
            response = httpx.post(chosen.token_url, data=payload, timeout=20)
    except httpx.HTTPError as exc:
        raise BadRequest(f"Token exchange failed: {exc.__class__.__name__}") from exc
    if response.status_code != 200:
        raise BadRequest(f"Token exchange failed: the provider answered {response.status_code}")
    tokens = response.json()
    if not isinstance(tokens, dict) or not tokens.get("access_token"):
        raise BadRequest("Token exchange failed: no access token in the answer")
    if chosen.creates_api_key:
        try:
            made = httpx.post(chosen.creates_api_key, headers={"Authorization": f"Bearer {tokens['access_token']}"},
                              timeout=20)
            key = made.json().get("raw_key") if made.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            raise BadRequest(f"Creating the API key failed: {exc.__class__.__name__}") from exc
        if not key:
            raise BadRequest("Creating the API key failed")
        return {"type": "api", "key": key}
    expires_in = tokens.get("expires_in") if isinstance(tokens.get("expires_in"), (int, float)) else 3600
    return {"type": "oauth", "access": tokens["access_token"], "refresh": tokens.get("refresh_token") or "",
            "expires": now_ms() + int(expires_in * 1000)}


def oauth_callback(*, user, provider_id: str, method: int, code: str | None) -> bool:
    """Finish the flow: exchange the code and save the credential as the user's active account."""
    from auth_app import accounts, crypto

    chosen = _oauth_method(provider_id, method)
    if not code or not code.strip():
        raise BadRequest("code is required", issues=[{"path": ["code"], "message": "required"}])
    pending = store.sign_in_of(user=user, provider_id=provider_id)
    now = now_ms()
    if pending is None or pending.method != method or now - pending.time_created > PENDING_TTL_MS:
        raise BadRequest(f"No OAuth sign-in in progress for {provider_id} with method {method}; authorize first")
    code_value, state = _split_code(code)
    if state is not None and state != pending.state:
        raise BadRequest("The code belongs to another sign-in (state mismatch)")
    verifier = crypto.decrypt_json(pending.secret)["verifier"]
    credential = _exchange(chosen, code_value, pending.state, verifier)
    with transaction.atomic():
        accounts.account_create(user=user, service_id=provider_id, credential=credential,
                                description=chosen.label, active=True)
        store.sign_in_ended(pending)
    return True
