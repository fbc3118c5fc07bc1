"""opencode's SDK v2 client (`@opencode-ai/sdk` 1.19.3, `@opencode-ai/sdk/v2`) against our server through node:
each operation that answered `No route` before issue 22, with good input as alice, bad input (malformed → 400,
unknown id → 404), bob's ids → 404 and no credentials → 401. Every call goes through the SDK's own method, so
its method, path, query and body are the SDK's. Skips without node or the SDK (scripts/test.sh installs it)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clients.test_js_sdk import sdk_node_modules
from tests.fakes.fixtures import FAKE_MODEL, FAKE_PROVIDER, Reply
from tests.permissions.helpers import question_in_background, session_for, wait_pending
from tests.sessions.helpers import add_message, add_turns

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)

HERE = Path(__file__).resolve().parent
UNKNOWN_SESSION = "ses_0000000000000000000000000a"
UNKNOWN_MESSAGE = "msg_0000000000000000000000000a"


@pytest.fixture
def sdk_v2(server, tmp_path):
    modules = sdk_node_modules()
    if shutil.which("node") is None or modules is None or not (modules / "sdk119" / "package.json").exists():
        pytest.skip("node or @opencode-ai/sdk 1.19.3 not installed (scripts/test.sh: npm install --prefix .tools "
                    "sdk119@npm:@opencode-ai/sdk@1.19.3)")
    (tmp_path / "node_modules").symlink_to(modules)
    shutil.copy(HERE / "sdk_v2_calls.mjs", tmp_path / "calls.mjs")

    def run(directory, *calls: dict) -> list[dict]:
        result = subprocess.run(["node", "calls.mjs", server.url, str(directory)], cwd=tmp_path,
                                input=json.dumps(list(calls)), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout.strip().splitlines()[-1])
        assert all(r["status"] >= 0 for r in out), out
        return out

    return run


def call(persona, op: str, args: dict | None = None, **extra) -> dict:
    return {"as": persona.token if persona is not None else "", "op": op, "args": args or {}, **extra}


def error_name(result: dict) -> str | None:
    error = result.get("error")
    return error.get("name") if isinstance(error, dict) else None


# ---- sessions: message, agent and model, revert, history, events ---------------------------------------

def test_message_get_answers_the_message_and_refuses_the_wrong_ones(alice, bob, sdk_v2):
    session = session_for(alice)
    message = add_message(session.id, texts=("hello v2",))
    message_id = message["info"]["id"]
    good, unknown, malformed, bobs, anon = sdk_v2(
        alice.repo,
        call(alice, "v2.session.message", {"sessionID": session.id, "messageID": message_id}),
        call(alice, "v2.session.message", {"sessionID": session.id, "messageID": UNKNOWN_MESSAGE}),
        call(alice, "v2.session.message", {"sessionID": session.id, "messageID": "nope"}),
        call(bob, "v2.session.message", {"sessionID": session.id, "messageID": message_id}),
        call(None, "v2.session.message", {"sessionID": session.id, "messageID": message_id}))
    assert good["status"] == 200
    assert good["data"]["data"]["info"]["id"] == message_id
    assert [p["text"] for p in good["data"]["data"]["parts"]] == ["hello v2"]
    assert (unknown["status"], error_name(unknown)) == (404, "NotFoundError")
    assert (malformed["status"], error_name(malformed)) == (400, "BadRequestError")
    assert (bobs["status"], error_name(bobs)) == (404, "NotFoundError")
    assert anon["status"] == 401


def test_switching_agent_and_model_sets_what_the_next_v2_prompt_runs_with(alice, bob, llm, sdk_v2):
    from sessions_app.models import Message, Session

    session = session_for(alice)
    llm.script(Reply(text="planned"))
    agent, model, bad_agent, bad_model, malformed, bobs, anon, prompt = sdk_v2(
        alice.repo,
        call(alice, "v2.session.switchAgent", {"sessionID": session.id, "agent": "plan"}),
        call(alice, "v2.session.switchModel", {"sessionID": session.id,
                                               "model": {"id": FAKE_MODEL, "providerID": FAKE_PROVIDER}}),
        call(alice, "v2.session.switchAgent", {"sessionID": session.id, "agent": "no-such-agent"}),
        call(alice, "v2.session.switchModel", {"sessionID": session.id,
                                               "model": {"id": "no-such-model", "providerID": FAKE_PROVIDER}}),
        call(alice, "v2.session.switchAgent", {"sessionID": session.id, "agent": 5}),
        call(bob, "v2.session.switchAgent", {"sessionID": session.id, "agent": "build"}),
        call(None, "v2.session.switchModel", {"sessionID": session.id,
                                              "model": {"id": FAKE_MODEL, "providerID": FAKE_PROVIDER}}),
        call(alice, "v2.session.prompt", {"sessionID": session.id,
                                          "prompt": {"parts": [{"type": "text", "text": "plan it"}]}}))
    assert agent["status"] == 204 and model["status"] == 204
    assert (bad_agent["status"], bad_model["status"], malformed["status"]) == (400, 400, 400)
    assert (bobs["status"], anon["status"]) == (404, 401)
    assert prompt["status"] == 200, prompt
    session = Session.objects.get(id=session.id)
    assert session.agent == "plan" and session.model["id"] == FAKE_MODEL
    user = Message.objects.filter(session=session, role="user").get()
    assert user.info["agent"] == "plan"
    assert user.info["model"] == {"providerID": FAKE_PROVIDER, "modelID": FAKE_MODEL}


def test_revert_is_staged_cleared_and_committed(alice, bob, sdk_v2):
    from sessions_app.models import Message, Session

    session = session_for(alice)
    turns = [m["info"]["id"] for m in add_turns(session.id, 2)]  # answered: no runner starts for them
    second = turns[2]
    stage, unknown, malformed, bobs, anon, clear = sdk_v2(
        alice.repo,
        call(alice, "v2.session.revert.stage", {"sessionID": session.id, "messageID": second, "files": False}),
        call(alice, "v2.session.revert.stage", {"sessionID": session.id, "messageID": UNKNOWN_MESSAGE}),
        call(alice, "v2.session.revert.stage", {"sessionID": session.id, "messageID": "x", "files": "yes"}),
        call(bob, "v2.session.revert.clear", {"sessionID": session.id}),
        call(None, "v2.session.revert.commit", {"sessionID": session.id}),
        call(alice, "v2.session.revert.clear", {"sessionID": session.id}))
    assert stage["status"] == 200 and stage["data"]["data"]["messageID"] == second
    assert (unknown["status"], malformed["status"], bobs["status"], anon["status"]) == (404, 400, 404, 401)
    assert clear["status"] == 204 and Session.objects.get(id=session.id).revert is None
    stage, commit, bobs = sdk_v2(
        alice.repo,
        call(alice, "v2.session.revert.stage", {"sessionID": session.id, "messageID": second, "files": False}),
        call(alice, "v2.session.revert.commit", {"sessionID": session.id}),
        call(bob, "v2.session.revert.commit", {"sessionID": session.id}))
    assert (stage["status"], commit["status"], bobs["status"]) == (200, 204, 404)
    assert list(Message.objects.filter(session_id=session.id).values_list("id", flat=True).order_by("id")) == turns[:2]
    assert Session.objects.get(id=session.id).revert is None


def test_history_pages_the_sessions_logged_events(alice, bob, sdk_v2):
    session = session_for(alice)
    add_message(session.id, texts=("one",))
    other = session_for(alice)
    add_message(other.id, texts=("elsewhere",))
    first, page, malformed, bobs, anon, unknown = sdk_v2(
        alice.repo,
        call(alice, "v2.session.history", {"sessionID": session.id}),
        call(alice, "v2.session.history", {"sessionID": session.id, "limit": "1"}),
        call(alice, "v2.session.history", {"sessionID": session.id, "limit": "many"}),
        call(bob, "v2.session.history", {"sessionID": session.id}),
        call(None, "v2.session.history", {"sessionID": session.id}),
        call(alice, "v2.session.history", {"sessionID": UNKNOWN_SESSION}))
    events = first["data"]["data"]
    assert first["status"] == 200 and first["data"]["hasMore"] is False
    assert {"session.created", "message.updated", "message.part.updated"} <= {e["type"] for e in events}
    assert {e["durable"]["aggregateID"] for e in events} == {session.id}
    seqs = [e["durable"]["seq"] for e in events]
    assert seqs == sorted(seqs)
    assert page["data"]["hasMore"] is True and len(page["data"]["data"]) == 1
    assert (malformed["status"], bobs["status"], anon["status"], unknown["status"]) == (400, 404, 401, 404)
    [after] = sdk_v2(alice.repo, call(alice, "v2.session.history", {"sessionID": session.id,
                                                                     "after": str(seqs[0])}))
    assert [e["durable"]["seq"] for e in after["data"]["data"]] == seqs[1:]


def test_the_session_event_stream_replays_and_follows_one_session(alice, bob, anon, sdk_v2):
    session = session_for(alice)
    add_message(session.id, texts=("one",))
    other = session_for(alice)
    add_message(other.id, texts=("elsewhere",))
    [stream] = sdk_v2(alice.repo, call(alice, "v2.session.events", {"sessionID": session.id, "after": "0"},
                                       stream=4))
    from agentserver.events.bus import event_session_id

    logged = [e for e in stream["data"] if not e["type"].startswith("server.")]
    assert {"session.created", "message.updated"} <= {e["type"] for e in logged}, stream
    assert {event_session_id(e["type"], e["payload"]) for e in logged} == {session.id}
    # The SDK's stream client retries a refused stream rather than answering its status: asked directly.
    url = f"/api/session/{session.id}/event"
    assert bob.get(url).status_code == 404
    assert anon.get(url).status_code == 401
    assert alice.get("/api/session/nope/event").status_code == 400
    assert alice.get(url, params={"after": "soon"}).status_code == 400


# ---- permissions and questions of one session -----------------------------------------------------------

def test_a_session_asks_lists_gets_and_replies_to_a_permission(alice, bob, sdk_v2):
    from sessions_app.models import PermissionApproval, PermissionRequest

    session = session_for(alice)
    ask = {"sessionID": session.id, "action": "external_directory", "resources": ["/srv/outside/*"],
           "save": ["/srv/outside/*"]}
    created, allowed, malformed, bobs, anon = sdk_v2(
        alice.repo,
        call(alice, "v2.session.permission.create", ask),
        call(alice, "v2.session.permission.create", {"sessionID": session.id, "action": "read",
                                                     "resources": ["README.md"]}),
        call(alice, "v2.session.permission.create", {"sessionID": session.id, "action": 5, "resources": "x"}),
        call(bob, "v2.session.permission.create", ask),
        call(None, "v2.session.permission.create", ask))
    assert created["status"] == 200 and created["data"]["data"]["effect"] == "ask"
    assert allowed["data"]["data"]["effect"] == "allow"
    assert (malformed["status"], bobs["status"], anon["status"]) == (400, 404, 401)
    request_id = created["data"]["data"]["id"]
    assert PermissionRequest.objects.filter(session=session).count() == 1
    listed, got, unknown, bob_list, bob_get, bad_reply, bob_reply, reply, saved, bob_saved = sdk_v2(
        alice.repo,
        call(alice, "v2.session.permission.list", {"sessionID": session.id}),
        call(alice, "v2.session.permission.get", {"sessionID": session.id, "requestID": request_id}),
        call(alice, "v2.session.permission.get", {"sessionID": session.id, "requestID": "per_unknown"}),
        call(bob, "v2.session.permission.list", {"sessionID": session.id}),
        call(bob, "v2.session.permission.get", {"sessionID": session.id, "requestID": request_id}),
        call(alice, "v2.session.permission.reply", {"sessionID": session.id, "requestID": request_id,
                                                    "reply": "maybe"}),
        call(bob, "v2.session.permission.reply", {"sessionID": session.id, "requestID": request_id,
                                                  "reply": "once"}),
        call(alice, "v2.session.permission.reply", {"sessionID": session.id, "requestID": request_id,
                                                    "reply": "always"}),
        call(alice, "v2.permission.saved.list", {}),
        call(bob, "v2.permission.saved.list", {}))
    wire = {"id": request_id, "sessionID": session.id, "action": "external_directory",
            "resources": ["/srv/outside/*"], "save": ["/srv/outside/*"], "metadata": {}}
    assert listed["data"]["data"] == [wire] and got["data"]["data"] == wire
    assert (unknown["status"], bob_list["status"], bob_get["status"]) == (404, 404, 404)
    assert (bad_reply["status"], bob_reply["status"], reply["status"]) == (400, 404, 204)
    assert PermissionRequest.objects.get(id=request_id).reply == "always"
    [entry] = saved["data"]["data"]
    assert entry == {"id": entry["id"], "projectID": session.project_id, "action": "external_directory",
                     "resource": "/srv/outside/*"}
    assert bob_saved["data"]["data"] == []
    again, bob_remove, anon_remove, unknown_remove, remove = sdk_v2(
        alice.repo,
        call(alice, "v2.session.permission.create", ask),
        call(bob, "v2.permission.saved.remove", {"id": entry["id"]}),
        call(None, "v2.permission.saved.remove", {"id": entry["id"]}),
        call(alice, "v2.permission.saved.remove", {"id": "not-an-id"}),
        call(alice, "v2.permission.saved.remove", {"id": entry["id"]}))
    assert again["data"]["data"]["effect"] == "allow"  # the saved approval answers it
    assert (bob_remove["status"], anon_remove["status"], unknown_remove["status"]) == (404, 401, 404)
    assert remove["status"] == 204 and not PermissionApproval.objects.filter(owner=alice.user).exists()


QUESTIONS = [{"question": "Ship it?", "header": "Ship", "options": [{"label": "Yes", "description": "go"}]}]


def test_a_sessions_questions_are_listed_answered_and_rejected(alice, bob, sdk_v2):
    from sessions_app.models import Question

    session = session_for(alice)
    waiter = question_in_background(session, QUESTIONS)
    [question] = wait_pending(Question, session)
    listed, bob_list, anon, malformed, bob_reply, unknown, reply = sdk_v2(
        alice.repo,
        call(alice, "v2.session.question.list", {"sessionID": session.id}),
        call(bob, "v2.session.question.list", {"sessionID": session.id}),
        call(None, "v2.session.question.list", {"sessionID": session.id}),
        call(alice, "v2.session.question.reply", {"sessionID": session.id, "requestID": question.id,
                                                  "questionV2Reply": {"answers": "Yes"}}),
        call(bob, "v2.session.question.reply", {"sessionID": session.id, "requestID": question.id,
                                                "questionV2Reply": {"answers": [["Yes"]]}}),
        call(alice, "v2.session.question.reply", {"sessionID": session.id, "requestID": "que_unknown",
                                                  "questionV2Reply": {"answers": [["Yes"]]}}),
        call(alice, "v2.session.question.reply", {"sessionID": session.id, "requestID": question.id,
                                                  "questionV2Reply": {"answers": [["Yes"]]}}))
    assert [q["id"] for q in listed["data"]["data"]] == [question.id]
    assert (bob_list["status"], anon["status"], malformed["status"]) == (404, 401, 400)
    assert (bob_reply["status"], unknown["status"], reply["status"]) == (404, 404, 204)
    assert waiter.join().result == [["Yes"]]
    waiter = question_in_background(session, QUESTIONS, call_id="call_q2")
    [question] = wait_pending(Question, session)
    bob_reject, reject = sdk_v2(
        alice.repo,
        call(bob, "v2.session.question.reject", {"sessionID": session.id, "requestID": question.id}),
        call(alice, "v2.session.question.reject", {"sessionID": session.id, "requestID": question.id}))
    assert (bob_reject["status"], reject["status"]) == (404, 204)
    assert Question.objects.get(id=question.id).status == "rejected"


# ---- files, terminals, providers ------------------------------------------------------------------------

def test_fs_read_list_and_find_answer_within_the_location(alice, bob, sdk_v2):
    (alice.repo / "notes").mkdir()
    (alice.repo / "notes" / "hello.txt").write_text("hello from v2\n")
    location = {"location": {"directory": str(alice.repo)}}
    read, missing, outside, bobs, anon, listed, nested, not_dir, found, dirs, bad_type, bad_limit = sdk_v2(
        alice.repo,
        call(alice, "v2.fs.read", location, options={"url": "/api/fs/read/notes/hello.txt"}),
        call(alice, "v2.fs.read", location, options={"url": "/api/fs/read/notes/nothing.txt"}),
        call(alice, "v2.fs.read", location, options={"url": "/api/fs/read/..%2F..%2Fetc%2Fpasswd"}),
        call(bob, "v2.fs.read", location, options={"url": "/api/fs/read/notes/hello.txt"}),
        call(None, "v2.fs.read", location, options={"url": "/api/fs/read/notes/hello.txt"}),
        call(alice, "v2.fs.list", location),
        call(alice, "v2.fs.list", {**location, "path": "notes"}),
        call(alice, "v2.fs.list", {**location, "path": "notes/hello.txt"}),
        call(alice, "v2.fs.find", {**location, "query": "hello"}),
        call(alice, "v2.fs.find", {**location, "query": "not", "type": "directory"}),
        call(alice, "v2.fs.find", {**location, "query": "hello", "type": "socket"}),
        call(alice, "v2.fs.find", {**location, "query": "hello", "limit": "lots"}))
    assert read["status"] == 200 and read["data"] == "hello from v2\n"
    assert missing["status"] == 404
    assert outside["status"] in (400, 403, 404)
    assert bobs["status"] == 403  # bob's roots do not hold alice's directory
    assert anon["status"] == 401
    assert listed["status"] == 200 and {"path": "notes", "type": "directory"} in listed["data"]["data"]
    assert listed["data"]["location"]["directory"] == str(alice.repo)
    assert nested["data"]["data"] == [{"path": "notes/hello.txt", "type": "file"}]
    assert not_dir["status"] == 404  # a file is no directory to list
    assert found["status"] == 200 and found["data"]["data"][0] == {"path": "notes/hello.txt", "type": "file"}
    assert dirs["data"]["data"] == [{"path": "notes", "type": "directory"}]
    assert (bad_type["status"], bad_limit["status"]) == (400, 400)


def test_a_terminal_connect_token_is_given_to_its_owner_only(alice, bob, sdk_v2):
    [created] = sdk_v2(alice.repo, call(alice, "v2.pty.create", {"command": "/bin/sh"}))
    assert created["status"] == 200, created
    pty_id = created["data"]["data"]["id"]
    try:
        token, unknown, malformed, bobs, anon = sdk_v2(
            alice.repo,
            call(alice, "v2.pty.connectToken", {"ptyID": pty_id}),
            call(alice, "v2.pty.connectToken", {"ptyID": "pty_0000000000000000000000000a"}),
            call(alice, "v2.pty.connectToken", {"ptyID": "terminal"}),
            call(bob, "v2.pty.connectToken", {"ptyID": pty_id}),
            call(None, "v2.pty.connectToken", {"ptyID": pty_id}))
        assert token["status"] == 200
        assert token["data"]["data"]["expires_in"] > 0 and len(token["data"]["data"]["ticket"]) > 16
        assert token["data"]["location"]["directory"] == str(alice.repo)
        assert (unknown["status"], malformed["status"], bobs["status"], anon["status"]) == (404, 400, 404, 401)
    finally:
        sdk_v2(alice.repo, call(alice, "v2.pty.remove", {"ptyID": pty_id}))


def test_provider_get_answers_a_connected_provider(alice, bob, llm, sdk_v2):
    good, unknown, in_alices, anon = sdk_v2(
        alice.repo,
        call(alice, "v2.provider.get", {"providerID": FAKE_PROVIDER}),
        call(alice, "v2.provider.get", {"providerID": "no-such-provider"}),
        call(bob, "v2.provider.get", {"providerID": FAKE_PROVIDER}),
        call(None, "v2.provider.get", {"providerID": FAKE_PROVIDER}))
    [bobs] = sdk_v2(bob.repo, call(bob, "v2.provider.get", {"providerID": FAKE_PROVIDER}))
    assert in_alices["status"] == 403  # alice's directory is outside bob's roots
    assert good["status"] == 200 and good["data"]["data"]["id"] == FAKE_PROVIDER
    assert good["data"]["location"]["directory"] == str(alice.repo)
    assert (unknown["status"], anon["status"]) == (404, 401)
    assert bobs["status"] == 404  # alice's provider config is hers


# ---- integrations and credentials -----------------------------------------------------------------------

def test_an_integration_is_read_and_connected_with_a_key_and_its_credential_relabelled_and_removed(alice, bob,
                                                                                                    sdk_v2):
    from auth_app.models import AuthAccount

    got, unknown, connect, malformed, bobs_connect, anon = sdk_v2(
        alice.repo,
        call(alice, "v2.integration.get", {"integrationID": "openai"}),
        call(alice, "v2.integration.get", {"integrationID": "no-such-provider"}),
        call(alice, "v2.integration.connect.key", {"integrationID": "openai", "key": "sk-alice-1234567890",
                                                   "label": "work"}),
        call(alice, "v2.integration.connect.key", {"integrationID": "openai", "key": 42}),
        call(bob, "v2.integration.connect.key", {"integrationID": "openai", "key": "sk-bob"}),
        call(None, "v2.integration.get", {"integrationID": "openai"}))
    assert got["status"] == 200 and got["data"]["data"]["id"] == "openai"
    assert {"type": "key"} in got["data"]["data"]["methods"]
    assert (unknown["status"], connect["status"], malformed["status"], anon["status"]) == (404, 204, 400, 401)
    assert bobs_connect["status"] == 403  # alice's directory is outside bob's roots
    account = AuthAccount.objects.get(owner=alice.user, service_id="openai")
    assert account.description == "work" and account.active
    [after] = sdk_v2(alice.repo, call(alice, "v2.integration.get", {"integrationID": "openai"}))
    assert {"type": "credential", "id": account.id, "label": "work"} in after["data"]["data"]["connections"]
    bob_update, bob_remove = sdk_v2(
        bob.repo,
        call(bob, "v2.credential.update", {"credentialID": account.id, "label": "mine"}),
        call(bob, "v2.credential.remove", {"credentialID": account.id}))
    assert (bob_update["status"], bob_remove["status"]) == (404, 404)
    bad_label, update, unknown_remove, anon_remove, remove = sdk_v2(
        alice.repo,
        call(alice, "v2.credential.update", {"credentialID": account.id, "label": ["x"]}),
        call(alice, "v2.credential.update", {"credentialID": account.id, "label": "personal"}),
        call(alice, "v2.credential.remove", {"credentialID": "acc_unknown"}),
        call(None, "v2.credential.remove", {"credentialID": account.id}),
        call(alice, "v2.credential.remove", {"credentialID": account.id}))
    assert (bad_label["status"], update["status"], unknown_remove["status"]) == (400, 204, 404)
    assert (anon_remove["status"], remove["status"]) == (401, 204)
    assert not AuthAccount.objects.filter(owner=alice.user).exists()


def test_an_oauth_attempt_is_started_polled_refused_without_a_code_and_cancelled(alice, bob, sdk_v2):
    start, no_method, malformed = sdk_v2(
        alice.repo,
        call(alice, "v2.integration.connect.oauth", {"integrationID": "openai", "methodID": "0", "inputs": {}}),
        call(alice, "v2.integration.connect.oauth", {"integrationID": "openai", "methodID": "9", "inputs": {}}),
        call(alice, "v2.integration.connect.oauth", {"integrationID": "openai", "methodID": 0}))
    assert start["status"] == 200, start
    attempt = start["data"]["data"]
    assert attempt["mode"] == "code" and attempt["url"].startswith("https://auth.openai.com/")
    assert attempt["time"]["expires"] > attempt["time"]["created"]
    assert (no_method["status"], malformed["status"]) == (400, 400)
    attempt_id = attempt["attemptID"]
    status, no_code, unknown, anon, cancel, gone = sdk_v2(
        alice.repo,
        call(alice, "v2.integration.attempt.status", {"attemptID": attempt_id}),
        call(alice, "v2.integration.attempt.complete", {"attemptID": attempt_id, "code": ""}),
        call(alice, "v2.integration.attempt.status", {"attemptID": "no-such-attempt"}),
        call(None, "v2.integration.attempt.status", {"attemptID": attempt_id}),
        call(alice, "v2.integration.attempt.cancel", {"attemptID": attempt_id}),
        call(alice, "v2.integration.attempt.status", {"attemptID": attempt_id}))
    assert status["status"] == 200 and status["data"]["data"]["status"] == "pending"
    assert (no_code["status"], unknown["status"], anon["status"]) == (400, 404, 401)
    assert (cancel["status"], gone["status"]) == (204, 404)
    [again] = sdk_v2(alice.repo, call(alice, "v2.integration.connect.oauth",
                                      {"integrationID": "openai", "methodID": "0", "inputs": {}}))
    attempt_id = again["data"]["data"]["attemptID"]
    bob_status, bob_cancel, bob_complete = sdk_v2(
        bob.repo,
        call(bob, "v2.integration.attempt.status", {"attemptID": attempt_id}),
        call(bob, "v2.integration.attempt.cancel", {"attemptID": attempt_id}),
        call(bob, "v2.integration.attempt.complete", {"attemptID": attempt_id, "code": "abc"}))
    assert (bob_status["status"], bob_cancel["status"], bob_complete["status"]) == (404, 404, 404)


# ---- 1.18's experimental workspaces ---------------------------------------------------------------------

def test_experimental_workspaces_are_made_warped_into_and_removed(alice, bob, sdk_v2):
    from projects_app.models import Workspace
    from sessions_app.models import Session

    session = session_for(alice)
    adapters, created, bad_type, malformed, chosen_id, anon = sdk_v2(
        alice.repo,
        call(alice, "experimental.workspace.adapter.list", {}),
        call(alice, "experimental.workspace.create", {"type": "worktree", "branch": "v2-sdk-test"}),
        call(alice, "experimental.workspace.create", {"type": "cloud"}),
        call(alice, "experimental.workspace.create", {"type": 7}),
        call(alice, "experimental.workspace.create", {"type": "worktree", "id": "wrk_mine"}),
        call(None, "experimental.workspace.create", {"type": "worktree"}))
    assert adapters["status"] == 200 and {"worktree", "directory"} <= {a["type"] for a in adapters["data"]}
    assert created["status"] == 200, created
    workspace = created["data"]
    assert workspace["type"] == "worktree" and workspace["branch"] == "v2-sdk-test"
    assert (bad_type["status"], malformed["status"], chosen_id["status"], anon["status"]) == (400, 400, 400, 401)
    listed, warp, bob_warp, unknown_warp, sync, bob_sync = sdk_v2(
        alice.repo,
        call(alice, "experimental.workspace.list", {}),
        call(alice, "experimental.workspace.warp", {"id": workspace["id"], "sessionID": session.id}),
        call(bob, "experimental.workspace.warp", {"id": None, "sessionID": session.id}),
        call(alice, "experimental.workspace.warp", {"id": "wrk_0000000000000000000000000a",
                                                    "sessionID": session.id}),
        call(alice, "experimental.workspace.syncList", {}),
        call(None, "experimental.workspace.syncList", {}))
    assert workspace["id"] in [w["id"] for w in listed["data"]]
    assert warp["status"] == 204 and Session.objects.get(id=session.id).workspace_id == workspace["id"]
    assert bob_warp["status"] in (403, 404)  # bob may not even name alice's directory
    assert unknown_warp["status"] == 404
    assert (sync["status"], bob_sync["status"]) == (204, 401)
    [bobs_remove] = sdk_v2(bob.repo, call(bob, "experimental.workspace.remove", {"id": workspace["id"]}))
    assert bobs_remove["status"] == 404 and Workspace.objects.filter(id=workspace["id"]).exists()
    removed, again, malformed = sdk_v2(
        alice.repo,
        call(alice, "experimental.workspace.remove", {"id": workspace["id"]}),
        call(alice, "experimental.workspace.remove", {"id": workspace["id"]}),
        call(alice, "experimental.workspace.remove", {"id": "workspace"}))
    assert removed["status"] == 200 and removed["data"]["id"] == workspace["id"]
    assert (again["status"], malformed["status"]) == (404, 400)
    assert not Workspace.objects.filter(id=workspace["id"]).exists()
    assert Session.objects.get(id=session.id).workspace_id is None  # detached when its workspace went


# ---- project copies -------------------------------------------------------------------------------------

def test_a_project_copy_is_named_made_refreshed_and_removed(alice, bob, sdk_v2):
    from projects_app.models import Workspace

    [current] = sdk_v2(alice.repo, call(alice, "project.current", {}))
    project_id = current["data"]["id"]
    target = alice.root / "copies" / "fix-login"
    name, bad_name, bobs_name, anon_name = sdk_v2(
        alice.repo,
        call(alice, "experimental.projectCopy.generateName", {"projectID": project_id,
                                                              "context": "Fix the login page's redirect loop"}),
        call(alice, "experimental.projectCopy.generateName", {"projectID": project_id, "context": 3}),
        call(alice, "experimental.projectCopy.generateName", {"projectID": "0" * 40, "context": "x"}),
        call(None, "experimental.projectCopy.generateName", {"projectID": project_id}))
    assert name["status"] == 200 and name["data"] == {"name": "fix-the-login-page"}
    assert (bad_name["status"], bobs_name["status"], anon_name["status"]) == (400, 404, 401)
    created, exists, strategy, outside, malformed, anon = sdk_v2(
        alice.repo,
        call(alice, "v2.projectCopy.create", {"projectID": project_id, "strategy": "worktree",
                                              "directory": str(target), "name": "fix-login"}),
        call(alice, "v2.projectCopy.create", {"projectID": project_id, "strategy": "worktree",
                                              "directory": str(target)}),
        call(alice, "v2.projectCopy.create", {"projectID": project_id, "strategy": "rsync",
                                              "directory": str(alice.root / "other")}),
        call(alice, "v2.projectCopy.create", {"projectID": project_id, "strategy": "worktree",
                                              "directory": "/etc/copy"}),
        call(alice, "v2.projectCopy.create", {"projectID": project_id, "strategy": "worktree"}),
        call(None, "v2.projectCopy.create", {"projectID": project_id, "strategy": "worktree",
                                             "directory": str(target)}))
    assert created["status"] == 200 and created["data"] == {"directory": str(target)}
    assert (target / ".git").exists()
    workspace = Workspace.objects.get(owner=alice.user, directory=str(target))
    assert workspace.branch == "copy/fix-login"
    assert (exists["status"], strategy["status"], outside["status"]) == (409, 400, 403)
    assert (malformed["status"], anon["status"]) == (400, 401)
    (target / "scratch.txt").write_text("unsaved work\n")
    # (bob's test repository may share alice's project id: its root commit is the same; his project is his own.)
    bobs = sdk_v2(bob.repo,
                  call(bob, "v2.projectCopy.remove", {"projectID": project_id, "directory": str(target),
                                                      "force": True}),
                  call(bob, "v2.projectCopy.refresh", {"projectID": "f" * 40}))
    assert [r["status"] for r in bobs] == [404, 404] and target.exists()
    refresh, kept, unknown, removed = sdk_v2(
        alice.repo,
        call(alice, "v2.projectCopy.refresh", {"projectID": project_id}),
        call(alice, "v2.projectCopy.remove", {"projectID": project_id, "directory": str(target), "force": False}),
        call(alice, "v2.projectCopy.remove", {"projectID": project_id, "directory": str(alice.root / "nope"),
                                              "force": True}),
        call(alice, "v2.projectCopy.remove", {"projectID": project_id, "directory": str(target), "force": True}))
    assert (refresh["status"], kept["status"], unknown["status"], removed["status"]) == (204, 409, 404, 204)
    assert not target.exists() and not Workspace.objects.filter(directory=str(target)).exists()


# ---- experimental sessions, sync, the control plane, the Console, upgrade -------------------------------

def test_experimental_session_list_spans_projects_and_background_detaches_nothing(alice, bob, sdk_v2):
    from sessions_app.store.sessions import session_update

    first = session_for(alice)
    (alice.root / "other").mkdir()
    from projects_app.contexts import context_for_directory
    from sessions_app.store.sessions import session_create

    elsewhere = session_create(context=context_for_directory(alice.user, str(alice.root / "other")))
    archived = session_for(alice)
    session_update(session=archived, archived=1, archived_given=True)
    listed, with_archived, limited, malformed, bobs, anon = sdk_v2(
        alice.repo,
        call(alice, "experimental.session.list", {}),
        call(alice, "experimental.session.list", {"archived": True}),
        call(alice, "experimental.session.list", {"limit": 1}),
        call(alice, "experimental.session.list", {"limit": "some"}),
        call(bob, "experimental.session.list", {"directory": str(bob.repo)}),
        call(None, "experimental.session.list", {}))
    ids = [x["id"] for x in listed["data"]]
    assert set(ids) == {first.id, elsewhere.id}
    assert {x["id"]: x["project"]["id"] for x in listed["data"]}[elsewhere.id] == elsewhere.project_id
    assert {x["id"] for x in with_archived["data"]} == {first.id, elsewhere.id, archived.id}
    assert len(limited["data"]) == 1
    assert (malformed["status"], anon["status"]) == (400, 401)
    assert bobs["status"] in (200, 403) and not (bobs["data"] or [])
    background, bob_background, unknown = sdk_v2(
        alice.repo,
        call(alice, "experimental.session.background", {"sessionID": first.id}),
        call(bob, "experimental.session.background", {"sessionID": first.id, "directory": str(bob.repo)}),
        call(alice, "experimental.session.background", {"sessionID": UNKNOWN_SESSION}))
    assert background["status"] == 200 and background["data"] is False
    assert bob_background["status"] in (403, 404) and unknown["status"] == 404


def test_sync_reads_history_steals_into_a_workspace_and_refuses_what_it_cannot_do(alice, bob, sdk_v2):
    from sessions_app.models import Session

    session = session_for(alice)
    add_message(session.id, texts=("one",))
    [created] = sdk_v2(alice.repo, call(alice, "experimental.workspace.create", {"type": "worktree"}))
    workspace_id = created["data"]["id"]
    history, known, malformed, start, replay, bad_replay, anon = sdk_v2(
        alice.repo,
        call(alice, "sync.history.list", {"body": {}}),
        call(alice, "sync.history.list", {"body": {session.id: 10**12}}),
        call(alice, "sync.history.list", {"body": {session.id: "late"}}),
        call(alice, "sync.start", {}),
        call(alice, "sync.replay", {"body_directory": str(alice.repo), "events": []}),
        call(alice, "sync.replay", {"body_directory": str(alice.repo), "events": "all"}),
        call(None, "sync.history.list", {"body": {}}))
    assert history["status"] == 200
    assert {e["aggregate_id"] for e in history["data"]} == {session.id}
    assert "message.updated" in {e["type"] for e in history["data"]}
    assert known["data"] == []
    assert (malformed["status"], start["status"], start["data"]) == (400, 200, False)
    assert replay["status"] == 403 and "does not import" in replay["error"]["data"]["message"]
    assert (bad_replay["status"], anon["status"]) == (400, 401)
    steal, bob_steal, unknown, malformed = sdk_v2(
        alice.repo,
        call(alice, "sync.steal", {"sessionID": session.id, "workspace": workspace_id}),
        call(bob, "sync.steal", {"sessionID": session.id, "directory": str(bob.repo)}),
        call(alice, "sync.steal", {"sessionID": UNKNOWN_SESSION, "workspace": workspace_id}),
        call(alice, "sync.steal", {"sessionID": 5}))
    assert steal["status"] == 200 and steal["data"] == {"sessionID": session.id}
    assert Session.objects.get(id=session.id).workspace_id == workspace_id
    assert bob_steal["status"] in (403, 404)
    assert (unknown["status"], malformed["status"]) == (404, 400)
    [bobs_history] = sdk_v2(bob.repo, call(bob, "sync.history.list", {"body": {}}))
    assert bobs_history["status"] == 200 and bobs_history["data"] == []


def test_the_control_plane_moves_a_session_within_its_project_only(alice, bob, sdk_v2):
    from sessions_app.models import Session

    session = session_for(alice)
    [created] = sdk_v2(alice.repo, call(alice, "experimental.workspace.create", {"type": "worktree"}))
    workspace = created["data"]
    into, back, elsewhere, malformed, bobs, anon = sdk_v2(
        alice.repo,
        call(alice, "experimental.controlPlane.moveSession", {"sessionID": session.id,
                                                             "destination": {"directory": workspace["directory"]}}),
        call(alice, "experimental.controlPlane.moveSession", {"sessionID": session.id,
                                                             "destination": {"directory": str(alice.repo)}}),
        call(alice, "experimental.controlPlane.moveSession", {"sessionID": session.id,
                                                             "destination": {"directory": "/tmp"}}),
        call(alice, "experimental.controlPlane.moveSession", {"sessionID": session.id, "destination": "/tmp"}),
        call(bob, "experimental.controlPlane.moveSession", {"sessionID": session.id,
                                                           "destination": {"directory": str(bob.repo)}}),
        call(None, "experimental.controlPlane.moveSession", {"sessionID": session.id,
                                                             "destination": {"directory": str(alice.repo)}}))
    assert into["status"] == 204 and back["status"] == 204
    assert Session.objects.get(id=session.id).workspace_id is None
    assert elsewhere["status"] == 409 and "within their project" in elsewhere["error"]["data"]["message"]
    assert (malformed["status"], bobs["status"], anon["status"]) == (400, 404, 401)


def test_the_console_has_no_orgs_and_upgrade_says_who_upgrades(alice, sdk_v2):
    orgs, switch, bad_switch, anon, upgrade, bad_upgrade, anon_upgrade = sdk_v2(
        alice.repo,
        call(alice, "experimental.console.listOrgs", {}),
        call(alice, "experimental.console.switchOrg", {"accountID": "acct", "orgID": "org"}),
        call(alice, "experimental.console.switchOrg", {"accountID": 1}),
        call(None, "experimental.console.listOrgs", {}),
        call(alice, "global.upgrade", {"target": "1.19.3"}),
        call(alice, "global.upgrade", {"target": 119}),
        call(None, "global.upgrade", {"target": "1.19.3"}))
    assert orgs["status"] == 200 and orgs["data"] == {"orgs": []}
    assert switch["status"] == 404 and "no opencode Console" in switch["error"]["data"]["message"]
    assert (bad_switch["status"], anon["status"]) == (400, 401)
    assert upgrade["status"] == 200 and upgrade["data"]["success"] is False
    assert "administrator" in upgrade["data"]["error"]
    assert (bad_upgrade["status"], anon_upgrade["status"]) == (400, 401)
