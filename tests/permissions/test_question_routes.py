import pytest

from sessions_app.models import Question
from sessions_app.runtime.tools.base import QuestionRejected
from tests.permissions.helpers import question_in_background, session_for, wait_pending

QUESTIONS = [{"question": "Ship it?", "header": "Ship", "options": [{"label": "Yes", "description": "go"},
                                                                    {"label": "No", "description": "wait"}]}]


@pytest.fixture
def asked(alice):
    session = session_for(alice)
    waiter = question_in_background(session, QUESTIONS)
    [question] = wait_pending(Question, session)
    return session, waiter, question


def test_anonymous_callers_get_401(anon):
    assert anon.get("/question").status_code == 401
    assert anon.post("/question/que_x/reply", json={"answers": []}).status_code == 401
    assert anon.post("/question/que_x/reject").status_code == 401
    assert anon.get("/api/question").status_code == 401


def test_the_list_shows_pending_questions_to_their_owner_only(alice, bob, asked):
    session, waiter, question = asked
    expected = [{"id": question.id, "sessionID": session.id, "questions": QUESTIONS,
                 "tool": {"messageID": "msg_1", "callID": "call_q"}}]
    assert alice.get("/question").json() == expected
    assert alice.get("/api/question").json() == expected
    assert bob.get("/question").json() == []
    alice.post(f"/question/{question.id}/reject")
    waiter.join()


def test_a_reply_returns_the_answers_to_the_tool(alice, asked):
    _, waiter, question = asked
    response = alice.post(f"/question/{question.id}/reply", json={"answers": [["Yes"]]})
    assert response.status_code == 200 and response.json() is True
    assert waiter.join().result == [["Yes"]]
    assert alice.post(f"/question/{question.id}/reply", json={"answers": [["Yes"]]}).status_code == 404


def test_a_reject_dismisses_the_question(alice, asked):
    _, waiter, question = asked
    assert alice.post(f"/api/question/{question.id}/reject").json() is True
    assert isinstance(waiter.join().error, QuestionRejected)


def test_bob_unknown_ids_and_bad_bodies(alice, bob, asked):
    _, waiter, question = asked
    assert bob.post(f"/question/{question.id}/reply", json={"answers": [["Yes"]]}).status_code == 404
    assert bob.post(f"/question/{question.id}/reject").status_code == 404
    assert alice.post("/question/que_nope/reply", json={"answers": []}).status_code == 404
    assert alice.post("/question/que_nope/reject").status_code == 404
    assert alice.post(f"/question/{question.id}/reply", json={"answers": "Yes"}).status_code == 400
    assert alice.post(f"/question/{question.id}/reply", json={}).status_code == 400
    assert alice.post("/question/nope/reject").status_code == 400
    alice.post(f"/api/question/{question.id}/reply", json={"answers": [["No"]]})
    assert waiter.join().result == [["No"]]
