"""One of each object a route's path can name, owned by a persona and made through the API (the runner makes
the permission request and the question, as it would for a real prompt), for the battery's other-user column.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from tests.conftest import make_repo
from tests.fakes.fixtures import FAKE_MODEL, FAKE_PROVIDER, Reply, configure_fake_provider
from tests.foundation.routes import Route
from tests.runner.conftest import text_prompt, wait_until

QUESTION = {"questions": [{"question": "Which colour?", "header": "Colour",
                           "options": [{"label": "red", "description": "warm"},
                                       {"label": "blue", "description": "cold"}]}]}
MCP_SERVER = "alices-server"


@dataclass
class Objects:
    """The persona's objects by the path parameter that names them."""

    ids: dict[str, str]
    sessions: list[str] = field(default_factory=list)

    def private_ids(self) -> dict[str, str]:
        """The ids only their owner may ever see (provider, model and server names are not secrets; a file name
        is not an id; a saved permission's id is a small number that any body may hold by chance: that bob's
        saved list stays empty is tests/clients/test_js_sdk_v2.py's)."""
        return {name: value for name, value in self.ids.items()
                if name not in ("providerID", "modelID", "name", "path", "savedPermissionID")}

    def value(self, route: Route, param: str) -> str | None:
        if param == "requestID":  # both kinds of request are named `requestID` (v2: under /session/{id}/)
            return self.ids["questionID" if "/question/" in route.path else "permissionID"]
        if param == "id":  # a saved permission (v2) or a workspace (1.18's experimental routes)
            return self.ids["savedPermissionID" if "/permission/saved/" in route.path else "workspaceID"]
        return self.ids.get(param)


def _ok(response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()


def _wait_for(persona, kind: str) -> dict:
    return wait_until(lambda: persona.get(f"/{kind}").json())[0]


def build(persona, fake_llm) -> Objects:
    """A session with a message, a pending permission request, a pending question, a terminal, a workspace,
    an auth account, an MCP server, a provider of the persona's own config, and a project no one else has."""
    directory = {"directory": str(persona.repo)}
    configure_fake_provider(persona, fake_llm)
    fake_llm.script(Reply(text="hello from the fake"))
    session = _ok(persona.post("/session", params=directory, json={"title": "alice's"}))
    answer = _ok(persona.post(f"/session/{session['id']}/message", json=text_prompt("hi")))

    asking = _ok(persona.post("/session", params=directory, json={}))
    outside = persona.root / "outside.txt"
    outside.write_text("outside the repo\n")
    # Only the calls that ask: the runners wait for answers that never come until tear_down aborts them.
    fake_llm.script(Reply(tool_calls=[("read", {"filePath": str(outside)})]))
    persona.post(f"/session/{asking['id']}/prompt_async", json=text_prompt("read outside"))
    permission = _wait_for(persona, "permission")

    questioning = _ok(persona.post("/session", params=directory, json={}))
    fake_llm.script(Reply(tool_calls=[("question", QUESTION)]))
    persona.post(f"/session/{questioning['id']}/prompt_async", json=text_prompt("ask me"))
    question = _wait_for(persona, "question")

    pty = _ok(persona.post("/pty", params=directory, json={"command": "/bin/sh"}))
    workspace = _ok(persona.post("/api/workspace", json={"type": "directory", "directory": str(persona.repo)}))
    account = _ok(persona.post("/api/auth", json={"serviceID": "openai",
                                                   "credential": {"type": "api", "key": "sk-test-123456"}}))
    _ok(persona.post("/api/mcp/server", params=directory,
                     json={"name": MCP_SERVER, "config": {"type": "remote", "url": "http://127.0.0.1:9/mcp",
                                                          "enabled": False}}))
    # A remembered `always` approval (v2 permission.saved.*): asked through v2 and answered `always`.
    asked = _ok(persona.post(f"/api/session/{session['id']}/permission",
                             json={"action": "external_directory", "resources": ["/srv/alice-only/*"]}))["data"]
    assert persona.post(f"/api/session/{session['id']}/permission/{asked['id']}/reply",
                        json={"reply": "always"}).status_code == 204
    [saved] = _ok(persona.get("/api/permission/saved"))["data"]
    # An OAuth attempt in progress (v2 integration.attempt.*) and a file only this persona has (v2 fs.read).
    attempt = _ok(persona.post("/api/integration/openai/connect/oauth", params=directory,
                               json={"methodID": "0", "inputs": {}}))["data"]
    (persona.repo / "alice-only.txt").write_text("mine\n")
    # Everyone's first repository has the same files and may have the same root commit (= project id).
    own = make_repo(persona.root / "own-project", {"unique.txt": uuid.uuid4().hex})
    project = _ok(persona.get("/project/current", params={"directory": str(own)}))

    return Objects(ids={
        "sessionID": session["id"], "messageID": answer["info"]["id"], "partID": answer["parts"][0]["id"],
        "permissionID": permission["id"],
        "questionID": question["id"], "ptyID": pty["id"], "workspaceID": workspace["id"],
        "accountID": account["id"], "credentialID": account["id"], "projectID": project["id"], "name": MCP_SERVER,
        "savedPermissionID": saved["id"], "attemptID": attempt["attemptID"], "path": "alice-only.txt",
        "providerID": FAKE_PROVIDER, "modelID": FAKE_MODEL,
    }, sessions=[session["id"], asking["id"], questioning["id"]])


def assert_intact(persona, objects: Objects) -> None:
    """Everything is still there (and the requests still pending) after someone else's attempts."""
    ids = objects.ids
    for url in (f"/session/{ids['sessionID']}", f"/session/{ids['sessionID']}/message/{ids['messageID']}",
                f"/pty/{ids['ptyID']}", f"/api/workspace/{ids['workspaceID']}", f"/api/auth/{ids['accountID']}",
                f"/api/project/{ids['projectID']}"):
        assert persona.get(url).status_code == 200, url
    assert ids["permissionID"] in {r["id"] for r in persona.get("/permission").json()}
    assert ids["questionID"] in {r["id"] for r in persona.get("/question").json()}
    assert ids["savedPermissionID"] in {r["id"] for r in persona.get("/api/permission/saved").json()["data"]}
    assert persona.get(f"/api/integration/attempt/{ids['attemptID']}",
                       params={"directory": str(persona.repo)}).status_code == 200


def tear_down(persona, objects: Objects) -> None:
    for session_id in objects.sessions:
        persona.post(f"/session/{session_id}/abort")
    persona.delete(f"/pty/{objects.ids['ptyID']}")
