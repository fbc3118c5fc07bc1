"""Run tools the way the runner will: a real session, a real ToolContext whose `ask` is the real
permission service (rows in the test database), no server needed."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from asgiref.sync import sync_to_async

from agentserver import ids
from tests.conftest import make_repo

ALLOW_ALL = [{"permission": "*", "pattern": "*", "action": "allow"}]
ASK_OUTSIDE = ALLOW_ALL + [{"permission": "external_directory", "pattern": "*", "action": "ask"}]


@dataclass
class Workspace:
    user: object
    root: Path
    repo: Path
    context: object
    session: object
    updates: list = field(default_factory=list)

    def tool_context(self, *, rules=None, abort: asyncio.Event | None = None, config: dict | None = None,
                     call_id: str | None = None):
        from sessions_app.runtime.tools.base import ToolContext
        from sessions_app.services.permissions import asker

        abort = abort or asyncio.Event()
        message_id = ids.ascending("msg")
        call_id = call_id or f"call_{ids.ascending('prt')[-8:]}"

        async def update(**kwargs):
            self.updates.append(kwargs)

        return ToolContext(
            session_id=self.session.id, message_id=message_id, call_id=call_id, agent="build", context=self.context,
            abort=abort, ask=asker(session=self.session, rules=ALLOW_ALL if rules is None else rules,
                                   message_id=message_id, call_id=call_id, abort=abort),
            update=update, config=config if config is not None else {})


def make_workspace(name: str, base: Path) -> Workspace:
    from django.contrib.auth import get_user_model

    from projects_app.contexts import context_for_directory
    from auth_app.tokens import roots_add
    from sessions_app.store.sessions import session_create

    user = get_user_model().objects.create_user(username=name, password="x")
    root = (base / name).resolve()
    make_repo(root / "repo", {"README.md": "hello\n", "src/app.py": "def main():\n    return 1\n"})
    roots_add(user=user, path=str(root))
    context = context_for_directory(user, str(root / "repo"))
    session = session_create(context=context)
    return Workspace(user=user, root=root, repo=root / "repo", context=context, session=session)


def _record(session, tool: str, args: dict, result) -> None:
    """What the runner stores once a tool completes (the read-before-write check looks at these)."""
    from projects_app.models import now_ms
    from sessions_app.store.messages import message_save, part_save

    message_id = ids.ascending("msg")
    message_save(session=session, info={"id": message_id, "role": "assistant", "time": {"created": now_ms()}})
    part_save(session=session, part={
        "id": ids.ascending("prt"), "messageID": message_id, "type": "tool", "tool": tool, "callID": "call_x",
        "state": {"status": "completed", "input": args, "output": result.output, "title": result.title,
                  "metadata": result.metadata, "time": {"start": now_ms(), "end": now_ms()}}})


async def run_tool(workspace: Workspace, tool_id: str, args: dict, *, record: bool = True, **ctx_kwargs):
    from sessions_app.runtime.tool_registry import get_tool

    ctx = workspace.tool_context(**ctx_kwargs)
    tool = get_tool(tool_id, context=workspace.context, config=ctx.config)
    result = await tool.run(args, ctx)
    if record:
        await sync_to_async(_record, thread_sensitive=False)(workspace.session, tool_id, args, result)
    return result


async def wait_for_request(model, session, timeout: float = 10.0):
    """The first pending PermissionRequest / Question row of the session, once the tool has asked."""
    def pending():
        return model.objects.filter(session=session, status="pending").order_by("id").first()

    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        row = await sync_to_async(pending, thread_sensitive=False)()
        if row is not None:
            return row
        await asyncio.sleep(0.05)
    raise AssertionError("no pending request appeared")
