"""What the free text (`q` of GET /api/audit, the admin's search box) finds. PostgreSQL: every word of q,
whole, in any case and order, wherever it is in the record (action, object, username, details), through the
GIN index of each record's words (migration 0005). SQLite: each space-separated term as a substring."""
from __future__ import annotations

import pytest
from django.db import connection, transaction

from audit_app import selectors
from audit_app.actors import Actor
from audit_app.log import record
from audit_app.models import AuditRecord
from tests.conftest import make_persona


@pytest.fixture
def dana(server, transactional_db):
    persona = make_persona("dana", server.url, None, staff=True)
    yield persona
    persona.client.close()


@pytest.fixture
def records(transactional_db) -> dict[str, int]:
    with transaction.atomic():
        return {
            "heredoc": record(action="tool.call", object_type="tool", object_id="bash", details={
                "command": "cat <<EOF > notes.txt\nkubernetes rollout\nEOF", "callID": "call_4242"}).id,
            "path": record(action="tool.call", object_type="tool", object_id="edit", details={
                "filePath": "/srv/app/main.py", "callID": "call_7"}).id,
            "session": record(action="session.shared", object_type="session", object_id="ses_abc123").id,
            "person": record(action="auth.signin", actor=Actor(name="bob.smith"), object_type="user",
                             object_id=3).id,
        }


def _found(dana, q: str) -> set[str]:
    answer = dana.get("/api/audit", params={"q": q})
    assert answer.status_code == 200, answer.text
    return {row["id"] for row in answer.json()["data"]}


def _names(records: dict[str, int], found: set[int]) -> set[str]:
    return {name for name, number in records.items() if number in found}


def test_a_word_finds_the_records_holding_it_wherever_it_is(dana, records):
    for q, expected in [("kubernetes", {"heredoc"}), ("KUBERNETES Rollout", {"heredoc"}), ("ses_abc123", {"session"}),
                        ("main.py", {"path"}), ("/srv/app/main.py", {"path"}), ("bob.smith", {"person"}),
                        ("session.shared", {"session"}), ('call_4242"', {"heredoc"}), ("nowhere", set())]:
        assert _names(records, _found(dana, q)) == expected, q


@pytest.mark.scaled
def test_postgresql_finds_whole_words_in_any_order_not_parts_of_words(dana, records):
    for q, expected in [("abc123", {"session"}), ("abc", set()), ("ses_abc", set()), ("call_42", set()),
                        ("kube", set()), ("app/main", {"path"}), ("smith", {"person"}), ("smith bob", {"person"}),
                        ("rollout kubernetes", {"heredoc"}), ("py main", {"path"}), ("kubernetes nowhere", set()),
                        ("app.main", {"path"}), ("main.js", set()), ("- kubernetes", {"heredoc"}), ("-", set()),
                        ("<<", set())]:
        assert _names(records, _found(dana, q)) == expected, q


@pytest.mark.scaled
def test_postgresql_answers_through_the_words_index(records):
    """The selector spells the words as migration 0005 indexed them: the planner finds the index."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = selectors.matching_text(AuditRecord.objects.all(), "ses_abc123").explain()
    assert "audit_words" in plan, plan


@pytest.mark.embedded
def test_sqlite_finds_each_term_as_a_substring(dana, records):
    for q, expected in [("abc", {"session"}), ("kube", {"heredoc"}), ("ses_abc", {"session"}),
                        ("call_42", {"heredoc"}), ("smith bob", {"person"}), ("rollout kubernetes", {"heredoc"}),
                        ("kubernetes nowhere", set())]:
        assert _names(records, _found(dana, q)) == expected, q
