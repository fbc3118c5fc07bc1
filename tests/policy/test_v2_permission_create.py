"""v2 session.permission.create judges an action after every rule and remembered approval, then the ceiling."""
import json


def create(persona, session_id: str, action: str, resources: list[str]) -> dict:
    answer = persona.post(f"/api/session/{session_id}/permission", params={"directory": str(persona.repo)},
                          json={"action": action, "resources": resources})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_an_allowed_action_asks_or_is_denied_under_its_ceiling(alice, set_policy):
    (alice.repo / "opencode.json").write_text(json.dumps({"permission": {"bash": "allow", "webfetch": "allow"}}))
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    assert create(alice, session["id"], "bash", ["ls"])["effect"] == "allow"
    set_policy(permission_ceilings={"bash": "ask", "webfetch": "deny"})
    assert create(alice, session["id"], "bash", ["ls"])["effect"] == "ask"
    assert create(alice, session["id"], "webfetch", ["https://example.com"])["effect"] == "deny"
    assert create(alice, session["id"], "read", ["README.md"])["effect"] == "allow"
