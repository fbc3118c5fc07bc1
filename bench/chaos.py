"""Chaos benchmark (issue 33, crash-proof turns): two hosts behind nginx under prompt load while one host at a
time is killed with SIGKILL every 20-40 s; at the end every acknowledged prompt must have exactly one complete
answer and every person's live event stream must have got every event of theirs, in id order, and no one
else's.

    .venv/bin/python bench/chaos.py --seconds 600        # the goal run (10 minutes of load, then a settle)
    .venv/bin/python bench/chaos.py --seconds 60         # a short run

Set-up (all of it thrown away at the end): a database of its own (`bench_chaos` on 127.0.0.1:5432, user
postgres, created, migrated and dropped), Redis db 6 (emptied before and after), 5 users each with a token,
a root (a git repo in a temp dir) and the fake provider as their model; two simulated hosts from
tests/hosts/cluster.py (`server.serve --workers 2` each, own data dir, hostname and clock, 4 s behind and
ahead) behind nginx from deploy/nginx-agentserver.conf; the fake model of this file (tests/fakes/llm.py's
server, answering from the prompt's text, so any number of sessions may interleave).

Load: 5 people, 12 sessions. Each person keeps one `/global/event` stream open through nginx, reconnecting
with Last-Event-ID whenever it drops. Each session loop sends prompts of four kinds, to either host at
random (nginx's `X-Agentserver-Host` header, or no header): plain (a short answer), slow (30 words streamed
0.1 s apart), bash (the model runs `echo <tag>-ok` with bash, then answers), bursty (3-5 prompt_async in a
row). Prompts carry a client-chosen messageID; a POST that failed (nginx 502, connection error) is retried
with the same messageID. About a quarter of the non-bursty prompts are synchronous (`POST
/session/{id}/message`), the rest `prompt_async`.

Chaos: every --kill-min..--kill-max seconds (20-40, from one kill to the next) one host is killed (every
process, SIGKILL: Host.kill) and started again --restart-min..--restart-max seconds later; a kill that falls
due while the last one's host is still starting waits for it, so one host at most is ever down. After the
load, both hosts run and the prompts are given at most --settle seconds to be answered.

Checks (the table's goal rows must be 0, else the exit status is 1): every acknowledged prompt (200/204) has
exactly one final assistant message whose parentID is the prompt, with time.completed, no error and the
text the fake was scripted to give; aborted (an answer with MessageAbortedError), stranded (no final
answer), duplicates (the prompt's user message twice, or two final answers), server 5xx (a JSON error from
agentserver; nginx's own 502 for a killed host is counted apart and retried), out-of-order ids on a
person's stream (an id not above the largest before it), missing events (ids of the person's rows in
agentserver_eventlog after the load began that the stream never carried), leaks (an event on a person's
stream naming another person's session). The work dir with the host logs is kept when a check fails
(or with --keep).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
# bench/ itself off the path: its pty.py would shadow the standard library's (ptyprocess imports it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

PEOPLE = ["ana", "ben", "cleo", "dev", "eli"]
KINDS = ["plain", "slow", "bash", "bursty"]
KIND_WEIGHTS = [3, 2, 3, 1.5]
SLOW_WORDS = 30
SLOW_DELAY = 0.1
PROMPT_RE = re.compile(r"chaos (plain|slow|bash|bursty) (p\d+)")
SESSION_RE = re.compile(r"ses_[0-9a-zA-Z]{26}")


# ---------------------------------------------------------------- the fake model
def expected_text(kind: str, tag: str) -> str:
    if kind == "slow":
        return f"slow answer {tag} " + " ".join(f"w{i}" for i in range(SLOW_WORDS))
    if kind == "bash":
        return f"bash answer {tag}: saw {tag}-ok"
    return f"{kind} answer {tag}."


def make_fake():
    from tests.fakes.llm import FakeLLM, RecordedRequest, Reply

    class ChaosModel(FakeLLM):
        """Replies from the request alone (the prompt's kind and tag, and whether a tool result came back)."""

        def __init__(self):
            super().__init__()
            self.calls = Counter()
            self._server.handle_error = lambda request, address: None  # a server that was killed mid-reply

        def _next_reply(self, request: RecordedRequest) -> Reply:
            if "title generator" in request.system_text.lower():
                self.calls["title"] += 1
                return Reply(text="Chaos session")
            found = PROMPT_RE.search(request.last_user_text)
            if not found:
                self.calls["unknown"] += 1
                return Reply(text="unknown prompt")
            kind, tag = found.groups()
            self.calls[kind] += 1
            if kind == "slow":
                return Reply(text=expected_text(kind, tag), delay=SLOW_DELAY)
            if kind != "bash":
                return Reply(text=expected_text(kind, tag), delay=0.02)
            messages = request.body.get("messages") or []
            users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
            tools = [m for m in messages[users[-1] if users else 0:] if m.get("role") == "tool"]  # this turn's
            last = messages[-1] if messages else {}
            if last.get("role") == "tool":
                output = _content_text(last.get("content"))
                if f"{tag}-ok" in output:
                    return Reply(text=expected_text(kind, tag))
                if len(tools) >= 3:  # this prompt's call failed three times (interrupted by kills): a wrong answer
                    return Reply(text=f"bash failed {tag}: {output[:80]}")
            return Reply(tool_calls=[("bash", {"command": f"echo {tag}-ok", "description": f"Echo {tag}"})])

    return ChaosModel()


def _content_text(content) -> str:
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content if isinstance(content, str) else ""


# ---------------------------------------------------------------- message ids, as agentserver/ids.py makes them
class MessageIds:
    """Ascending `msg_` ids (agentserver/ids.py: 12 hex of ms*4096+counter, then 14 base62) on this client's
    clock, `ahead_ms` ahead of it: hosts' clocks are up to 4 s off and a client-chosen id must sort after
    the session's newest message. `observe` lifts the clock past an id a refusal named."""

    def __init__(self, ahead_ms: int):
        self.ahead_ms, self.last = ahead_ms, 0

    def new(self) -> str:
        from agentserver.ids import _random_tail

        value = max(int(time.time() * 1000 + self.ahead_ms) * 4096, self.last + 1)
        self.last = value
        return f"msg_{value & ((1 << 48) - 1):012x}{_random_tail()}"

    def observe(self, message_id: str) -> None:
        try:
            low = int(message_id[4:16], 16)
        except ValueError:
            return
        current = self.last
        value = (current & ~((1 << 48) - 1)) | low
        if value > current:
            self.last = value + 4096  # a millisecond past it


# ---------------------------------------------------------------- the run's state
@dataclass
class Person:
    name: str
    user_id: int
    token: str
    directory: str
    sessions: list[str] = field(default_factory=list)
    seen: list[int] = field(default_factory=list)     # stream ids, in arrival order
    max_id: int = 0
    out_of_order: list[tuple[int, int]] = field(default_factory=list)  # (previous max, id)
    resyncs: int = 0
    connects: int = 0
    refused_connects: Counter = field(default_factory=Counter)
    leaks: list[str] = field(default_factory=list)
    # parentID -> the final assistant infos seen on the stream
    finals: dict[str, dict] = field(default_factory=dict)


@dataclass
class Prompt:
    tag: str
    kind: str
    person: Person
    session: str
    message_id: str
    sync: bool
    expected: str
    text: str
    sent_at: float = 0.0
    acked: bool = False
    ack_status: int | None = None
    attempts: list[str] = field(default_factory=list)   # "a:204", "-:502(nginx)", "b:ConnectError"...
    sync_answer: str | None = None
    verdict: str = ""
    detail: str = ""


@dataclass
class Stats:
    prompts: list[Prompt] = field(default_factory=list)
    server_5xx: list[str] = field(default_factory=list)
    nginx_5xx: int = 0
    transport_errors: int = 0
    refused_ids: int = 0
    other_4xx: list[str] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    sync_mismatch: list[str] = field(default_factory=list)


class Run:
    def __init__(self, args, cluster, people: list[Person], fake):
        self.args, self.cluster, self.people, self.fake = args, cluster, people, fake
        self.url = cluster.url
        self.stats = Stats()
        self.down: set[str] = set()
        self.ids = MessageIds(args.client_clock_ahead_ms)
        self.counter = 0
        self.stop_load = asyncio.Event()
        self.stop_streams = asyncio.Event()
        self.owner_of: dict[str, Person] = {}
        self.answered = asyncio.Condition()
        self.random = random.Random(args.seed)

    # ------------------------------------------------------------ requests
    def steer(self) -> dict:
        from tests.hosts.cluster import STEER_HEADER

        choices = [None] + [name for name in self.cluster.hosts if name not in self.down]
        host = self.random.choice(choices)
        return {STEER_HEADER: host} if host else {}

    def client(self, person: Person, **kw) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {person.token}"},
                                 params={"directory": person.directory}, **kw)

    async def send(self, client: httpx.AsyncClient, prompt: Prompt) -> None:
        """POST the prompt until it is acknowledged (a retry keeps the messageID) or refused for good."""
        path = f"/session/{prompt.session}/" + ("message" if prompt.sync else "prompt_async")
        prompt.sent_at = time.monotonic()
        maybe_stored = False
        for attempt in range(self.args.post_attempts):
            steer = self.steer()
            where = next(iter(steer.values()), "-")
            body = {"messageID": prompt.message_id, "parts": [{"type": "text", "text": prompt.text}]}
            try:
                response = await client.post(path, json=body, headers=steer,
                                             timeout=httpx.Timeout(10, read=240 if prompt.sync else 60))
            except httpx.TransportError as error:
                maybe_stored = True
                self.stats.transport_errors += 1
                prompt.attempts.append(f"{where}:{type(error).__name__}")
                await asyncio.sleep(0.5 + attempt * 0.5)
                continue
            status = response.status_code
            if status in (200, 204):
                prompt.acked, prompt.ack_status = True, status
                prompt.attempts.append(f"{where}:{status}")
                if prompt.sync:
                    try:
                        parts = response.json().get("parts", [])
                        prompt.sync_answer = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
                    except ValueError:
                        prompt.sync_answer = f"<not JSON: {response.text[:100]!r}>"
                return
            text = response.text
            if status >= 500:
                maybe_stored = True
                if "nginx" in text and not text.lstrip().startswith("{"):
                    self.stats.nginx_5xx += 1
                    prompt.attempts.append(f"{where}:{status}(nginx)")
                else:
                    self.stats.server_5xx.append(f"{prompt.tag} {prompt.session} {path} via {where}: "
                                                 f"{status} {text[:300]}")
                    prompt.attempts.append(f"{where}:{status}")
                await asyncio.sleep(0.5 + attempt * 0.5)
                continue
            if status == 400 and "must sort after" in text and not maybe_stored:
                # Refused, nothing stored: a new id past the session's newest (a host's clock ahead of ours).
                self.stats.refused_ids += 1
                named = re.search(r"must sort after (msg_\w+)", text)
                if named:
                    self.ids.observe(named.group(1))
                prompt.attempts.append(f"{where}:400(id {prompt.message_id} refused)")
                prompt.message_id = self.ids.new()
                continue
            prompt.attempts.append(f"{where}:{status}")
            self.stats.other_4xx.append(f"{prompt.tag} {prompt.session} via {where}: {status} {text[:300]}")
            return

    # ------------------------------------------------------------ the sessions' load
    async def session_loop(self, person: Person, session: str) -> None:
        async with self.client(person, limits=httpx.Limits(max_connections=4)) as client:
            while not self.stop_load.is_set() and len(self.stats.prompts) < self.args.max_prompts:
                kind = self.random.choices(KINDS, KIND_WEIGHTS)[0]
                count = self.random.randint(3, 5) if kind == "bursty" else 1
                sync = kind != "bursty" and self.random.random() < self.args.sync_share
                batch = []
                for _ in range(count):
                    self.counter += 1
                    tag = f"p{self.counter}"
                    prompt = Prompt(tag=tag, kind=kind, person=person, session=session, message_id=self.ids.new(),
                                    sync=sync, expected=expected_text(kind, tag),
                                    text=f"chaos {kind} {tag}: answer as scripted.")
                    self.stats.prompts.append(prompt)
                    batch.append(prompt)
                    await self.send(client, prompt)
                await self.wait_answered(client, [p for p in batch if p.acked and not p.sync])
                await asyncio.sleep(self.random.uniform(0.2, 2.0))

    async def wait_answered(self, client: httpx.AsyncClient, prompts: list[Prompt]) -> None:
        """Until each prompt's final answer went by on its person's stream (or, every 10 s, is stored)."""
        if not prompts:
            return
        deadline = time.monotonic() + self.args.answer_timeout
        while time.monotonic() < deadline and not self.stop_streams.is_set():
            waiting = [p for p in prompts if p.message_id not in p.person.finals]
            if not waiting:
                return
            async with self.answered:
                try:
                    await asyncio.wait_for(self.answered.wait(), 10)
                    continue
                except TimeoutError:
                    pass
            try:
                response = await client.get(f"/session/{prompts[0].session}/message", timeout=30)
                if response.status_code == 200:
                    for message in response.json():
                        info = message["info"]
                        if _is_final(info):
                            prompts[0].person.finals.setdefault(info.get("parentID"), info)
            except httpx.HTTPError:
                pass

    # ------------------------------------------------------------ the streams
    async def stream_loop(self, person: Person) -> None:
        last_id: int | None = None
        headers = {"Authorization": f"Bearer {person.token}"}
        async with httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(10, read=15)) as client:
            while not self.stop_streams.is_set():
                sent = dict(headers, **({"Last-Event-ID": str(last_id)} if last_id is not None else {}))
                try:
                    async with client.stream("GET", "/global/event", headers=sent) as response:
                        if response.status_code != 200:
                            person.refused_connects[response.status_code] += 1
                            await response.aread()
                            await asyncio.sleep(0.3)
                            continue
                        person.connects += 1
                        buffer = b""
                        async for chunk in response.aiter_raw():
                            buffer += chunk
                            while b"\n\n" in buffer:
                                raw, _, buffer = buffer.partition(b"\n\n")
                                event_id = self.frame(person, raw)
                                if event_id is not None:
                                    last_id = person.max_id
                            if self.stop_streams.is_set():
                                break
                except (httpx.HTTPError, OSError):
                    pass
                if not self.stop_streams.is_set():
                    await asyncio.sleep(0.2)

    def frame(self, person: Person, raw: bytes) -> int | None:
        event_id, data = None, None
        for line in raw.decode(errors="replace").split("\n"):
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = line[6:]
        if event_id is not None:
            if event_id <= person.max_id:
                person.out_of_order.append((person.max_id, event_id))
            else:
                person.max_id = event_id
            person.seen.append(event_id)
        if data is None:
            return event_id
        for session in set(SESSION_RE.findall(data)):
            owner = self.owner_of.get(session)
            if owner is not None and owner is not person:
                person.leaks.append(f"id {event_id}: {data[:300]}")
        payload = json.loads(data).get("payload", {})
        kind = payload.get("type")
        if kind == "server.resync":
            person.resyncs += 1
        elif kind == "message.updated":
            info = (payload.get("properties") or {}).get("info") or {}
            if _is_final(info):
                person.finals.setdefault(info.get("parentID"), info)
                asyncio.get_running_loop().create_task(self._notify())
        return event_id

    async def _notify(self) -> None:
        async with self.answered:
            self.answered.notify_all()

    # ------------------------------------------------------------ chaos
    async def chaos_loop(self) -> None:
        """A kill every kill_min..kill_max s, counted from the previous kill; a host still starting again
        when the next kill is due is waited for (only one host is ever down)."""
        last_kill = time.monotonic()
        while not self.stop_load.is_set():
            due = last_kill + self.random.uniform(self.args.kill_min, self.args.kill_max)
            try:
                await asyncio.wait_for(self.stop_load.wait(), max(0.0, due - time.monotonic()))
                return
            except TimeoutError:
                pass
            name = self.random.choice(sorted(self.cluster.hosts))
            host = self.cluster.hosts[name]
            self.down.add(name)
            since = time.monotonic() - last_kill
            last_kill, killed_at = time.monotonic(), time.strftime("%H:%M:%S")
            await asyncio.to_thread(host.kill)
            pause = self.random.uniform(self.args.restart_min, self.args.restart_max)
            await asyncio.sleep(pause)
            await asyncio.to_thread(host.start)
            self.down.discard(name)
            line = (f"{killed_at} killed {name} {since:.0f} s after the previous kill, "
                    f"down {time.monotonic() - last_kill:.1f} s (started again after {pause:.1f} s; "
                    f"log {host.log_path.name})")
            self.stats.kills.append(line)
            print("  " + line, file=sys.stderr, flush=True)

    async def progress(self, began: float) -> None:
        while not self.stop_streams.is_set():
            try:
                await asyncio.wait_for(self.stop_streams.wait(), 30)
                return
            except TimeoutError:
                pass
            prompts = self.stats.prompts
            print(f"  {time.monotonic() - began:5.0f} s: {len(prompts)} prompts, "
                  f"{sum(p.acked for p in prompts)} acknowledged, {len(self.stats.kills)} kills, "
                  f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------ the whole run
    async def main(self) -> dict:
        from django.db import connection

        def baseline() -> int:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT COALESCE(MAX(id), 0) FROM agentserver_eventlog")
                    return cursor.fetchone()[0]
            finally:
                connection.close()

        for person in self.people:
            async with self.client(person) as client:
                for _ in range(self.args.sessions_of[person.name]):
                    response = await client.post("/session", json={"title": f"chaos {person.name}"})
                    response.raise_for_status()
                    session = response.json()["id"]
                    person.sessions.append(session)
                    self.owner_of[session] = person
        streams = [asyncio.create_task(self.stream_loop(p)) for p in self.people]
        deadline = time.monotonic() + 30
        while any(p.connects == 0 for p in self.people) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1)  # the session.created events of the set-up went by
        start_id = await asyncio.to_thread(baseline)
        began = time.monotonic()
        print(f"load for {self.args.seconds} s: {len(self.people)} people, {len(self.owner_of)} sessions, "
              f"event log from id {start_id}", file=sys.stderr, flush=True)
        loops = [asyncio.create_task(self.session_loop(p, s)) for p in self.people for s in p.sessions]
        chaos = asyncio.create_task(self.chaos_loop())
        progress = asyncio.create_task(self.progress(began))
        await asyncio.sleep(self.args.seconds)
        self.stop_load.set()
        await chaos
        load_seconds = time.monotonic() - began
        # Settle: no more kills; every host up; the loops' last prompts sent; answers given time to come.
        await asyncio.to_thread(self.cluster.ensure_up)
        self.down.clear()
        print(f"settling (at most {self.args.settle} s)", file=sys.stderr, flush=True)
        settle_deadline = time.monotonic() + self.args.settle
        try:
            await asyncio.wait_for(asyncio.gather(*loops), max(1.0, settle_deadline - time.monotonic()))
        except TimeoutError:
            for loop in loops:
                loop.cancel()
        stored = {}
        while True:
            stored = await self.read_sessions()
            pending = self.judge(stored)
            if not pending or time.monotonic() > settle_deadline:
                break
            await asyncio.sleep(2)
        # Each stream catches up with its person's last logged event (bounded), then stops.
        owners_max = await asyncio.to_thread(self.log_ids, start_id)
        catch_up = time.monotonic() + 30
        while time.monotonic() < catch_up and any(
                p.max_id < max(owners_max.get(p.user_id, [0]) or [0]) for p in self.people):
            await asyncio.sleep(0.5)
        self.stop_streams.set()
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, progress, return_exceptions=True)
        return {"load_seconds": load_seconds, "logged": owners_max, "start_id": start_id}

    async def read_sessions(self) -> dict[str, list[dict]]:
        out = {}
        for person in self.people:
            async with self.client(person, timeout=60) as client:
                for session in person.sessions:
                    try:
                        response = await client.get(f"/session/{session}/message")
                    except httpx.HTTPError as error:
                        out[session] = [{"error": str(error)}]
                        continue
                    out[session] = response.json() if response.status_code == 200 else \
                        [{"error": f"{response.status_code} {response.text[:200]}"}]
        return out

    def log_ids(self, start_id: int) -> dict[int, list[int]]:
        from django.db import connection

        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT owner_id, id FROM agentserver_eventlog WHERE id > %s ORDER BY id", [start_id])
                found = defaultdict(list)
                for owner, event_id in cursor.fetchall():
                    found[owner].append(event_id)
                return dict(found)
        finally:
            connection.close()

    def judge(self, stored: dict[str, list[dict]]) -> int:
        """Sets each acknowledged prompt's verdict; returns how many are still unanswered."""
        pending = 0
        for prompt in self.stats.prompts:
            if not prompt.acked:
                prompt.verdict = "not acknowledged"
                continue
            messages = stored.get(prompt.session, [])
            users = [m for m in messages if "info" in m and m["info"]["role"] == "user"
                     and (m["info"]["id"] == prompt.message_id or prompt.tag in _text(m).split(":")[0].split())]
            answers = [m for m in messages if "info" in m and m["info"]["role"] == "assistant"
                       and m["info"].get("parentID") == prompt.message_id]
            finals = [m for m in answers if _is_final(m["info"])]
            aborted = [m for m in answers if (m["info"].get("error") or {}).get("name") == "MessageAbortedError"]
            errored = [m for m in answers if m["info"].get("error") and m not in aborted]
            complete = [m for m in finals if not m["info"].get("error") and m["info"].get("time", {}).get("completed")
                        and _text(m).strip() == prompt.expected]
            prompt.detail = (f"user messages {len(users)}, answers {len(answers)}: " + "; ".join(
                f"{m['info']['id']} finish={m['info'].get('finish')} "
                f"completed={bool(m['info'].get('time', {}).get('completed'))} "
                f"error={(m['info'].get('error') or {}).get('name')} text={_text(m)[:60]!r}" for m in answers))
            if len(users) > 1 or len(complete) > 1:
                prompt.verdict = "duplicate"
            elif aborted:
                prompt.verdict = "aborted"
            elif complete and len(finals) == 1:
                prompt.verdict = "complete"
            elif complete:
                prompt.verdict = "duplicate"   # a complete answer and another final one
            elif errored:
                prompt.verdict = "failed"
            elif finals:
                prompt.verdict = "wrong answer"
            else:
                prompt.verdict = "stranded"
                pending += 1
            if prompt.sync and prompt.sync_answer is not None and prompt.sync_answer.strip() != prompt.expected:
                note = f"{prompt.tag} {prompt.session}: sync answer {prompt.sync_answer[:80]!r}"
                if note not in self.stats.sync_mismatch:
                    self.stats.sync_mismatch.append(note)
        return pending


def _is_final(info: dict) -> bool:
    """An assistant message that ends its prompt's turn: completed and not asking for tool results, or failed."""
    if info.get("role") != "assistant":
        return False
    if info.get("error"):
        return True
    return bool((info.get("time") or {}).get("completed")) and info.get("finish") not in ("tool-calls", None)


def _text(message: dict) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", []) if p.get("type") == "text")


# ---------------------------------------------------------------- set-up and tear-down
def psql(sql: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", sql], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})


def drop_database(name: str) -> None:
    try:
        psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    except subprocess.CalledProcessError:
        print(f"could not drop database {name}", file=sys.stderr)


def set_up_people(work: Path, fake, sessions: int) -> tuple[list[Person], dict]:
    from django.contrib.auth import get_user_model

    from auth_app.tokens import roots_add, token_create
    from tests.conftest import make_repo
    from tests.fakes.fixtures import configure_fake_provider

    people = []
    for name in PEOPLE:
        user = get_user_model().objects.create_user(username=name, password=secrets.token_urlsafe(16))
        root = work / "roots" / name
        make_repo(root / "repo", {"README.md": f"{name}'s chaos repo\n"})
        roots_add(user=user, path=str(root))
        _, token = token_create(user=user)
        configure_fake_provider(user, fake)
        people.append(Person(name=name, user_id=user.pk, token=token,
                             directory=os.path.realpath(root / "repo")))
    spread = {name: sessions // len(PEOPLE) + (1 if i < sessions % len(PEOPLE) else 0) for i, name in enumerate(PEOPLE)}
    return people, spread


def report(run: Run, result: dict, seconds_total: float) -> tuple[str, bool, list[str], list[tuple[str, int]]]:
    stats = run.stats
    prompts = stats.prompts
    verdicts = Counter(p.verdict for p in prompts)
    acked = [p for p in prompts if p.acked]
    missing, leaks, out_of_order, resyncs = [], 0, 0, 0
    for person in run.people:
        logged = set(result["logged"].get(person.user_id, []))
        seen = set(person.seen)
        lost = sorted(logged - seen)
        missing.extend((person.name, i) for i in lost)
        leaks += len(person.leaks)
        out_of_order += len(person.out_of_order)
        resyncs += person.resyncs
    rows = [
        ("prompts sent", len(prompts), False),
        ("acknowledged (200/204)", len(acked), False),
        ("answered complete", verdicts["complete"], False),
        ("aborted (MessageAbortedError)", verdicts["aborted"], True),
        ("stranded (no answer)", verdicts["stranded"], True),
        ("duplicates", verdicts["duplicate"], True),
        ("failed / wrong answer", verdicts["failed"] + verdicts["wrong answer"], True),
        ("sync answer not the scripted text", len(stats.sync_mismatch), True),
        ("5xx from agentserver", len(stats.server_5xx), True),
        ("out-of-order stream ids", out_of_order, True),
        ("missing events", len(missing), True),
        ("leaks", leaks, True),
        ("kills", len(stats.kills), False),
        ("nginx 502 for a killed host (retried)", stats.nginx_5xx, False),
        ("connection errors (retried)", stats.transport_errors, False),
        ("messageID refused, sorts before newest (new id)", stats.refused_ids, False),
        ("other 4xx", len(stats.other_4xx), False),
        ("not acknowledged", verdicts["not acknowledged"], False),
        ("server.resync on streams", resyncs, False),
        ("stream (re)connects", sum(p.connects for p in run.people), False),
        ("load duration (s)", f"{result['load_seconds']:.0f}", False),
        ("whole run (s)", f"{seconds_total:.0f}", False),
    ]
    kinds = Counter((p.kind, "sync" if p.sync else "async") for p in acked)
    lines = ["| figure | count |", "|---|---|"]
    lines += [f"| {name}{' (goal 0)' if goal else ''} | {value} |" for name, value, goal in rows]
    lines.append("")
    lines.append("acknowledged by kind: " + ", ".join(f"{k} {m} {n}" for (k, m), n in sorted(kinds.items())))
    lines.append("fake model calls: " + ", ".join(f"{k} {n}" for k, n in sorted(run.fake.calls.items())))
    failed = any(goal and value for _, value, goal in rows) or verdicts["complete"] != len(acked)
    details = []
    for prompt in prompts:
        if prompt.acked and prompt.verdict != "complete":
            details.append(f"{prompt.verdict}: {prompt.tag} ({prompt.kind}, {'sync' if prompt.sync else 'async'}) "
                           f"person {prompt.person.name} session {prompt.session} message {prompt.message_id} "
                           f"attempts {prompt.attempts}; {prompt.detail}")
    details += [f"server 5xx: {line}" for line in stats.server_5xx]
    details += [f"sync mismatch: {line}" for line in stats.sync_mismatch]
    details += [f"other 4xx: {line}" for line in stats.other_4xx]
    for person in run.people:
        if person.out_of_order:
            details.append(f"out of order on {person.name}'s stream (previous max, id): {person.out_of_order[:20]}")
        for leak in person.leaks[:5]:
            details.append(f"leak to {person.name}: {leak}")
    by_person = defaultdict(list)
    for name, i in missing:
        by_person[name].append(i)
    for name, lost in by_person.items():
        details.append(f"missing on {name}'s stream: {len(lost)} ids, first {lost[:20]}")
    return "\n".join(lines), failed, details, missing


def describe_missing(missing: list[tuple[str, int]]) -> list[str]:
    if not missing:
        return []
    from django.db import connection

    ids = [i for _, i in missing[:30]]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, owner_id, type, left(properties::text, 160) FROM agentserver_eventlog "
                           "WHERE id = ANY(%s) ORDER BY id", [ids])
            return [f"  log row {row[0]} owner {row[1]} {row[2]} {row[3]}" for row in cursor.fetchall()]
    finally:
        connection.close()


def server_log_lines(logs: Path) -> list[str]:
    """Each traceback of the hosts' logs as one line (its exception, where it was raised), and other error
    lines and 5xx access lines as they are."""
    found = []
    for path in sorted(logs.glob("host-*.log")):
        lines = path.read_text(errors="replace").splitlines()
        number = 0
        while number < len(lines):
            line = lines[number]
            if line.startswith("Traceback"):
                end, where = number + 1, ""
                while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
                    if lines[end].strip().startswith("File "):
                        where = lines[end].strip()
                    end += 1
                last = lines[end] if end < len(lines) else "(log ends)"
                found.append(f"{path.name}:{number + 1}: {last[:200]} [{where[:160]}]")
                number = end + 1
                continue
            if re.search(r"\bERROR\b|CRITICAL|HTTP/1\.1\" 5\d\d", line):
                found.append(f"{path.name}:{number + 1}: {line[:300]}")
            number += 1
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=600, help="load duration (default 600)")
    parser.add_argument("--settle", type=float, default=180, help="at most this long for answers after the load")
    parser.add_argument("--kill-min", type=float, default=20)
    parser.add_argument("--kill-max", type=float, default=40)
    parser.add_argument("--restart-min", type=float, default=3)
    parser.add_argument("--restart-max", type=float, default=6)
    parser.add_argument("--sessions", type=int, default=12, help="sessions in all, over 5 people")
    parser.add_argument("--workers", type=int, default=2, help="workers per host")
    parser.add_argument("--sync-share", type=float, default=0.25, help="share of synchronous prompts")
    parser.add_argument("--answer-timeout", type=float, default=120, help="a session loop waits this long")
    parser.add_argument("--post-attempts", type=int, default=8, help="tries of one prompt's POST")
    parser.add_argument("--max-prompts", type=int, default=5000, help="no more prompts than this")
    parser.add_argument("--client-clock-ahead-ms", type=int, default=6000,
                        help="messageIDs on a clock this far ahead (hosts' clocks are 4 s off)")
    parser.add_argument("--clocks", default="a=-4s,b=+4s", help="the hosts' clock offsets (libfaketime)")
    parser.add_argument("--db", default="bench_chaos")
    parser.add_argument("--redis-db", type=int, default=6)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs) even when all passed")
    args = parser.parse_args()
    if not re.fullmatch(r"bench_\w+", args.db):
        parser.error("--db must be bench_<name> (it is dropped)")
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    began = time.monotonic()

    work = Path(tempfile.mkdtemp(prefix="agentserver-chaos."))
    os.chmod(work, 0o755)
    redis_url = f"redis://127.0.0.1:6379/{args.redis_db}"
    os.environ.update(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{args.db}", REDIS_URL=redis_url,
        SECRET_KEY=os.environ.get("SECRET_KEY") or "chaos-" + secrets.token_hex(16),
        DJANGO_SETTINGS_MODULE="server.settings", AGENTSERVER_DATA_DIR=str(work / "bench-data"),
        AGENTSERVER_DEPLOYMENT=f"bench-chaos-{os.getpid()}",
    )
    os.environ.pop("AGENTSERVER_TEST_HOST_CLOCKS", None)

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)

    cluster, fake, hosts, failed = None, None, {}, True
    print(f"chaos run: seed {args.seed}, work dir {work}", file=sys.stderr, flush=True)
    try:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
        drop_database(args.db)
        psql(f"CREATE DATABASE {args.db}")
        import django

        django.setup()
        from cryptography.fernet import Fernet
        from django.conf import settings
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        fake = make_fake()
        people, args.sessions_of = set_up_people(work, fake, args.sessions)

        from tests.hosts.cluster import (
            Cluster,
            Host,
            faketime_preload,
            host_env,
            start_nginx,
        )

        keys = {"SECRET_KEY": settings.SECRET_KEY, "AGENTSERVER_FERNET_KEYS": Fernet.generate_key().decode()}
        shared, logs = work / "shared", work / "logs"
        for path in (shared, logs, work / "faketime", work / "nginx"):
            path.mkdir(parents=True)
        preload = faketime_preload(work / "faketime")
        clocks = dict(item.split("=", 1) for item in args.clocks.split(","))
        for name, offset in clocks.items():
            data_dir = work / f"host-{name}-data"
            data_dir.mkdir()
            hosts[name] = Host(name=name, hostname=f"chaos-{name}", clock_offset=offset, preload=preload,
                               data_dir=data_dir, workers=args.workers, log_dir=logs,
                               env=host_env(name=name, data_dir=data_dir, shared_dir=shared, keys=keys))
        for host in hosts.values():
            host.start()
        cluster = Cluster(hosts=hosts, nginx=start_nginx(work / "nginx", list(hosts.values())))
        print(f"hosts {', '.join(f'{n} :{h.port}' for n, h in hosts.items())}, nginx {cluster.url}",
              file=sys.stderr, flush=True)

        run = Run(args, cluster, people, fake)
        budget = args.seconds + args.settle + 300  # the whole load, bounded whatever happens
        result = asyncio.run(asyncio.wait_for(run.main(), budget))
        table, failed, details, missing = report(run, result, time.monotonic() - began)
        print()
        print(f"chaos: {args.seconds:.0f} s of load, kills every {args.kill_min:.0f}-{args.kill_max:.0f} s, "
              f"{len(hosts)} hosts x {args.workers} workers, {args.sessions} sessions, seed {args.seed}")
        print(table)
        if details:
            print("\nfindings:")
            for line in details[:60]:
                print("  " + line)
            for line in describe_missing(missing):
                print(line)
        errors = server_log_lines(logs)
        if errors:
            print(f"\nserver log lines with errors ({len(errors)}; first 40):")
            for line in errors[:40]:
                print("  " + line)
        print("\nkills:")
        for line in run.stats.kills:
            print("  " + line)
        print("\nRESULT: " + ("FAIL" if failed else "PASS"))
        return 1 if failed else 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001  (reported; the clean-up below still runs)
        traceback.print_exc()
        return 2
    finally:
        if hosts:  # started only after tests.hosts.cluster was imported
            from tests.hosts.cluster import stop_all

            stop_all(cluster, hosts)
        if fake is not None:
            fake.close()
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        drop_database(args.db)
        try:
            import redis

            redis.Redis.from_url(redis_url).flushdb()
        except redis.RedisError as error:
            print(f"could not empty Redis db {args.redis_db}: {error}", file=sys.stderr)
        if failed or args.keep:
            print(f"work dir kept (host logs in {work}/logs)", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
