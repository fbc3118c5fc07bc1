"""SDK and transport exceptions → ProviderCallError, the same way for both protocols."""
from __future__ import annotations

import json

import httpx
import httpx2

from providers_app.errors import ProviderCallError, retryable_status

MAX_BODY = 4000
# Headers worth keeping for the runner (rate limits, retry hints, request ids); never auth.
KEPT_HEADER_PREFIXES = ("retry-after", "x-ratelimit", "anthropic-ratelimit", "x-request-id", "request-id",
                        "content-type")


def _headers(response) -> dict:
    if response is None:
        return {}
    return {k.lower(): v for k, v in response.headers.items() if k.lower().startswith(KEPT_HEADER_PREFIXES)}


def _body_text(response) -> str | None:
    if response is None:
        return None
    try:
        return response.text[:MAX_BODY]
    except Exception:  # a streamed response whose body was never read
        return None


def _message_from(body: str | None, fallback: str) -> str:
    try:
        data = json.loads(body or "")
    except ValueError:
        return fallback
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return data["message"]
    return fallback


def to_api_error(exc: BaseException, sdk) -> ProviderCallError | None:
    """The ProviderCallError for an exception of `sdk` (the openai or anthropic module) or of the transport;
    None when it is not a provider failure (a bug of ours must surface as itself)."""
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        response = getattr(exc, "response", None)
        body = _body_text(response)
        if body is None and getattr(exc, "body", None) is not None:
            body = json.dumps(exc.body) if not isinstance(exc.body, str) else exc.body
        retryable = retryable_status(status)
        # Errors sent inside a 200 stream (Anthropic `overloaded_error`) carry the 200 of the stream.
        if status == 200:
            retryable = "overloaded" in (body or "") or "rate_limit" in (body or "") or "api_error" in (body or "")
        return ProviderCallError(_message_from(body, str(exc) or f"HTTP {status}"), status_code=status,
                        is_retryable=retryable, response_headers=_headers(response), response_body=body)
    if isinstance(exc, (sdk.APIConnectionError, httpx.HTTPError, httpx2.HTTPError, ConnectionError)):
        message = str(exc) or exc.__class__.__name__
        return ProviderCallError(f"Connection to the provider failed: {message}", is_retryable=True)
    if isinstance(exc, sdk.APIError):
        return ProviderCallError(str(exc) or exc.__class__.__name__, is_retryable=False)
    return None
