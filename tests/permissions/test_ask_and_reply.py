import asyncio

import pytest
from asgiref.sync import sync_to_async

from agentserver.errors import NotFound
from sessions_app.models import PermissionApproval, PermissionRequest
from sessions_app.runtime.tools.base import PermissionRejected, ToolError
from sessions_app.services.permissions import ask_permission, permission_list, permission_reply, reject_pending
from tests.permissions.helpers import run_sync

ASK = [{"permission": "*", "pattern": "*", "action": "ask"}]


def ask(ws, permission="edit", patterns=("a.txt",), always=("*",), rules=ASK, call_id="call_1", abort=None):
    return asyncio.ensure_future(ask_permission(
        session=ws.session, permission=permission, patterns=list(patterns), metadata={"filepath": "a"},
        always=list(always), tool_ref={"messageID": "msg_1", "callID": call_id}, rules=rules, abort=abort))


async def pending(ws, count):
    for _ in range(200):
        rows = await run_sync(lambda: list(PermissionRequest.objects.filter(session=ws.session, status="pending")
                                           .order_by("id")))
        if len(rows) >= count:
            return rows
        await asyncio.sleep(0.05)
    raise AssertionError("requests did not appear")


async def test_allowed_patterns_pass_without_a_request(ws):
    await ask_permission(session=ws.session, permission="edit", patterns=["a"], rules=[
        {"permission": "edit", "pattern": "*", "action": "allow"}])
    assert not await run_sync(PermissionRequest.objects.exists)


async def test_a_deny_rule_is_a_tool_error_with_the_reference_text(ws):
    rules = [{"permission": "bash", "pattern": "rm *", "action": "deny"}]
    with pytest.raises(ToolError, match="^The user has specified a rule which prevents you from using this "
                                        "specific tool call. Here are some of the relevant rules "):
        await ask_permission(session=ws.session, permission="bash", patterns=["rm -rf x"], rules=rules)


async def test_once_lets_the_tool_continue(ws):
    task = ask(ws)
    [request] = await pending(ws, 1)
    listed = await run_sync(lambda: permission_list(user=ws.user))
    assert listed == [{"id": request.id, "sessionID": ws.session.id, "permission": "edit", "patterns": ["a.txt"],
                       "metadata": {"filepath": "a"}, "always": ["*"],
                       "tool": {"messageID": "msg_1", "callID": "call_1"}}]
    await run_sync(lambda: permission_reply(user=ws.user, request_id=request.id, reply="once"))
    assert await asyncio.wait_for(task, 5) is None
    with pytest.raises(NotFound):
        await run_sync(lambda: permission_reply(user=ws.user, request_id=request.id, reply="once"))


async def test_always_is_remembered_for_the_project_and_settles_covered_requests(ws):
    first, second = ask(ws, call_id="c1"), ask(ws, patterns=("b.txt",), call_id="c2")
    rows = await pending(ws, 2)
    await run_sync(lambda: permission_reply(user=ws.user, request_id=rows[0].id, reply="always"))
    await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert await run_sync(lambda: list(PermissionApproval.objects.values_list("permission", "pattern"))) == [
        ("edit", "*")]
    statuses = await run_sync(lambda: sorted(PermissionRequest.objects.values_list("reply", flat=True)))
    assert statuses == ["always", "always"]
    await asyncio.wait_for(ask(ws, patterns=("c.txt",), call_id="c3"), 5)  # no new request


async def test_reject_halts_and_rejects_the_sessions_other_requests(ws):
    first, second = ask(ws, call_id="c1"), ask(ws, permission="bash", patterns=("ls",), call_id="c2")
    rows = await pending(ws, 2)
    await run_sync(lambda: permission_reply(user=ws.user, request_id=rows[0].id, reply="reject"))
    for task in (first, second):
        with pytest.raises(PermissionRejected, match="^The user rejected permission to use this specific tool call.$") as caught:
            await asyncio.wait_for(task, 5)
        assert caught.value.halts


async def test_reject_with_a_message_carries_the_feedback_and_does_not_halt(ws):
    task = ask(ws)
    [request] = await pending(ws, 1)
    await run_sync(lambda: permission_reply(user=ws.user, request_id=request.id, reply="reject", message="not now"))
    with pytest.raises(PermissionRejected) as caught:
        await asyncio.wait_for(task, 5)
    assert str(caught.value) == ("The user rejected permission to use this specific tool call with the following "
                                 "feedback: not now")
    assert not caught.value.halts


async def test_abort_rejects_the_waiting_request(ws):
    abort = asyncio.Event()
    task = ask(ws, abort=abort)
    [request] = await pending(ws, 1)
    abort.set()
    with pytest.raises(PermissionRejected):
        await asyncio.wait_for(task, 5)
    assert await run_sync(lambda: PermissionRequest.objects.get(id=request.id).reply) == "reject"


async def test_reject_pending_unblocks_every_waiting_tool(ws):
    task = ask(ws)
    await pending(ws, 1)
    assert await run_sync(lambda: reject_pending(session=ws.session)) == 1
    with pytest.raises(PermissionRejected):
        await asyncio.wait_for(task, 5)


async def test_a_rerun_tool_call_finds_its_earlier_request(ws):
    """After a worker restart the runner re-runs the call: the answered request is not asked again."""
    task = ask(ws, call_id="same")
    [request] = await pending(ws, 1)
    task.cancel()
    await run_sync(lambda: permission_reply(user=ws.user, request_id=request.id, reply="once"))
    await asyncio.wait_for(ask(ws, call_id="same"), 5)
    assert await run_sync(PermissionRequest.objects.count) == 1


async def test_another_users_request_is_not_found(ws, django_user_model):
    bob = await run_sync(lambda: django_user_model.objects.create_user(username="bob", password="x"))
    task = ask(ws)
    [request] = await pending(ws, 1)
    with pytest.raises(NotFound):
        await run_sync(lambda: permission_reply(user=bob, request_id=request.id, reply="once"))
    assert await run_sync(lambda: permission_list(user=bob)) == []
    task.cancel()
