"""Session title from the first prompt (reference §5.2 "Title generation"): root sessions whose title is
still the default, when exactly one real user message exists; the hidden `title` agent on the small model."""
from __future__ import annotations

import asyncio
import logging
import re

from django.db import transaction

from agentserver.workers.loop import free_db
from sessions_app.models import Session
from sessions_app.runtime import metering
from sessions_app.store.messages import user_messages_with_parts
from sessions_app.store.rows import session_row

log = logging.getLogger(__name__)
DEFAULT_TITLE = re.compile(r"^(New session|Child session) - \d{4}-\d\d-\d\dT")
THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def clean_title(text: str) -> str:
    text = THINK.sub("", text)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= 100 else line[:97] + "..."


def _wanted(session_id: str) -> tuple[Session, str] | None:
    session = session_row(session_id)
    if session is None or session.parent_id or not DEFAULT_TITLE.match(session.title or ""):
        return None
    # Users whose parts are all synthetic (a session.shell run, a compaction "continue") do not count.
    users = [parts for _, parts in user_messages_with_parts(session.id, limit=50)
             if not all(p.data.get("synthetic") for p in parts)]
    if len(users) != 1:
        return None
    texts = [p.data.get("text") or "" for p in users[0] if p.type == "text" and not p.data.get("synthetic")]
    first = "\n".join(t for t in texts if t).strip()
    return (session, first) if first else None


def _small_model(context, config: dict, fallback: tuple[str, str]) -> tuple[str, str]:
    from providers_app import models_catalog

    ref = models_catalog.parse_model_ref(config.get("small_model") or "")
    if ref:
        return ref
    try:
        return models_catalog.small_model(context=context, config=config)
    except Exception:
        return fallback


def _title_inputs(session_id: str, context, config: dict,
                  fallback: tuple[str, str]) -> tuple[Session, str, tuple[str, str]] | None:
    """(One call.) The session and its first prompt's text when it still wants a title (_wanted), with the
    model that makes it."""
    wanted = _wanted(session_id)
    return None if wanted is None else (*wanted, _small_model(context, config, fallback))


def _counted_with_title(session_id: str, call, title: str) -> None:
    """The title's model call counted and the title set, in one transaction."""
    with transaction.atomic():
        metering.count(call)
        if title:
            try:
                _set_title(session_id, title)
            except Session.DoesNotExist:  # deleted meanwhile (a read, no failed statement): the call still counts
                pass


def _set_title(session_id: str, title: str) -> None:
    from sessions_app.store.sessions import session_set

    session = session_row(session_id)
    if session is not None and DEFAULT_TITLE.match(session.title or ""):
        session_set(session=session, title=title)


async def generate_title(*, session_id: str, context, config: dict, model: tuple[str, str]) -> None:
    from providers_app.llm import stream_chat
    from providers_app.stream import TextDelta
    from sessions_app.runtime.agents import TITLE_PROMPT

    try:
        wanted = await free_db(_title_inputs)(session_id, context, config, model)
        if wanted is None:
            return
        session, first, (provider_id, model_id) = wanted
        call = metering.title_call(session, provider_id, model_id)  # checks the budgets before the call
        chunks = []
        try:
            async for event in stream_chat(context=context, provider_id=provider_id, model_id=model_id,
                                           system=[TITLE_PROMPT], tools=[], max_output=1024, config=config,
                                           meter=call.meter, messages=[{"role": "user", "content": [
                                               {"type": "text", "text": "Generate a title for this conversation:\n"},
                                               {"type": "text", "text": first}]}]):
                if isinstance(event, TextDelta):
                    chunks.append(event.text)
        except BaseException as error:
            await metering.record(call.ended("aborted" if isinstance(error, asyncio.CancelledError) else "error"))
            raise
        await free_db(_counted_with_title)(session_id, call.ended("completed"), clean_title("".join(chunks)))
    except Exception as error:  # a title is a nicety: never let it disturb the turn
        log.info("title generation for %s failed: %s", session_id, error)
