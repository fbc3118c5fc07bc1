"""Shared helpers of the provider tests: a runtime context for a persona and a collector for stream_chat.

`collect` is synchronous (the persona fixtures and config writes are sync Django code); it runs stream_chat
in a fresh event loop, exactly as an async caller would."""
import asyncio

from projects_app.contexts import context_for_directory
from providers_app.llm import stream_chat
from providers_app.stream import Finish, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart


def context_of(persona):
    return context_for_directory(persona.user, str(persona.repo))


def collect(persona, **kwargs) -> list:
    return asyncio.run(collect_async(context_of(persona), **kwargs))


async def collect_async(context, *, messages=None, tools=None, system=None, provider_id="fake",
                        model_id="fake-model", **kwargs) -> list:
    events = []
    async for event in stream_chat(
        context=context, provider_id=provider_id, model_id=model_id,
        system=system if system is not None else ["You are a test."],
        messages=messages if messages is not None else [{"role": "user", "content": [{"type": "text",
                                                                                       "text": "hi"}]}],
        tools=tools or [], **kwargs,
    ):
        events.append(event)
    return events


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def of_type(events, cls) -> list:
    return [e for e in events if isinstance(e, cls)]


__all__ = ["Finish", "ReasoningDelta", "TextDelta", "ToolCallDelta", "ToolCallEnd", "ToolCallStart", "collect",
           "context_of", "of_type", "reasoning_of", "text_of"]
