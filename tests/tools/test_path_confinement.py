import asyncio

import pytest
from asgiref.sync import sync_to_async

from sessions_app.models import PermissionRequest
from sessions_app.runtime.tools.base import PermissionRejected, ToolError
from sessions_app.services.permissions import permission_reply
from tests.tools.harness import ASK_OUTSIDE, run_tool, wait_for_request


async def test_a_path_outside_the_worktree_asks_external_directory(ws):
    outside = ws.root / "notes.txt"
    outside.write_text("outside\n")
    task = asyncio.ensure_future(run_tool(ws, "read", {"filePath": str(outside)}, rules=ASK_OUTSIDE))
    request = await wait_for_request(PermissionRequest, ws.session)
    assert request.permission == "external_directory"
    assert request.patterns == [f"{ws.root}/*"]
    assert request.always == [f"{ws.root}/*"]
    assert request.metadata == {"filepath": str(outside), "parentDir": str(ws.root)}
    assert request.tool["callID"]
    await sync_to_async(permission_reply, thread_sensitive=False)(user=ws.user, request_id=request.id, reply="once")
    result = await asyncio.wait_for(task, 10)
    assert "1: outside" in result.output


async def test_a_rejected_external_directory_stops_the_tool(ws):
    task = asyncio.ensure_future(run_tool(ws, "write", {"filePath": str(ws.root / "x.txt"), "content": "x"},
                                          rules=ASK_OUTSIDE))
    request = await wait_for_request(PermissionRequest, ws.session)
    await sync_to_async(permission_reply, thread_sensitive=False)(user=ws.user, request_id=request.id,
                                                                  reply="reject")
    with pytest.raises(PermissionRejected, match="^The user rejected permission to use this specific tool call.$"):
        await asyncio.wait_for(task, 10)
    assert not (ws.root / "x.txt").exists()


async def test_a_path_outside_the_users_roots_is_a_hard_error(ws):
    with pytest.raises(ToolError, match="outside the directories you are allowed to use"):
        await run_tool(ws, "read", {"filePath": "/etc/hostname"}, rules=ASK_OUTSIDE)
    assert not await sync_to_async(PermissionRequest.objects.exists, thread_sensitive=False)()


async def test_a_symlink_out_of_the_roots_is_refused(ws):
    (ws.repo / "escape").symlink_to("/etc")
    with pytest.raises(ToolError, match="outside the directories"):
        await run_tool(ws, "read", {"filePath": str(ws.repo / "escape/hostname")})


async def test_bash_naming_a_path_outside_the_roots_is_refused(ws):
    with pytest.raises(ToolError, match="outside the directories"):
        await run_tool(ws, "bash", {"command": "cat /etc/hostname"})
