"""A `bash` ceiling of deny refuses the person's own commands too: session.shell and opening a terminal answer
403 naming the policy (recorded as refused), and a terminal opened before the policy is not attached to again
(its socket closes with 4403 and the refusal as its reason). An `ask` ceiling lets them run: the person typed
the command, which is the approval `ask` wants."""
from asgiref.sync import sync_to_async
from websockets.asyncio.client import connect

from audit_app.models import AuditRecord
from tests.audit.helpers import details, last_id, records_after
from tests.fakes.fixtures import configure_fake_provider
from tests.policy.conftest import refusal
from tests.pty.conftest import (
    Screen,
    cleanup_ptys,  # noqa: F401  (the fixture removing alice's terminals)
    create_pty,
    open_socket,
    shell_body,
    ws_url,
)

GROUP = "policy of group 'contractors'"


def _session(persona) -> dict:
    response = persona.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()


def test_session_shell_is_refused_naming_the_policy_and_recorded(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(group="contractors", members=[alice], permission_ceilings={"bash": "deny"})
    session = _session(alice)
    mark = last_id()
    data = refusal(alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "touch made"}))
    assert data["policy"] == GROUP and data["field"] == "permission_ceilings" and data["permission"] == "bash"
    assert not (alice.repo / "made").exists()
    assert alice.get(f"/session/{session['id']}/message").json() == []
    rows = records_after(mark, object_type="session")
    assert [(row.action, row.outcome, row.actor_person, row.session) for row in rows] == [
        ("session.shell", "refused", alice.user.pk, session["id"])]
    assert details(rows[0]) == {"command": "touch made", "agent": "build", "policy": GROUP}


def test_a_wildcard_deny_ceiling_refuses_it_too(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(permission_ceilings={"*": "deny"})
    session = _session(alice)
    data = refusal(alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "true"}))
    assert data["policy"] == "policy of everyone"


def test_an_ask_ceiling_lets_the_persons_own_command_run(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(permission_ceilings={"bash": "ask"})
    session = _session(alice)
    mark = last_id()
    response = alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "echo mine"})
    assert response.status_code == 200, response.text
    assert "mine" in response.json()["parts"][0]["state"]["output"]
    assert [(row.action, row.outcome) for row in records_after(mark, object_type="session")] == [("session.shell", "success")]


def test_another_groups_deny_does_not_refuse_her(alice, bob, fake_llm, set_policy, cleanup_ptys):  # noqa: F811
    configure_fake_provider(alice, fake_llm)
    set_policy(group="contractors", members=[bob], permission_ceilings={"bash": "deny"})
    session = _session(alice)
    assert alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "true"}).status_code == 200
    assert alice.post("/pty", json=shell_body()).status_code == 200


def test_opening_a_terminal_is_refused_on_both_mounts_and_recorded(alice, set_policy, cleanup_ptys):  # noqa: F811
    set_policy(group="contractors", members=[alice], permission_ceilings={"bash": "deny"})
    mark = last_id()
    data = refusal(alice.post("/pty", json={"command": "/bin/sh", "args": []}))
    assert data["policy"] == GROUP and data["permission"] == "bash"
    v2 = refusal(alice.post("/api/pty", params={"directory": str(alice.repo)}, json={"command": "/bin/sh"}))
    assert v2["policy"] == GROUP
    assert alice.get("/pty").json() == []
    rows = records_after(mark, object_type="pty")
    assert [(row.action, row.outcome, row.actor_person, row.object_type) for row in rows] == [
        ("pty.opened", "refused", alice.user.pk, "pty")] * 2
    assert details(rows[0])["command"] == "/bin/sh" and details(rows[0])["policy"] == GROUP


async def test_a_terminal_opened_before_the_policy_is_not_attached_again(alice, set_policy, cleanup_ptys):  # noqa: F811
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"], cursor=0) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        assert screen.closed_code is None
    await sync_to_async(set_policy)(group="contractors", members=[alice], permission_ceilings={"bash": "deny"})
    mark = await sync_to_async(last_id)()
    for v2 in (False, True):
        async with connect(ws_url(alice, pty["id"], v2=v2),
                           additional_headers={"Authorization": f"Bearer {alice.token}"}) as ws:
            screen = Screen(ws)
            assert await screen.closed() == 4403
            assert screen.text == "" and screen.cursors == []
            assert GROUP in ws.close_reason and "bash" in ws.close_reason
    assert not await AuditRecord.objects.filter(id__gt=mark, action="pty.opened").aexists()
