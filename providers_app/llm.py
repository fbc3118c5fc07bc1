"""The one interface the agent loop calls: `stream_chat(...)` streams a model call and yields normalized
events (providers_app.stream). The wire protocol follows the provider's npm package: Anthropic messages for
`@ai-sdk/anthropic`, OpenAI chat-completions for everything else.

Errors: ProviderAuthError (no credential), ProviderCallError (provider said no or the connection failed). The SDKs'
own retries are off; the runner retries what `is_retryable` allows. Cancelling the consuming task closes the
HTTP stream."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from agentserver.workers.loop import db
from providers_app import credentials, models_catalog, tls
from providers_app.errors import ProviderAuthError, ProviderCallError
from providers_app.stream import CallMeter, StreamEvent

PLACEHOLDER_KEY = "agentserver-no-key"  # keyless local endpoints; the SDKs insist on some key


@dataclass(frozen=True)
class PreparedCall:
    model: models_catalog.ModelInfo
    credential: dict
    credential_source: str = "none"   # credentials.credential_and_source
    meter: CallMeter | None = None    # the wire protocol writes the usage it receives here


def prepare_call(*, context, provider_id: str, model_id: str, config: dict | None = None) -> PreparedCall:
    """Resolve the model and its credential (database access: call from a thread in async code). `config`:
    the context's effective config when the caller has it already."""
    entry = models_catalog.provider_entry(context, provider_id, config=config, accounts=False)
    info = models_catalog.resolve_model(context=context, provider_id=provider_id, model_id=model_id,
                                        entries={provider_id: entry} if entry is not None else {})
    credential, source = credentials.credential_and_source(context.user, entry.record, entry.options)
    if credential is None:
        if not (entry.custom and entry.options.get("baseURL")):
            env = ", ".join(entry.record.get("env") or [])
            hint = f" or set {env} on the server" if env else ""
            raise ProviderAuthError(provider_id, f"No API key for provider {provider_id}: add an auth account{hint}")
        credential = {"type": "api", "key": PLACEHOLDER_KEY}
    if not info.base_url and info.protocol == "openai":
        raise ProviderCallError(f"Provider {provider_id} has no OpenAI-compatible endpoint; set "
                       f"provider.{provider_id}.options.baseURL in the config", is_retryable=False)
    return PreparedCall(model=info, credential=credential, credential_source=source)


def _metered_call(*, meter: CallMeter, **prepare) -> PreparedCall:
    """The call prepared (prepare_call), its meter admitting it first and told when it is ready to go out."""
    if meter.admit is not None:
        meter.admit()
    call = prepare_call(**prepare)
    meter.prepared, meter.credential = True, call.credential_source
    meter.prices = dict(call.model.cost or {})
    if meter.on_request is not None:
        meter.on_request()
    return call


async def stream_chat(*, context, provider_id: str, model_id: str, system: list[str], messages: list[dict],
                      tools: list[dict], temperature: float | None = None, max_output: int | None = None,
                      headers: dict | None = None, config: dict | None = None,
                      meter: CallMeter | None = None) -> AsyncIterator[StreamEvent]:
    """`meter`: filled with who pays, the prices and the usage received so far (usage accounting)."""
    meter = meter if meter is not None else CallMeter()
    # db(): the connection goes back to the pool before the stream, which may take minutes (a runner held
    # one through every model call, and 32 streaming sessions starved a pool of 16).
    call = await db(_metered_call)(context=context, provider_id=provider_id, model_id=model_id, config=config,
                                   meter=meter)
    call = PreparedCall(model=call.model, credential=call.credential, credential_source=call.credential_source,
                        meter=meter)
    protocol_stream = await _protocol_stream(call.model.protocol)
    async for event in protocol_stream(call, system=system, messages=messages, tools=tools,
                                       temperature=temperature, max_output=max_output, headers=headers or {}):
        yield event


_protocol_streams: dict[str, Callable] = {}


async def _protocol_stream(protocol: str) -> Callable:
    """The wire protocol's stream function. Its module imports the provider's SDK, which takes a while (0.7 s
    for openai, 2.8 s for anthropic on a quiet 2-core machine), and the shared TLS context loads the CA bundle:
    a worker's first model call does both in a thread, because on the loop they held every other request
    that long."""
    stream = _protocol_streams.get(protocol)
    if stream is None:
        stream = _protocol_streams[protocol] = await asyncio.to_thread(_import_protocol, protocol)
    return stream


def _import_protocol(protocol: str) -> Callable:
    tls.ssl_context()
    if protocol == "anthropic":
        from providers_app.wire_anthropic import stream
    else:
        from providers_app.wire_openai import stream
    return stream
