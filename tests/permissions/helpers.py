from asgiref.sync import sync_to_async


async def run_sync(fn):
    return await sync_to_async(fn, thread_sensitive=False)()


import asyncio  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402


class Background:
    """A coroutine of our services running on its own loop in a thread, as a waiting tool would in a runner:
    the HTTP reply goes to the live server, the waiter sees it through the database."""

    def __init__(self, factory):
        self.result = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(factory,), daemon=True)
        self.thread.start()

    def _run(self, factory):
        try:
            self.result = asyncio.run(factory())
        except BaseException as error:  # noqa: BLE001 - reported to the test
            self.error = error

    def join(self, timeout: float = 10.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the waiter did not finish"
        return self


def session_for(persona):
    from projects_app.contexts import context_for_directory
    from sessions_app.store.sessions import session_create

    return session_create(context=context_for_directory(persona.user, str(persona.repo)))


def wait_pending(model, session, count: int = 1):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rows = list(model.objects.filter(session=session, status="pending").order_by("id"))
        if len(rows) >= count:
            return rows
        time.sleep(0.05)
    raise AssertionError("no pending request appeared")


def ask_in_background(session, *, permission="edit", patterns=("a.txt",), call_id="call_1"):
    from sessions_app.services.permissions import ask_permission

    return Background(lambda: ask_permission(
        session=session, permission=permission, patterns=list(patterns), metadata={"filepath": "a.txt"},
        always=["*"], tool_ref={"messageID": "msg_1", "callID": call_id},
        rules=[{"permission": "*", "pattern": "*", "action": "ask"}]))


def question_in_background(session, questions, *, call_id="call_q"):
    from sessions_app.services.questions import ask_question

    return Background(lambda: ask_question(session=session, questions=questions,
                                           tool_ref={"messageID": "msg_1", "callID": call_id}))
