"""The PTY WebSocket (`/pty/{id}/connect`, `/api/pty/{id}/connect`), a plain ASGI app rather than a Channels
consumer: a consumer pays a thread hop (close_old_connections) on every frame, which is every keystroke.

Protocol (the reference's): replay from `?cursor=` (0 all, -1 nothing) as text frames, then one binary
frame 0x00 + {"cursor": total}, then live output as text frames. Every client frame, text or binary, is
terminal input, written verbatim. When the process exits the socket is closed with 1000; when the credential
that opened it ends (a revoked or expired token, sign-out, a password change, deactivation), with 4401; when
the organization's policy denies the person's commands (policy_app/direct_commands.py), with 4403 and the
refusal, naming the policy, as the close's reason."""
from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from agentserver.events import bus, connections
from auth_app.websocket import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from policy_app.direct_commands import direct_command_refusal
from pty_app import selectors
from pty_app.buffer import skip_continuation
from pty_app.manager import get_manager, group_name

log = logging.getLogger(__name__)

FRAME_CHARS = 65536
MERGE_LIMIT = 1024 * 1024
SOCKET_HIGH_WATER = 4 * 1024 * 1024
SOCKET_LOW_WATER = 1024 * 1024


def _cursor(scope) -> int:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    try:
        return int(query.get("cursor", ["0"])[0])
    except ValueError:
        return 0


def _cursor_frame(total: int) -> bytes:
    return b"\x00" + json.dumps({"cursor": total}, separators=(",", ":")).encode()


class Backlog:
    """Bytes queued for one socket and not yet sent, with the hysteresis that stops a terminal's output
    while a slow client catches up: `send` waits for the network (the ASGI server writes a frame before it
    returns), so a slow client makes the queue grow. `grew` answers True when the terminal should stop being
    read (past HIGH_WATER), `shrank` when it may be read again (below LOW_WATER)."""

    def __init__(self) -> None:
        self.pending = 0
        self.paused = False

    def grew(self, size: int) -> bool:
        self.pending += size
        if not self.paused and self.pending > SOCKET_HIGH_WATER:
            self.paused = True
            return True
        return False

    def shrank(self, size: int) -> bool:
        self.pending -= size
        if self.paused and self.pending < SOCKET_LOW_WATER:
            self.paused = False
            return True
        return False


class QueueSubscriber:
    """A local socket's share of a terminal's output; a slow client pauses the terminal's reading (its
    child then blocks on its own writes) until the socket catches up."""

    def __init__(self, terminal) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.terminal = terminal
        self.backlog = Backlog()

    def push(self, item: tuple) -> None:
        if item[0] == "output" and self.backlog.grew(len(item[2])):
            self.terminal.pause_reading(self.queue)
        self.queue.put_nowait(item)

    def sent(self, size: int) -> None:
        if self.backlog.shrank(size):
            self.terminal.resume_reading(self.queue)


async def _send_text(send, text: str) -> None:
    for start in range(0, len(text), FRAME_CHARS):
        await send({"type": "websocket.send", "text": text[start:start + FRAME_CHARS]})


async def _pump(subscriber: QueueSubscriber, send) -> None:
    """Queue → socket. Output already queued behind the first item goes out in the same frame."""
    try:
        await _pump_items(subscriber, send)
    except Exception:  # noqa: BLE001  (the client went away mid-send; the receive side cleans up)
        log.debug("pty socket send failed", exc_info=True)


async def _pump_items(subscriber: QueueSubscriber, send) -> None:
    queue = subscriber.queue
    while True:
        item = await queue.get()
        if item[0] == "exit":
            await send({"type": "websocket.close", "code": 1000})
            return
        texts, size = [item[3]], len(item[2])
        while size < MERGE_LIMIT and not queue.empty():
            following = queue.get_nowait()
            if following[0] == "exit":
                await _send_text(send, "".join(texts))
                subscriber.sent(size)
                await send({"type": "websocket.close", "code": 1000})
                return
            texts.append(following[3])
            size += len(following[2])
        await _send_text(send, "".join(texts))
        subscriber.sent(size)


async def _client_frames(receive, write) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.receive":
            data = message.get("bytes")
            if data is None:
                data = (message.get("text") or "").encode()
            result = write(data)
            if result is not None:
                await result  # remote input: awaited in turn so keystrokes keep their order
        elif message["type"] == "websocket.disconnect":
            return


CLOSE_REASON_BYTES = 123  # RFC 6455: a close frame's reason fits in 123 bytes


async def _refuse(send, code: int, reason: str = "") -> None:
    await send({"type": "websocket.accept"})
    reason = reason.encode()[:CLOSE_REASON_BYTES].decode(errors="ignore")
    await send({"type": "websocket.close", "code": code, "reason": reason})


class _Held:
    """A socket held under its credential: ending the credential cancels the socket's work, which then
    closes it with 4401."""

    def __init__(self, send) -> None:
        self.accepted = False
        self.ended: str | None = None
        self.work: asyncio.Future | None = None
        self._send = send

    async def send(self, message: dict) -> None:
        if message["type"] == "websocket.accept":
            self.accepted = True
        await self._send(message)

    def close(self, reason: str) -> None:
        self.ended = self.ended or reason
        if self.work is not None:
            self.work.cancel()


async def pty_socket(scope, receive, send) -> None:
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    credential = scope.get("credential_id")
    if credential is None:
        return await _serve(scope, receive, send)
    relay = bus.bridge()
    if relay is not None:
        await relay.ensure_listening()  # a revocation elsewhere reaches this worker through it
    held = _Held(send)
    held.work = asyncio.ensure_future(_serve(scope, receive, held.send))
    connections.hold(credential, held)
    try:
        await asyncio.wait({held.work})
    finally:
        connections.release(credential, held)
        if not held.work.done():  # this handler was cancelled itself
            held.work.cancel()
    if held.work.cancelled():
        if held.ended is None:
            return
        if not held.accepted:
            await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED})
        return
    held.work.result()


async def _serve(scope, receive, send) -> None:
    pty_id = scope["url_route"]["kwargs"].get("ptyID", "")
    user = scope.get("user")
    row = None
    if pty_id.startswith("pty") and user is not None:
        row = await database_sync_to_async(selectors.pty_lookup)(user=user, pty_id=pty_id)
    if row is None:
        return await _refuse(send, CLOSE_NOT_FOUND)
    # A terminal opened before the policy denied commands is not attached to again.
    refusal = await database_sync_to_async(direct_command_refusal)(user, "Connecting to a terminal")
    if refusal is not None:
        return await _refuse(send, CLOSE_FORBIDDEN, refusal.message)
    manager = get_manager()
    await manager.ensure_started()
    terminal = manager.local_terminal(pty_id)
    if terminal is not None:
        return await _local(terminal, _cursor(scope), receive, send)
    if row.worker_id != manager.worker_id and manager.layer is not None:
        return await _remote(manager, row, _cursor(scope), receive, send)
    return await _refuse(send, CLOSE_NOT_FOUND)


async def _local(terminal, cursor: int, receive, send) -> None:
    subscriber = QueueSubscriber(terminal)
    replay, total = terminal.attach(subscriber, cursor)
    pump = None
    try:
        await send({"type": "websocket.accept"})
        if replay:
            await _send_text(send, replay.decode("utf-8", "replace"))
        await send({"type": "websocket.send", "bytes": _cursor_frame(total)})
        pump = asyncio.ensure_future(_pump(subscriber, send))
        await _client_frames(receive, terminal.write)
    finally:
        terminal.detach(subscriber)
        terminal.resume_reading(subscriber.queue)
        if pump is not None:
            pump.cancel()


async def _remote(manager, row, cursor: int, receive, send) -> None:
    """The terminal runs in another worker: output arrives through group pty.<id> (each chunk with its byte
    offset, so what races the replay is neither lost nor doubled), input goes to the owner's channel."""
    layer = manager.layer
    channel = await layer.new_channel("ptyclient.")
    group = group_name(row.id)
    await layer.group_add(group, channel)
    owner = row.worker_channel
    forward = None
    try:
        await layer.send(owner, {"type": "pty.attach", "id": row.id, "cursor": cursor, "reply": channel})
        early: list[dict] = []
        replay = None
        deadline = asyncio.get_running_loop().time() + manager_timeout()
        while replay is None:
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                incoming = await asyncio.wait_for(layer.receive(channel), max(remaining, 0.01))
            except asyncio.TimeoutError:
                await database_sync_to_async(_forget)(row.id)
                return await _refuse(send, CLOSE_NOT_FOUND)
            if incoming["type"] == "pty.replay":
                replay = incoming
            elif incoming["type"] == "pty.gone":
                return await _refuse(send, CLOSE_NOT_FOUND)
            else:
                early.append(incoming)
        await send({"type": "websocket.accept"})
        if replay["data"]:
            await _send_text(send, replay["data"].decode("utf-8", "replace"))
        await send({"type": "websocket.send", "bytes": _cursor_frame(replay["cursor"])})
        position = [replay["cursor"]]

        async def deliver(incoming: dict) -> bool:
            if incoming["type"] == "pty.exit":
                await send({"type": "websocket.close", "code": 1000})
                return False
            if incoming["type"] == "pty.output":
                data, offset = incoming["data"], incoming["offset"]
                end = offset + len(data)
                if end <= position[0]:
                    return True
                if offset < position[0]:
                    data = data[skip_continuation(data, position[0] - offset):]
                position[0] = end
                await _send_text(send, data.decode("utf-8", "replace"))
            return True

        # The layer is read at once into `outgoing`; the socket is written from it. A slow client makes
        # `outgoing` grow, and past HIGH_WATER bytes the owner is asked to stop reading the terminal for us,
        # so the channel layer never fills up and drops output.
        outgoing: asyncio.Queue = asyncio.Queue()
        backlog = Backlog()
        pause = {"type": "pty.pause", "id": row.id, "reply": channel}
        resume = {"type": "pty.resume", "id": row.id, "reply": channel}
        for incoming in early:
            outgoing.put_nowait(incoming)
        if backlog.grew(sum(len(item.get("data") or b"") for item in early)):
            await layer.send(owner, pause)

        async def collect() -> None:
            while True:
                incoming = await layer.receive(channel)
                outgoing.put_nowait(incoming)
                if backlog.grew(len(incoming.get("data") or b"")):
                    await layer.send(owner, pause)

        async def relay() -> None:
            collecting = asyncio.ensure_future(collect())
            try:
                while True:
                    incoming = await outgoing.get()
                    going_on = await deliver(incoming)
                    if backlog.shrank(len(incoming.get("data") or b"")):
                        await layer.send(owner, resume)
                    if not going_on:
                        return
            finally:
                collecting.cancel()

        forward = asyncio.ensure_future(relay())
        await _client_frames(
            receive, lambda data: layer.send(owner, {"type": "pty.input", "id": row.id, "data": data}))
    finally:
        if forward is not None:
            forward.cancel()
        try:
            await layer.send(owner, {"type": "pty.detach", "id": row.id, "reply": channel})
            await layer.group_discard(group, channel)
        except Exception:  # noqa: BLE001  (the layer may be shutting down)
            log.debug("pty %s: detach failed", row.id, exc_info=True)


def manager_timeout() -> float:
    from pty_app import conf

    return conf.remote_timeout()


def _forget(pty_id: str) -> None:
    from pty_app.store import pty_deleted

    pty_deleted(pty_id)
