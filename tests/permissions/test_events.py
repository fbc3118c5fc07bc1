import asyncio

from agentserver.events import publisher as events
from agentserver.models import EventLog
from sessions_app.models import PermissionRequest
from sessions_app.services.permissions import permission_reply
from tests.permissions.helpers import run_sync
from tests.permissions.test_ask_and_reply import ask, pending
from tests.tools.harness import run_tool


def logged(type_: str) -> list[dict]:
    events.flush()
    return [e.properties for e in EventLog.objects.filter(type=type_).order_by("id")]


async def test_asking_and_replying_publish_their_events(ws):
    task = ask(ws)
    [request] = await pending(ws, 1)
    await run_sync(lambda: permission_reply(user=ws.user, request_id=request.id, reply="once"))
    await asyncio.wait_for(task, 5)
    asked = await run_sync(lambda: logged("permission.asked"))
    assert asked == [{"id": request.id, "sessionID": ws.session.id, "permission": "edit", "patterns": ["a.txt"],
                      "metadata": {"filepath": "a"}, "always": ["*"],
                      "tool": {"messageID": "msg_1", "callID": "call_1"}}]
    replied = await run_sync(lambda: logged("permission.replied"))
    assert replied == [{"sessionID": ws.session.id, "requestID": request.id, "reply": "once"}]
    assert await run_sync(lambda: PermissionRequest.objects.get(id=request.id).reply) == "once"


async def test_write_publishes_file_edited_and_todowrite_todo_updated(ws):
    path = str(ws.repo / "new.txt")
    await run_tool(ws, "write", {"filePath": path, "content": "x"})
    await run_tool(ws, "todowrite", {"todos": [{"content": "a", "status": "pending", "priority": "low"}]})
    assert await run_sync(lambda: logged("file.edited")) == [{"file": path}]
    assert await run_sync(lambda: logged("todo.updated")) == [
        {"sessionID": ws.session.id, "todos": [{"content": "a", "status": "pending", "priority": "low"}]}]
