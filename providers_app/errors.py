"""Provider failures in the NamedError shapes of reference §3.4 (AssistantMessage.error, session.error)."""


class ProviderError(Exception):
    def named(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


class ProviderAuthError(ProviderError):
    """No usable credential for the provider; never retryable."""

    is_retryable = False

    def __init__(self, provider_id: str, message: str):
        super().__init__(message)
        self.provider_id = provider_id
        self.message = message

    def named(self) -> dict:
        return {"name": "ProviderAuthError", "data": {"providerID": self.provider_id, "message": self.message}}


class ProviderCallError(ProviderError):
    """The provider answered with an error or the connection failed (on the wire: opencode's "APIError"; the
    Python name differs so it is never confused with agentserver.errors.ApiError, our HTTP error base). 429,
    5xx and network failures are retryable; the runner does the backoff (the SDKs' own retries are off)."""

    def __init__(self, message: str, status_code: int | None = None, is_retryable: bool = False,
                 response_headers: dict | None = None, response_body: str | None = None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.is_retryable = is_retryable
        self.response_headers = response_headers or {}
        self.response_body = response_body

    def named(self) -> dict:
        data: dict = {"message": self.message, "isRetryable": self.is_retryable}
        if self.status_code is not None:
            data["statusCode"] = self.status_code
        if self.response_headers:
            data["responseHeaders"] = self.response_headers
        if self.response_body is not None:
            data["responseBody"] = self.response_body
        return {"name": "APIError", "data": data}


def retryable_status(status: int | None) -> bool:
    return status is not None and (status == 429 or status >= 500)
