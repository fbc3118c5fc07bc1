"""A scripted OpenID Connect provider: a real HTTP server on 127.0.0.1 that speaks the authorization-code
flow with PKCE (discovery, authorize, token, userinfo, JWKS) and signs RS256 ID tokens, as an external
identity provider would. Like the LLM, the identity provider is outside agentserver: this stands in for it.

The person "signed in at the provider" is `provider.identity` (claims: sub, email, email_verified,
preferred_username...): /authorize consents at once and redirects back with a code."""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.json_http import JsonRequestHandler

CLIENT_ID = "agentserver-test"
CLIENT_SECRET = "agentserver-test-secret"


class FakeIdentityProvider:
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(8)
        self.identity: dict = {}
        self.codes: dict[str, dict] = {}
        self.tokens: dict[str, dict] = {}
        self.requests: list[tuple[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def server_env(self, *, create_users: bool) -> dict:
        return {"AGENTSERVER_OIDC_ISSUER": self.issuer, "AGENTSERVER_OIDC_CLIENT_ID": CLIENT_ID,
                "AGENTSERVER_OIDC_CLIENT_SECRET": CLIENT_SECRET, "AGENTSERVER_OIDC_NAME": "Fake IdP",
                "AGENTSERVER_OIDC_CREATE_USERS": "1" if create_users else "0"}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def id_token(self, grant: dict) -> str:
        now = int(time.time())
        claims = {**grant["identity"], "iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 300,
                  "nonce": grant["nonce"]}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})

    def jwks(self) -> dict:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def _handler_for(provider: FakeIdentityProvider):
    class Handler(JsonRequestHandler):
        def do_GET(self):
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            provider.requests.append(("GET", url.path))
            if url.path == "/.well-known/openid-configuration":
                base = provider.issuer
                return self._json(200, {
                    "issuer": base, "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token", "userinfo_endpoint": f"{base}/userinfo",
                    "jwks_uri": f"{base}/jwks", "response_types_supported": ["code"],
                    "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                    "code_challenge_methods_supported": ["S256"]})
            if url.path == "/jwks":
                return self._json(200, provider.jwks())
            if url.path == "/authorize":
                if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
                    return self._json(400, {"error": "invalid_request"})
                code = secrets.token_urlsafe(16)
                provider.codes[code] = {"identity": dict(provider.identity), "nonce": query.get("nonce"),
                                        "redirect_uri": query["redirect_uri"],
                                        "challenge": query.get("code_challenge")}
                self.send_response(302)
                self.send_header("Location", f"{query['redirect_uri']}?"
                                 + urlencode({"code": code, "state": query.get("state", "")}))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if url.path == "/userinfo":
                grant = provider.tokens.get(self.headers.get("Authorization", "").removeprefix("Bearer "))
                return self._json(200, grant["identity"]) if grant else self._json(401, {"error": "invalid_token"})
            return self._json(404, {"error": "not_found"})

        def do_POST(self):
            provider.requests.append(("POST", self.path))
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if self.path != "/token":
                return self._json(404, {"error": "not_found"})
            grant = provider.codes.pop(form.get("code", ""), None)
            if (grant is None or form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET
                    or form.get("redirect_uri") != grant["redirect_uri"]
                    or (grant["challenge"] and _s256(form.get("code_verifier", "")) != grant["challenge"])):
                return self._json(400, {"error": "invalid_grant"})
            access = secrets.token_urlsafe(24)
            provider.tokens[access] = grant
            return self._json(200, {"access_token": access, "token_type": "Bearer", "expires_in": 300,
                                    "id_token": provider.id_token(grant)})

    return Handler
