"""Sharing refused by the policy: share is a 403 naming it, and `share: "auto"` in a project's config shares
nothing."""
import json

from tests.policy.conftest import refusal


def test_sharing_a_session_is_refused_naming_the_policy(alice, set_policy):
    set_policy(group="contractors", members=[alice], sharing_allowed=False)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    data = refusal(alice.post(f"/session/{session['id']}/share"))
    assert data["policy"] == "policy of group 'contractors'" and data["field"] == "share"
    assert alice.get(f"/session/{session['id']}").json().get("share") is None


def test_auto_sharing_from_a_project_file_shares_nothing(alice, set_policy):
    (alice.repo / "opencode.json").write_text(json.dumps({"share": "auto"}))
    set_policy(sharing_allowed=False)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    assert session.get("share") is None


def test_another_groups_refusal_does_not_apply(alice, bob, set_policy):
    set_policy(group="contractors", members=[bob], sharing_allowed=False)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    assert alice.post(f"/session/{session['id']}/share").status_code == 200
