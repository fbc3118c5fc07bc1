"""The store's writes of messages and parts (sessions_app/store/messages.py): a record the runner has just
made is inserted in one statement, and every case that is not that falls back to the checked path."""
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from agentserver import ids
from agentserver.errors import BadRequest, NotFound
from tests.sessions.helpers import add_message, create_session


def _session(persona):
    from sessions_app.models import Session

    return Session.objects.get(id=create_session(persona)["id"])


def _part(session, message_id: str, text: str, part_id: str | None = None) -> dict:
    return {"id": part_id or ids.ascending("prt"), "sessionID": session.id, "messageID": message_id,
            "type": "text", "text": text}


def _on_parts(captured) -> list[str]:
    """The statements that touched the part and message tables (the event log's own insert aside)."""
    return [q["sql"].split()[0] for q in captured.captured_queries
            if "sessions_app_part" in q["sql"] or "sessions_app_message" in q["sql"]]


def test_a_new_part_is_one_insert_and_a_stored_one_one_update(alice):
    from sessions_app.models import Part
    from sessions_app.store.messages import part_save

    session = _session(alice)
    message_id = add_message(session.id)["info"]["id"]
    part = _part(session, message_id, "first")
    with CaptureQueriesContext(connection) as new:
        part_save(session=session, part=part, new=True)
    with CaptureQueriesContext(connection) as stored:
        part_save(session=session, part={**part, "text": "second"})
    assert _on_parts(new) == ["INSERT"]
    assert _on_parts(stored) == ["UPDATE"]
    assert Part.objects.get(id=part["id"]).data["text"] == "second"


def test_a_new_id_that_exists_after_all_is_updated_not_doubled(alice):
    from sessions_app.models import Part
    from sessions_app.store.messages import part_save

    session = _session(alice)
    message_id = add_message(session.id)["info"]["id"]
    part = _part(session, message_id, "before")
    part_save(session=session, part=part)
    part_save(session=session, part={**part, "text": "after"}, new=True)  # a re-run call's part
    assert [p.data["text"] for p in Part.objects.filter(id=part["id"])] == ["after"]


def test_a_new_part_inside_a_transaction_takes_the_checked_path(alice):
    from sessions_app.models import Part
    from sessions_app.store.messages import part_save

    session = _session(alice)
    message_id = add_message(session.id)["info"]["id"]
    part = _part(session, message_id, "inside")
    with transaction.atomic():
        part_save(session=session, part=part, new=True)
        with pytest.raises(NotFound):  # the transaction stays usable after a refused write
            part_save(session=session, part=_part(session, "msg_gone", "x"), new=True)
    assert Part.objects.get(id=part["id"]).data["text"] == "inside"


def test_a_new_part_of_a_message_that_is_gone_is_not_found_and_stores_nothing(alice):
    from sessions_app.models import Message, Part
    from sessions_app.store.messages import part_save

    session = _session(alice)
    message_id = add_message(session.id)["info"]["id"]
    Message.objects.filter(id=message_id).delete()
    part = _part(session, message_id, "orphan")
    with pytest.raises(NotFound):
        part_save(session=session, part=part, new=True)
    assert not Part.objects.filter(id=part["id"]).exists()


def test_a_new_message_whose_id_another_session_holds_is_refused(alice):
    from sessions_app.models import Message
    from sessions_app.store.messages import message_save

    mine, other = _session(alice), _session(alice)
    taken = add_message(other.id)["info"]
    with pytest.raises(BadRequest, match="belongs to another session"):
        message_save(session=mine, info={**taken, "sessionID": mine.id, "text": "x"}, new=True)
    assert Message.objects.get(id=taken["id"]).session_id == other.id
    assert Message.objects.get(id=taken["id"]).info == {**taken, "sessionID": other.id}


def test_the_queue_behind_an_answered_prompt_leaves_no_reply_notes_out(alice):
    """runtime/message_queue.queued_after: what a waiting prompt asks before it lets its request go."""
    from sessions_app.runtime.message_queue import next_pending, queued_after
    from sessions_app.store.messages import NO_REPLY_KEY

    session = _session(alice)
    answered = add_message(session.id)["info"]["id"]
    add_message(session.id, role="assistant", parent_id=answered)
    assert not queued_after(session.id, answered)
    add_message(session.id, **{NO_REPLY_KEY: True})  # context for later, never answered
    assert not queued_after(session.id, answered) and next_pending(session.id) is None
    queued = add_message(session.id)["info"]["id"]
    assert queued_after(session.id, answered) and next_pending(session.id).id == queued
    assert not queued_after(session.id, queued)
    other = _session(alice)
    add_message(other.id)  # another session's prompt is not this one's queue
    assert not queued_after(session.id, queued)
