"""OAuth for remote MCP servers (authorization code + PKCE).

start: discover the authorization server (RFC 9728 protected-resource metadata when the server publishes it,
then RFC 8414 / OIDC metadata, with the URL candidates of the `mcp` package), register a client dynamically
when no clientId is configured, and return the authorization URL. The verifier and client waits, encrypted,
in OAuthPending (service `mcp:<name>`), so any worker can finish the flow.
callback: exchange the code; the tokens become the user's active auth account of service `mcp:<name>`
(encrypted by auth_app). delete: remove those accounts."""
from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import urlencode, urlparse

import httpx
from django.db import transaction

from agentserver.clock import now_ms
from agentserver.errors import Conflict
from audit_app.log import record
from auth_app import crypto
from providers_app import store
from providers_app.mcp import configs, registry

DEFAULT_REDIRECT = "http://127.0.0.1:19876/mcp/oauth/callback"
HTTP_SECONDS = 10


def _oauth_server(context, name: str) -> registry.Server:
    server = registry.server_get(context, name)
    if server.config is None or not configs.uses_oauth(server.config):
        raise Conflict(f"MCP server {name} does not support OAuth", error="unsupported_oauth")
    return server


def _send(method: str, url: str, **options) -> httpx.Response | None:
    """The answer, or None when there is none: a URL httpx cannot even send to (a bad IPv6 literal, a host IDNA
    refuses: InvalidURL and UnicodeError, outside HTTPError) is as unreachable as a host that does not answer."""
    try:
        return httpx.request(method, url, timeout=HTTP_SECONDS, **options)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError):
        return None


def _get_json(url: str) -> dict | None:
    response = _send("GET", url, headers={"MCP-Protocol-Version": "2025-06-18"})
    if response is None or response.status_code != 200:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def discover(server_url: str) -> dict:
    """The authorization server metadata for an MCP server URL; 400 when none can be found."""
    from mcp.client.auth.utils import (
        build_oauth_authorization_server_metadata_discovery_urls,
        build_protected_resource_metadata_discovery_urls,
    )

    auth_server = None
    try:
        for url in build_protected_resource_metadata_discovery_urls(None, server_url):
            resource = _get_json(url)
            if resource and isinstance(resource.get("authorization_servers"), list) \
                    and resource["authorization_servers"]:
                auth_server = str(resource["authorization_servers"][0])
                break
        for url in build_oauth_authorization_server_metadata_discovery_urls(auth_server, server_url):
            metadata = _get_json(url)
            if metadata and isinstance(metadata.get("authorization_endpoint"), str) \
                    and isinstance(metadata.get("token_endpoint"), str):
                return metadata
    except ValueError:  # urlparse refuses the URL (an unclosed IPv6 bracket)
        pass
    raise Conflict(f"No OAuth authorization server metadata found for {server_url}")


def _register(metadata: dict, redirect_uri: str) -> dict:
    endpoint = metadata.get("registration_endpoint")
    if not isinstance(endpoint, str):
        raise Conflict("The server does not support dynamic client registration; set oauth.clientId in the config",
                         error="needs_client_registration")
    body = {"client_name": "agentserver", "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}
    response = _send("POST", endpoint, json=body)
    try:
        data = response.json() if response is not None and response.status_code in (200, 201) else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
        raise Conflict("Dynamic client registration failed")
    return {"client_id": data["client_id"], "client_secret": data.get("client_secret")}


def _service(name: str) -> str:
    return registry.service_id(name)


def oauth_start(*, context, name: str) -> dict:
    server = _oauth_server(context, name)
    oauth = server.config.get("oauth") if isinstance(server.config.get("oauth"), dict) else {}
    metadata = discover(server.config["url"])
    redirect_uri = oauth.get("redirectUri") or DEFAULT_REDIRECT
    client = ({"client_id": oauth["clientId"], "client_secret": oauth.get("clientSecret")} if oauth.get("clientId")
              else _register(metadata, redirect_uri))
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(24)
    params = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect_uri,
              "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
              "resource": server.config["url"]}
    if oauth.get("scope"):
        params["scope"] = oauth["scope"]
    secret = {"verifier": verifier, "redirect_uri": redirect_uri, "token_endpoint": metadata["token_endpoint"],
              "resource": server.config["url"], **client}
    store.sign_in_started(user=context.user, provider_id=_service(name), method=0, state=state,
                          secret=crypto.encrypt_json(secret))
    endpoint = metadata["authorization_endpoint"]
    separator = "&" if urlparse(endpoint).query else "?"
    return {"authorizationUrl": f"{endpoint}{separator}{urlencode(params)}", "oauthState": state}


def _exchange(pending: dict, code: str) -> dict:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": pending["redirect_uri"],
            "client_id": pending["client_id"], "code_verifier": pending["verifier"], "resource": pending["resource"]}
    if pending.get("client_secret"):
        form["client_secret"] = pending["client_secret"]
    response = _send("POST", pending["token_endpoint"], data=form, headers={"Accept": "application/json"})
    try:
        data = response.json() if response is not None and response.status_code == 200 else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("access_token"), str) or not data["access_token"]:
        raise Conflict("Token exchange failed")
    return data


def oauth_callback(*, context, name: str, code: str) -> dict:
    from auth_app.accounts import account_create, accounts_forget

    _oauth_server(context, name)
    row = store.sign_in_of(user=context.user, provider_id=_service(name))
    if row is None:
        raise Conflict(f"No OAuth flow in progress for MCP server {name}; start one first")
    try:
        pending = crypto.decrypt_json(row.secret)
    except crypto.CredentialDecryptError:
        raise Conflict("The pending OAuth flow cannot be read; start a new one") from None
    tokens = _exchange(pending, code)
    expires_in = tokens.get("expires_in")
    expires = now_ms() + int(float(expires_in) * 1000) if isinstance(expires_in, (int, float)) else 0
    credential = {"type": "oauth", "access": tokens["access_token"],
                  # auth accounts require a refresh string; servers without refresh tokens get a marker.
                  "refresh": tokens.get("refresh_token") or "-", "expires": expires}
    with transaction.atomic():
        accounts_forget(user=context.user, service_id=_service(name))
        account_create(user=context.user, service_id=_service(name), credential=credential,
                       description=f"MCP server {name}", active=True)
        store.sign_in_ended(row)
        record(action="mcp.authorized", object_type="mcp", object_id=name, details={"project": context.project_id})
    registry.forget_connections(context, name)
    return registry.server_status(context=context, name=name)


def oauth_delete(*, context, name: str) -> dict:
    from auth_app.accounts import accounts_forget

    registry.server_get(context, name)
    with transaction.atomic():
        accounts_forget(user=context.user, service_id=_service(name))
        store.sign_ins_dropped(user=context.user, provider_id=_service(name))
    registry.forget_connections(context, name)
    return {"success": True}
