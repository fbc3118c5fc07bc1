import os
import threading

from django.conf import settings

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until


def server_home(persona) -> str:
    return os.path.join(settings.DATA_DIR, "users", str(persona.user.pk), "home")


def test_shell_runs_without_the_model(alice, llm, session_of):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "echo hi-from-shell && pwd"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["info"]["role"] == "assistant" and body["info"]["time"]["completed"]
    part = body["parts"][0]
    assert part["tool"] == "bash" and part["state"]["status"] == "completed"
    assert part["state"]["output"] == f"hi-from-shell\n{alice.repo}\n"
    assert part["state"]["input"] == {"command": "echo hi-from-shell && pwd"}
    assert llm.requests == []
    user = alice.get(f"/session/{session['id']}/message").json()[0]
    assert user["parts"][0]["text"] == "The following tool was executed by the user"
    assert user["parts"][0]["synthetic"] is True


def test_shell_validates_its_body(alice, bob, anon, llm, session_of):
    session = session_of()
    url = f"/session/{session['id']}/shell"
    assert alice.post(url, json={"command": "echo x"}).status_code == 400
    assert alice.post(url, json={"agent": "build"}).status_code == 400
    assert alice.post(url, json={"agent": "nope", "command": "echo x"}).status_code == 400
    assert bob.post(url, json={"agent": "build", "command": "echo x"}).status_code == 404
    assert anon.post(url, json={"agent": "build", "command": "echo x"}).status_code == 401


def test_shell_on_a_busy_session_is_409(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text=" ".join(["slow"] * 40), delay=0.1))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("x"))
    wait_until(lambda: session["id"] in alice.get("/session/status").json())
    response = alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "echo x"})
    assert response.status_code == 409
    assert response.json()["name"] == "SessionBusyError"
    alice.post(f"/session/{session['id']}/abort")


def test_abort_stops_a_running_shell(alice, llm, session_of):
    """Ten times: an abort lands at a different moment of the command's start each time (under load, one in
    a few dozen once landed while bubblewrap was still building the sandbox, and the command ran its 30 s)."""
    for _ in range(10):
        session = session_of()
        result = {}

        def run(session_id=session["id"], result=result):
            result["body"] = alice.post(f"/session/{session_id}/shell",
                                        json={"agent": "build", "command": "echo started; sleep 30"}).json()

        thread = threading.Thread(target=run)
        thread.start()
        wait_until(lambda session_id=session["id"]: session_id in alice.get("/session/status").json())
        alice.post(f"/session/{session['id']}/abort")
        thread.join(20)
        assert not thread.is_alive(), "the aborted command kept running"
        assert "User aborted the command" in result["body"]["parts"][0]["state"]["output"]


def test_shell_commands_never_see_the_servers_secrets(alice, llm, session_of, server):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "env"})
    assert response.status_code == 200, response.text
    output = response.json()["parts"][0]["state"]["output"]
    names = {line.split("=", 1)[0] for line in output.splitlines() if "=" in line}
    assert "PATH" in names and names.isdisjoint({"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"})
    assert not any(name.startswith(("AGENTSERVER_", "DJANGO_")) for name in names)
    assert server.env["DATABASE_URL"] not in output
    assert f"HOME={server_home(alice)}" in output.splitlines()  # the sandbox's per-user HOME, not the server's
