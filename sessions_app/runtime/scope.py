"""RunScope: what a runner hands the turn, compaction, subtasks and resume — the session being answered,
its abort signal, the runner's hold on the lease (runtime/lease_keeper.py), and the few things they all do with them (set the status, open
and close assistant messages, make and run a step). Child sessions of task calls get a scope of their own
that shares the parent's abort signal.

A child scope runs under the supervisor's `running_child` while its parent's task call answers it."""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Callable

from agentserver.workers.loop import db
from sessions_app.models import Message, Session
from sessions_app.runtime import parts
from sessions_app.runtime.history import system_prompt
from sessions_app.runtime.lease_keeper import LeaseKeeper
from sessions_app.runtime.step import Step, StepProcessor
from sessions_app.runtime.step_snapshots import StepSnapshots
from sessions_app.store import messages as message_service
from sessions_app.store.leases import IDLE
from sessions_app.store.rows import session_row

log = logging.getLogger(__name__)


@dataclass
class RunScope:
    session: Session
    lease: LeaseKeeper                     # the runner's hold on this session's lease (and its children's)
    supervisor: object                     # runtime/supervisor.py Supervisor: which sessions run here
    abort_event: asyncio.Event = field(default_factory=asyncio.Event)
    context: object | None = None          # the RuntimeContext of the turn in progress
    config: dict | None = None             # and its effective config
    _stored_status: dict | None = field(default=None, init=False, repr=False)  # last written to the lease row

    @property
    def session_id(self) -> str:
        return self.session.id

    def abort(self) -> None:
        self.abort_event.set()

    def child(self, session: Session) -> "RunScope":
        return RunScope(session=session, lease=self.lease, supervisor=self.supervisor,
                        abort_event=self.abort_event, context=self.context)

    async def begin_turn(self, user: Message):
        """The turn answering `user` (runtime/turn_setup.py), with the snapshots its steps share."""
        from sessions_app.runtime.turn_setup import prepare_turn

        turn = await db(prepare_turn)(self.session, user)
        turn.snapshots = StepSnapshots(session=self.session, context=turn.context, config=turn.config)
        self.context, self.config = turn.context, turn.config
        return turn

    # ---- status -----------------------------------------------------------------------------------
    async def set_status(self, status: dict) -> None:
        """Every call is announced (opencode says busy before each step and again at its first part), the
        lease row is written only when the status changed."""
        if status != self._stored_status:
            await self.lease.set_status(self.session_id, status)
            self._stored_status = status
        message_service.publish_for(self.session, "session.status", {"sessionID": self.session_id, "status": status})

    async def go_idle(self) -> None:
        sid = self.session_id
        await self.lease.release(sid)
        self._stored_status = IDLE
        message_service.publish_for(self.session, "session.status", {"sessionID": sid, "status": IDLE})
        message_service.publish_for(self.session, "session.idle", {"sessionID": sid})
        await db(_publish_session_updated)(sid)

    # ---- assistant messages -----------------------------------------------------------------------
    def assistant_info(self, user: Message, agent_name: str, model: dict) -> dict:
        context, session = self.context, self.session
        return parts.assistant_info(
            session_id=session.id, parent_id=user.id, agent_name=agent_name, model=model,
            cwd=context.directory if context else session.directory,
            root=context.worktree if context and context.vcs else session.directory)

    async def open_assistant(self, user: Message, agent_name: str, model: dict, **extra) -> dict:
        info = {**self.assistant_info(user, agent_name, model), **extra}
        await db(message_service.message_save)(session=self.session, info=info, new=True)
        return info

    async def close_assistant(self, info: dict, *, error: dict | None = None) -> None:
        """Complete the message (time.completed) and store it (its message.updated wakes the waiters); not
        when the lease was lost meanwhile: the message is the next holder's to go on with."""
        if not self.lease.holds_own:
            return
        await db(message_service.message_save)(session=self.session, info=dict(parts.completed(info, error=error)))

    async def abort_queue(self) -> None:
        """An abort also answers the prompts queued behind the aborted one, with an aborted message each."""
        from sessions_app.runtime.message_queue import pending_all

        for user in await db(pending_all)(self.session_id):
            info = parts.completed(self.assistant_info(user, user.info.get("agent") or "build",
                                                       user.info.get("model") or {}), error=parts.ABORTED)
            await db(message_service.message_save)(session=self.session, info=info)

    # ---- steps ------------------------------------------------------------------------------------
    def new_step(self, turn, info: dict, *, messages: list[dict], tools: dict, agent: dict | None = None,
                 system: list[str] | None = None, user_info: dict | None = None,
                 temperature: float | None = None, run_child: Callable | None = None) -> StepProcessor:
        """The one way to make a step: `turn` is a turn_setup.Turn; `agent` and `system` default to the
        turn's agent and its system prompt."""
        agent = agent or turn.agent
        if system is None:
            system = system_prompt(context=turn.context, agent=agent, user_info=user_info or {})
        return StepProcessor(Step(
            session=self.session, context=turn.context, config=turn.config, agent=agent, info=info, system=system,
            messages=messages, tools=tools, rules=turn.rules, abort=self.abort_event, run_child=run_child,
            set_status=self.set_status, temperature=temperature, snapshots=turn.snapshots))

    async def run_step(self, processor: StepProcessor, work=None) -> str:
        """Run the step's model call (or `work`, a coroutine doing the step's calls without one) until it
        ends or the session is aborted: "continue", "stop" or "aborted"."""
        step = asyncio.create_task(work or processor.run())
        aborted = asyncio.create_task(self.abort_event.wait())
        try:
            await asyncio.wait({step, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if step.done():
            return step.result()
        lost = not self.lease.holds_own
        if lost:  # the lease went to another runner: it goes on with this step (runtime/resume.py)
            processor.message.fence()
        step.cancel()
        try:
            await step
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("step failed while aborting")
        if lost:
            await processor.count_cut_call()
            await processor.tools.cancel()
            return "aborted"
        await processor.finalize_aborted()
        message_service.publish_for(self.session, "session.error", {"sessionID": self.session_id,
                                                                    "error": parts.ABORTED})
        return "aborted"

    async def run_calls(self, processor: StepProcessor, calls: list[tuple[str, str, dict]]) -> str:
        """A step without a model call: run these (call id, tool, input) calls, as subtasks and resume do."""
        async def work() -> str:
            for call_id, name, args in calls:
                await processor.run_call(call_id, name, args)
            await processor.tools.wait()
            return "stop" if processor.blocked else "continue"

        outcome = await self.run_step(processor, work())
        if outcome != "aborted":
            processor.calls_done()
        await self.close_assistant(processor.info)
        return outcome


def _publish_session_updated(session_id: str) -> None:
    from sessions_app.wire import session_event

    session = session_row(session_id)
    if session is not None:
        message_service.publish_for(session, "session.updated", session_event(session))
