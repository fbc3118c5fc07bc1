"""GET /api/audit: staff read the audit log newest first, filtered (person, action, object, session, dates,
outcome, free text) and cursor-paginated; anyone else gets 403 in the spec's error shape and no record."""
import datetime

import pytest

from tests.audit.helpers import last_id
from tests.conftest import make_persona


@pytest.fixture
def dana(server, transactional_db):
    persona = make_persona("dana", server.url, None, staff=True)
    yield persona
    persona.client.close()


def test_staff_read_records_newest_first_with_who_did_what(dana, alice):
    alice.get("/session")
    answer = dana.get("/api/audit").json()
    actions = [row["action"] for row in answer["data"]]
    assert "token.first_use" in actions
    ids = [row["id"] for row in answer["data"]]
    assert ids == sorted(ids, reverse=True)
    first_use = next(row for row in answer["data"] if row["action"] == "token.first_use"
                     and row["actor"]["name"] == "alice")
    assert first_use["actor"]["person"] == alice.user.pk and first_use["actor"]["address"] == "127.0.0.1"
    assert first_use["outcome"] == "success" and first_use["object"]["type"] == "token"
    assert len(first_use["hash"]) == 64


def test_filters_narrow_the_list(dana, alice, bob):
    alice.get("/session")
    bob.get("/session")
    by_alice = dana.get("/api/audit", params={"person": "alice"}).json()["data"]
    assert by_alice and {row["actor"]["name"] for row in by_alice} == {"alice"}
    by_id = dana.get("/api/audit", params={"person": str(bob.user.pk)}).json()["data"]
    assert by_id and {row["actor"]["person"] for row in by_id} == {bob.user.pk}
    token_actions = dana.get("/api/audit", params={"action": "token."}).json()["data"]
    assert {row["action"] for row in token_actions} == {"token.created", "token.first_use"}
    created = dana.get("/api/audit", params={"action": "token.created", "q": "alice"}).json()["data"]
    assert [row["details"]["owner"] for row in created] == ["alice"]
    assert dana.get("/api/audit", params={"outcome": "failure"}).json()["data"] == []
    future = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).isoformat()
    assert dana.get("/api/audit", params={"since": future}).json()["data"] == []
    assert dana.get("/api/audit", params={"until": future}).json()["data"]
    some = by_alice[0]["object"]
    assert all(row["object"] == some for row in dana.get(
        "/api/audit", params={"object": f"{some['type']}:{some['id']}"}).json()["data"])


def test_the_cursor_walks_every_record_once(dana, alice, bob):
    alice.get("/session")
    bob.get("/session")
    seen, cursor = [], None
    while True:
        response = dana.get("/api/audit", params={"limit": 2, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200
        seen += [row["id"] for row in response.json()["data"]]
        cursor = response.json()["cursor"].get("next")
        if not cursor:
            break
        assert response.headers["x-next-cursor"] == cursor
    assert seen == list(range(last_id(), 0, -1))  # every record (dana's own first use too), once, newest first


def test_bad_filters_are_400s(dana):
    for params in ({"outcome": "maybe"}, {"since": "yesterday"}, {"limit": "0"}, {"cursor": "abc"},
                   {"limit": "100000"}):
        response = dana.get("/api/audit", params=params)
        assert response.status_code == 400, params
        assert response.json()["name"] == "BadRequestError"


def test_a_non_staff_person_is_refused_and_sees_no_record(alice, anon):
    response = alice.get("/api/audit", params={"person": "alice"})
    assert response.status_code == 403
    assert response.json() == {"name": "ForbiddenError", "data": {"message": "Only staff can read the audit log"}}
    assert anon.get("/api/audit").status_code == 401


def test_free_text_pages_hold_every_match_once_newest_first(dana):
    from django.db import transaction

    from audit_app.actors import Actor
    from audit_app.log import record

    matching = []
    for number in range(9):
        with transaction.atomic():
            record(action="tool.call", object_type="tool", object_id="bash", details={"command": f"ls {number}"})
            if number % 3 == 0:
                row = record(action="tool.call", object_type="tool", object_id="bash",
                             details={"command": f"grep Needle-{number}"})
            elif number % 3 == 1:
                row = record(action="token.created", object_type="token", object_id="needle-1")
            else:
                row = record(action="auth.signin", actor=Actor(name="needle-1"), object_type="user", object_id=number)
            matching.append(row.id)
    by_name_or_object = dana.get("/api/audit", params={"q": "needle-1"}).json()["data"]
    assert [row["id"] for row in by_name_or_object] == [matching[index] for index in (8, 7, 5, 4, 2, 1)]
    seen, cursor = [], None
    while True:
        answer = dana.get("/api/audit", params={"q": "NEEDLE", "limit": 2, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        seen += [row["id"] for row in answer.json()["data"]]
        cursor = answer.json()["cursor"].get("next")
        if not cursor:
            break
    # A word of the details, the object id or the username, in any case (tests/audit/test_free_text.py).
    assert seen == matching[::-1]
