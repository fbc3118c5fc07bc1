"""agentserver.db.sql's compile-once statements against the real database (SQLite or PostgreSQL): they read and
write what the ORM would, JSON and all."""
import pytest
from django.contrib.auth import get_user_model

from agentserver.db import sql
from sessions_app.models import Message, Session, Share
from sessions_app.store.rows import session_reload, session_row

pytestmark = pytest.mark.django_db


def _session(owner, session_id="ses_prepared0000000000000001", **fields) -> Session:
    return Session.objects.create(id=session_id, owner=owner, project_id="global", directory="/tmp",
                                  title="prepared", version="0", **fields)


def _message(session, message_id, role="user", **info) -> Message:
    return Message.objects.create(id=message_id, session=session, role=role,
                                  info={"id": message_id, "role": role, **info})


@pytest.fixture
def owner():
    return get_user_model().objects.create(username="prepared")


def test_a_query_returns_what_the_orm_returns_rows_values_and_json(owner):
    session = _session(owner, summary={"files": 2, "additions": 3}, tokens={"input": 7, "cache": {"read": 1}})
    by_id = sql.Query(lambda sid: Session.objects.filter(id=sid))
    row = by_id.first(session.id)
    orm = Session.objects.get(id=session.id)
    fields = [field.attname for field in Session._meta.concrete_fields]
    assert [getattr(row, name) for name in fields] == [getattr(orm, name) for name in fields]
    assert row.summary == {"files": 2, "additions": 3} and row._state.adding is False
    assert by_id.first("ses_nothing") is None

    for message_id in ("msg_a", "msg_b", "msg_c"):
        _message(session, message_id, text=f"text of {message_id}")
    after = sql.Query(lambda sid, after: Message.objects.filter(session_id=sid, id__gt=after).order_by("id")
                      .values_list("id", "info"))
    assert after.all(session.id, "msg_a") == [("msg_b", {"id": "msg_b", "role": "user", "text": "text of msg_b"}),
                                              ("msg_c", {"id": "msg_c", "role": "user", "text": "text of msg_c"})]
    newest = sql.Query(lambda sid: Message.objects.filter(session_id=sid).order_by("-id")
                       .values_list("id", flat=True)[:1])
    assert newest.first(session.id) == "msg_c"


def test_a_constant_the_orm_spells_per_backend_is_kept_and_arguments_still_bind(owner):
    session = _session(owner)
    _message(session, "msg_a")
    _message(session, "msg_b", _noReply=True)
    _message(session, "msg_c")
    wanting = sql.Query(lambda sid, after: Message.objects.filter(session_id=sid, id__gt=after)
                        .exclude(info__has_key="_noReply").order_by("id").values_list("id", flat=True))
    assert wanting.all(session.id, "") == ["msg_a", "msg_c"]
    assert wanting.all(session.id, "msg_a") == ["msg_c"]
    assert wanting.all("ses_other", "") == []


def test_update_writes_json_and_keys_only_where_every_field_matches(owner):
    session = _session(owner)
    message = _message(session, "msg_a")
    changed = sql.update(Message, {"id": "msg_a", "session": session}, {"info": {"id": "msg_a", "n": [1, "two"]}})
    assert changed == 1
    assert Message.objects.get(id="msg_a").info == {"id": "msg_a", "n": [1, "two"]}
    other = _session(owner, "ses_prepared0000000000000002")
    assert sql.update(Message, {"id": "msg_a", "session": other}, {"info": {}}) == 0
    assert sql.update(Message, {"id": "msg_a", "session_id": other.id}, {"role": "assistant"}) == 0
    assert Message.objects.get(id=message.id).info == {"id": "msg_a", "n": [1, "two"]}
    assert sql.update(Session, {"id": session.id}, {"title": "renamed", "summary": None}) == 1
    assert Session.objects.filter(id=session.id, title="renamed", summary__isnull=True).exists()


def test_session_reload_reads_every_field_and_the_share_again(owner, django_assert_num_queries):
    from sessions_app.wire import session_wire

    session = _session(owner)
    stale = session_row(session.id)
    with django_assert_num_queries(1):
        assert "share" not in session_wire(stale)
    with django_assert_num_queries(0):  # read once per Session object
        assert "share" not in session_wire(stale)
    Session.objects.filter(id=session.id).update(title="new title", cost=1.5, tokens={"input": 3})
    Share.objects.create(session=session, slug="prepared", secret="s", url="http://x/share/prepared")
    assert session_reload(stale) is stale
    assert (stale.title, stale.cost, stale.tokens) == ("new title", 1.5, {"input": 3})
    assert session_wire(stale)["share"] == {"url": "http://x/share/prepared"}
    Session.objects.filter(id=session.id).delete()
    with pytest.raises(Session.DoesNotExist):
        session_reload(stale)
    assert session_row(session.id) is None


def test_a_change_with_expressions_and_json_updates_only_the_rows_it_names(owner):
    from agentserver.clock import DatabaseNow
    from sessions_app.models import SessionLease

    session = _session(owner)
    SessionLease.objects.create(session=session, holder="w1", expires_at=0, status={}, updated=0)
    mark = sql.Change(
        lambda sid, holder, status: (SessionLease.objects.filter(session_id=sid, holder=holder),
                                     {"status": status, "expires_at": DatabaseNow() + 1000}))
    assert mark(session.id, "w2", {"type": "busy"}) == 0
    assert mark(session.id, "w1", {"type": "retry", "message": "a\0b"}) == 1
    lease = SessionLease.objects.get(session=session)
    assert lease.status == {"type": "retry", "message": "a\0b"} and lease.expires_at > 1000
    assert SessionLease.objects.get(session=session).holder == "w1"


def test_a_none_argument_means_what_it_means_to_the_orm(owner):
    session = _session(owner)
    _message(session, "msg_a")
    by_parent = sql.Query(lambda sid, parent: Session.objects.filter(id=sid, parent_id=parent).values_list("id", flat=True))
    assert by_parent.all(session.id, None) == [session.id]  # IS NULL, as the ORM reads it
    assert by_parent.all(session.id, "ses_other") == []
    assert by_parent.all(session.id, None) == [session.id]
