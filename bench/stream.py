"""Token streaming benchmark: a fake provider streams one reply of N deltas (5,000 by default) as fast as it
can; S SSE subscribers (1 and 100 by default) read `GET /event?directory=…`. Prints, per subscriber count:
the time from `prompt_async` to the last delta at the slowest subscriber, deltas/s, and the server-added
latency per delta (the fake provider wrote that chunk → a subscriber read it; same machine, same clock)
p50/p99, the server's CPU seconds (/proc/<pid>/stat, with --server-pid) and the 1-minute load average. Each
configuration runs --repeat times (3 by default); the table shows the median run (by time to last delta),
every run is listed below it.

Works against any server speaking opencode's API: ours (Bearer token) or the reference `opencode serve`
(no auth, or --user for basic auth). The fake provider runs in this process; the script points the server
at it by writing `opencode.json` (provider `benchfake`, model `bench-model`) into --directory, which both
servers read as project config. The previous file content is restored at the end.

    python bench/stream.py --base-url http://127.0.0.1:8000 --token as_xxx --directory ~/code/repo \
        --server-pid $(pgrep -f 'server.serve.*8000')
    python bench/stream.py --base-url http://127.0.0.1:4096 --directory /tmp/repo          # reference server
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

PROVIDER, MODEL = "benchfake", "bench-model"


class FakeProvider:
    """OpenAI chat-completions streaming; the first non-title request gets the big reply, and the wall
    clock time each delta was written is kept (index i ↔ text "d<i> ")."""

    def __init__(self, deltas: int):
        self.deltas = deltas
        self.sent: dict[int, float] = {}
        self.armed = False
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                system = json.dumps(body.get("messages", [])[:2]).lower()
                with fake.lock:
                    big = fake.armed and "title generator" not in system
                    if big:
                        fake.armed = False
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                count = fake.deltas if big else 1

                def chunk(delta: dict, finish=None) -> bytes:
                    return ("data: " + json.dumps({
                        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n").encode()

                try:
                    self.wfile.write(chunk({"role": "assistant", "content": ""}))
                    for index in range(count):
                        text = f"d{index} " if big else "Bench title"
                        self.wfile.write(chunk({"content": text}))
                        self.wfile.flush()
                        if big:
                            fake.sent[index] = time.time()
                    self.wfile.write(chunk({}, "stop"))
                    usage = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
                             "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": count,
                                                      "total_tokens": 10 + count}}
                    self.wfile.write(("data: " + json.dumps(usage) + "\n\ndata: [DONE]\n\n").encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def provider_config(base_url: str) -> dict:
    return {"provider": {PROVIDER: {
        "npm": "@ai-sdk/openai-compatible", "name": "Bench fake",
        "options": {"baseURL": base_url, "apiKey": "bench-key"},
        "models": {MODEL: {"name": "Bench model", "tool_call": True, "temperature": True,
                           "limit": {"context": 128000, "output": 32000}}}}},
        "model": f"{PROVIDER}/{MODEL}", "small_model": f"{PROVIDER}/{MODEL}"}


class Subscriber:
    def __init__(self):
        self.received: dict[int, float] = {}
        self.connected = asyncio.Event()

    async def run(self, client: httpx.AsyncClient, directory: str, session_id: dict) -> None:
        async with client.stream("GET", "/event", params={"directory": directory}) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                now = time.time()
                event = json.loads(line[6:])
                kind = event.get("type")
                if kind == "server.connected":
                    self.connected.set()
                    continue
                props = event.get("properties") or {}
                if props.get("sessionID") != session_id.get("id"):
                    continue
                delta = None
                if kind == "message.part.delta":
                    delta = props.get("delta")
                elif kind == "message.part.updated" and props.get("delta"):
                    delta = props["delta"]  # older servers carry deltas on part updates
                if delta:
                    for token in delta.split():
                        if token.startswith("d") and token[1:].isdigit():
                            self.received.setdefault(int(token[1:]), now)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def cpu_seconds(pid: int | None) -> float | None:
    if not pid:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_run(args, fake: FakeProvider, subscribers: int) -> dict:
    headers, auth = {}, None
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    elif args.user:
        name, _, password = args.user.partition(":")
        auth = (name, password)
    limits = httpx.Limits(max_connections=subscribers + 10, max_keepalive_connections=subscribers + 10)
    async with httpx.AsyncClient(base_url=args.base_url.rstrip("/"), headers=headers, auth=auth, limits=limits,
                                 timeout=httpx.Timeout(30, read=None)) as client:
        created = await client.post("/session", params={"directory": args.directory}, json={})
        created.raise_for_status()
        session = {"id": created.json()["id"]}
        subs = [Subscriber() for _ in range(subscribers)]
        tasks = [asyncio.create_task(s.run(client, args.directory, session)) for s in subs]
        await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in subs)), 60)
        fake.sent.clear()
        fake.armed = True
        cpu_start = cpu_seconds(args.server_pid)
        started = time.time()
        response = await client.post(f"/session/{session['id']}/prompt_async", params={"directory": args.directory},
                                     json={"parts": [{"type": "text", "text": "stream please"}],
                                           "model": {"providerID": PROVIDER, "modelID": MODEL}})
        response.raise_for_status()
        deadline = time.time() + args.timeout
        while time.time() < deadline and not all(len(s.received) >= fake.deltas for s in subs):
            await asyncio.sleep(0.05)
        cpu_end = cpu_seconds(args.server_pid)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    complete = [s for s in subs if len(s.received) >= fake.deltas]
    last = max((max(s.received.values()) for s in subs if s.received), default=float("nan"))
    latencies = [(at - fake.sent[i]) * 1000 for s in subs for i, at in s.received.items() if i in fake.sent]
    total = last - started
    return {"subscribers": subscribers, "complete": len(complete), "total_s": total,
            "deltas_per_s": fake.deltas / total if total > 0 else float("nan"),
            "p50_ms": percentile(latencies, 50) if latencies else float("nan"),
            "p99_ms": percentile(latencies, 99) if latencies else float("nan"),
            "mean_ms": statistics.fmean(latencies) if latencies else float("nan"),
            "cpu_s": cpu_end - cpu_start if cpu_start is not None else None, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", help="Bearer token (agentserver)")
    parser.add_argument("--user", help="user:password for basic auth")
    parser.add_argument("--directory", required=True, help="a directory the server may use (gets opencode.json)")
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--subscribers", default="1,100")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--repeat", type=int, default=3, help="runs per subscriber count; the median is shown")
    parser.add_argument("--server-pid", type=int, default=None, help="the server's pid, for its CPU time")
    args = parser.parse_args()
    args.directory = os.path.realpath(os.path.expanduser(args.directory))
    fake = FakeProvider(args.deltas)
    config_path = Path(args.directory) / "opencode.json"
    previous = config_path.read_text() if config_path.exists() else None
    config_path.write_text(json.dumps(provider_config(fake.base_url), indent=2))
    runs: dict[int, list[dict]] = {}
    try:
        for n in args.subscribers.split(","):
            for _ in range(args.repeat):
                run = asyncio.run(one_run(args, fake, int(n)))
                runs.setdefault(int(n), []).append(run)
                print(f"  {fmt(run)}", file=sys.stderr)
    finally:
        if previous is None:
            config_path.unlink(missing_ok=True)
        else:
            config_path.write_text(previous)
    print(f"{args.deltas} deltas from the fake provider, server {args.base_url}, median of {args.repeat} run(s)")
    print(HEADER)
    print("|---|---|---|---|---|---|---|---|")
    for n, group in runs.items():
        print(fmt(sorted(group, key=lambda r: r["total_s"])[len(group) // 2]))
    print("\nall runs:")
    for group in runs.values():
        for run in group:
            print(fmt(run))


HEADER = ("| subscribers | complete | prompt_async → last delta (s) | deltas/s | added latency p50 (ms) | p99 (ms) "
          "| server CPU (s) | load avg |")


def fmt(row: dict) -> str:
    cpu = f"{row['cpu_s']:.2f}" if row["cpu_s"] is not None else "-"
    return (f"| {row['subscribers']} | {row['complete']}/{row['subscribers']} | {row['total_s']:.2f} | "
            f"{row['deltas_per_s']:.0f} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | {cpu} | {row['load']:.2f} |")


if __name__ == "__main__":
    main()
