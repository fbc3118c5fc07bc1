"""Agent loop benchmark: K concurrent sessions (1, 8 and 32 by default) each send one synchronous prompt
(`POST /session/{id}/message`) whose model first calls `bash` with `echo hi`, then answers with text.

    python bench/agent.py http://127.0.0.1:8000 --token as_xxx --directory ~/code/repo --server-pid PID
    python bench/agent.py http://127.0.0.1:4096 --directory /tmp/repo --server-pid PID     # opencode serve

Every answer is checked: the prompt's reply is the model's final text, the model saw `hi` come back as the
tool's output (it answers otherwise), and the session holds a completed `bash` part whose output is `hi`.
For each K it prints the batch's wall time, each prompt's latency p50/p99, and the server's CPU per prompt:
utime+stime of --server-pid and all its descendants, with the children it reaped (cutime+cstime), from
/proc, from the batch's start until the server is quiet again. Then the same batch once more while
`GET /global/health` and `GET /session` are each timed every 50 ms, so the probes' own CPU stays out of the
figure above; their p50/p99 are the last columns. Sessions are created before a batch (not timed) and
deleted after it, so every round sees the same project. Two prompts before the first batch warm the
server up (its sandbox, the model's client, caches, a JIT) and are not counted.

The fake model is tests/fakes' scripted provider with a stateless script (any number of sessions may
interleave): a prompt's first model call gets a `bash` call, the call that carries the tool result gets the
answer. `python bench/agent.py fake PORT DIRECTORY...` serves it on PORT and writes `opencode.json` (provider
`benchfake`, `bash` allowed) into each DIRECTORY, which both servers read as project config; perf.sh starts
it once for both servers, and a run points at it with --llm. Without --llm a run starts its own fake in
this process and writes the directory's opencode.json (restored at the end).

AGENT_TOOLS=N (default 1) makes the first model call ask for N `bash` calls at once; the answer then needs
all N outputs to be `hi`. A tool-heavy run shows a cost per tool call (the audit record's) apart from the
cost per model call.

It also counts each batch's model calls per prompt (those the fake answered, --llm-log naming a separate
fake's output) and tool calls per prompt (the sessions' tool parts).

--json FILE writes the figures; `agent.py compare NAME_A NAME_B a*.json -- b*.json` prints the ratio table
(medians over the files, one file per run) and, when the model calls were counted, the CPU per model call and
what A costs more than B per model call and per tool call.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.llm import FakeLLM, RecordedRequest, Reply

PROVIDER, MODEL = "benchfake", "bench-model"
COMMAND, TOOL_OUTPUT = "echo hi", "hi"
ANSWER = "The command printed hi."
PROMPT = "Run `echo hi` with bash, then tell me what it printed."
PROBE_INTERVAL = 0.05
TICK = os.sysconf("SC_CLK_TCK")


class ToolThenAnswer(FakeLLM):
    """Decides from the request alone, so sessions may interleave freely (the FIFO script cannot). Counts
    the model calls it answers, and with `log_calls` writes one line per call to stdout, so a run against a
    fake in another process can count them (--llm-log)."""

    def __init__(self, port: int = 0, *, log_calls: bool = False, tools: int = 1):
        self.calls = 0
        self._log_calls = log_calls
        self._tools = tools
        super().__init__(port)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.calls += 1
            if self._log_calls:
                sys.stdout.write("model call\n")
                sys.stdout.flush()
        if "title generator" in request.system_text.lower():
            return Reply(text="Bench session")
        messages = request.body.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            outputs = [_text(m.get("content")).strip() for m in messages if m.get("role") == "tool"]
            wrong = [output for output in outputs if output != TOOL_OUTPUT]
            if wrong:
                return Reply(text=f"Unexpected tool output: {wrong[0]!r}")
            if len(outputs) != self._tools:
                return Reply(text=f"Expected {self._tools} tool outputs, got {len(outputs)}")
            return Reply(text=ANSWER)
        return Reply(tool_calls=[("bash", {"command": COMMAND, "description": "Print hi" if self._tools == 1
                                           else f"Print hi ({n})"}) for n in range(1, self._tools + 1)])


def _text(content) -> str:
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content if isinstance(content, str) else ""


def project_config(llm_base_url: str) -> dict:
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/openai-compatible", "name": "Bench fake",
            "options": {"baseURL": llm_base_url, "apiKey": "bench-key"},
            "models": {MODEL: {"name": "Bench model", "tool_call": True, "temperature": True,
                               "limit": {"context": 128000, "output": 32000}}}}},
        "model": f"{PROVIDER}/{MODEL}", "small_model": f"{PROVIDER}/{MODEL}",
        # opencode's default already allows bash; said here so neither server can ask.
        "permission": {"bash": "allow"},
    }


def write_config(directory: str, llm_base_url: str) -> str | None:
    """Writes opencode.json unless it already says the same (a server may cache it); returns the old text."""
    path = Path(directory) / "opencode.json"
    previous = path.read_text() if path.exists() else None
    text = json.dumps(project_config(llm_base_url), indent=2) + "\n"
    if previous != text:
        path.write_text(text)
    return previous


# ---------------------------------------------------------------- CPU of a process tree, from /proc
def tree_ticks(root: int) -> dict[int, tuple[int, int]]:
    """{pid: (its parent, utime+stime+cutime+cstime)} of `root` and every live descendant."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(f) for f in fields[11:15])
    if root not in ticks:
        raise SystemExit(f"no process {root}")
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    tree, stack = {}, [root]
    while stack:
        pid = stack.pop()
        tree[pid] = (parents[pid], ticks[pid])
        stack.extend(children.get(pid, ()))
    return tree


def cpu_seconds_between(start: dict[int, tuple[int, int]], end: dict[int, tuple[int, int]]) -> float:
    """The tree's CPU from `start` to `end`. A child that exits and is reaped by its parent moves its time
    into the parent's cutime/cstime, so its time at the start is taken off once; one that was not reaped
    inside the tree (its parent is gone too: a test's language server, say) takes its time with it, and
    only its time at the start leaves the baseline. Never below zero."""
    total = sum(ticks for _, ticks in end.values())
    for pid, (parent, ticks) in start.items():
        if pid in end or parent in end:
            total -= ticks
    return max(total, 0) / TICK


async def quiet_tree(pid: int, *, window: float = 0.3, limit: float = 5.0) -> dict[int, tuple[int, int]]:
    """The tree once a window passes with at most two ticks of work (an idle server's timers cost under
    one), so work a server finishes after the reply (a title, saves) counts."""
    deadline = time.monotonic() + limit
    last = tree_ticks(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(window)
        now = tree_ticks(pid)
        if cpu_seconds_between(last, now) <= 2 / TICK:
            return now
        last = now
    return last


# ---------------------------------------------------------------- one batch
def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def _ms(values: list[float], q: float) -> float | None:
    return percentile(values, q) * 1000 if values else None


async def prompt(client: httpx.AsyncClient, session_id: str, directory: str) -> tuple[float, str | None]:
    """(latency, problem or None) of one synchronous prompt."""
    began = time.perf_counter()
    try:
        response = await client.post(f"/session/{session_id}/message", params={"directory": directory},
                                     json={"parts": [{"type": "text", "text": PROMPT}],
                                           "model": {"providerID": PROVIDER, "modelID": MODEL}})
    except httpx.HTTPError as error:
        return time.perf_counter() - began, f"{type(error).__name__}: {error}"
    elapsed = time.perf_counter() - began
    if response.status_code != 200:
        return elapsed, f"HTTP {response.status_code}: {response.text[:200]}"
    text = "".join(p.get("text", "") for p in response.json().get("parts", []) if p.get("type") == "text")
    return elapsed, None if text.strip() == ANSWER else f"answer {text[:200]!r}"


async def tool_calls(client: httpx.AsyncClient, session_id: str, directory: str) -> tuple[str | None, int]:
    """(None when the session holds a completed bash part whose output is `hi`, else what it holds; its
    number of tool parts)."""
    response = await client.get(f"/session/{session_id}/message", params={"directory": directory})
    if response.status_code != 200:
        return f"messages: HTTP {response.status_code}", 0
    tools = [p for m in response.json() for p in m.get("parts", []) if p.get("type") == "tool"]
    done = [p for p in tools if p.get("tool") == "bash" and (p.get("state") or {}).get("status") == "completed"
            and str((p.get("state") or {}).get("output", "")).strip() == TOOL_OUTPUT]
    problem = None if done else f"tool parts {[(p.get('tool'), (p.get('state') or {}).get('status')) for p in tools]}"
    return problem, len(tools)


async def sample(client: httpx.AsyncClient, path: str, params: dict, stop: asyncio.Event,
                 latencies: list[float], failures: list[str]) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        response = await client.get(path, params=params)
        elapsed = time.perf_counter() - began
        latencies.append(elapsed)
        if response.status_code != 200:
            failures.append(f"{path}: HTTP {response.status_code}")
        try:
            await asyncio.wait_for(stop.wait(), max(0.0, PROBE_INTERVAL - elapsed))
        except TimeoutError:
            pass


async def batch(args, sessions: int, *, probes: bool) -> dict:
    params = {"directory": args.directory}
    limits = httpx.Limits(max_connections=sessions + 4, max_keepalive_connections=sessions + 4)
    timeout = httpx.Timeout(args.timeout)
    async with httpx.AsyncClient(base_url=args.base_url, headers=args.headers, limits=limits,
                                 timeout=timeout) as client, \
            httpx.AsyncClient(base_url=args.base_url, headers=args.headers, timeout=timeout) as health_client, \
            httpx.AsyncClient(base_url=args.base_url, headers=args.headers, timeout=timeout) as list_client:
        created = await asyncio.gather(*(client.post("/session", params=params, json={}) for _ in range(sessions)))
        for response in created:
            response.raise_for_status()
        ids = [response.json()["id"] for response in created]
        # Warm the probes' connections so the first sample does not pay a connect.
        await health_client.get("/global/health")
        await list_client.get("/session", params=params)
        stop = asyncio.Event()
        health, listing, failures = [], [], []
        samplers = [asyncio.create_task(sample(health_client, "/global/health", {}, stop, health, failures)),
                    asyncio.create_task(sample(list_client, "/session", params, stop, listing, failures))] \
            if probes else []
        cpu_start = tree_ticks(args.server_pid) if args.server_pid else None
        calls_start = args.model_calls() if args.model_calls else None
        began = time.perf_counter()
        results = await asyncio.gather(*(prompt(client, session_id, args.directory) for session_id in ids))
        wall = time.perf_counter() - began
        stop.set()
        await asyncio.gather(*samplers)
        settle_began = time.perf_counter()
        cpu = cpu_seconds_between(cpu_start, await quiet_tree(args.server_pid)) if cpu_start is not None else None
        settle = time.perf_counter() - settle_began
        model_calls = args.model_calls() - calls_start if args.model_calls else None
        checked = await asyncio.gather(*(tool_calls(client, i, args.directory) for i in ids))
        tools = [problem for problem, _ in checked]
        per_session = [answer or tool for (_, answer), tool in zip(results, tools, strict=True)]
        problems = [p for _, p in results if p] + [p for p in tools if p] + failures
        await asyncio.gather(*(client.delete(f"/session/{session_id}", params=params) for session_id in ids))
    latencies = [latency for latency, _ in results]
    return {"sessions": sessions, "correct": per_session.count(None),
            "problems": problems[:5], "problem_count": len(problems),
            "wall_s": wall, "prompt_p50_s": percentile(latencies, 50), "prompt_p99_s": percentile(latencies, 99),
            "cpu_ms_per_prompt": cpu * 1000 / sessions if cpu is not None else None, "settle_s": settle,
            "model_calls_per_prompt": model_calls / sessions if model_calls is not None else None,
            "tool_calls_per_prompt": sum(count for _, count in checked) / sessions,
            "health_p50_ms": _ms(health, 50), "health_p99_ms": _ms(health, 99), "health_samples": len(health),
            "session_p50_ms": _ms(listing, 50), "session_p99_ms": _ms(listing, 99), "session_samples": len(listing),
            "load": os.getloadavg()[0]}


async def run(args) -> list[dict]:
    # The first prompt pays for what a server starts once (its sandbox, the model's client, caches).
    for _ in range(2):
        warm = await batch(args, 1, probes=False)
        if warm["problem_count"]:
            raise SystemExit(f"the warm-up prompt failed: {warm['problems']}")
    figures = []
    for sessions in args.sessions:
        quiet = await batch(args, sessions, probes=False)
        probed = await batch(args, sessions, probes=True)
        figure = {**quiet, **{k: probed[k] for k in probed if k.startswith(("health_", "session_"))},
                  "probed_wall_s": probed["wall_s"], "probed_correct": probed["correct"],
                  "problems": quiet["problems"] + probed["problems"],
                  "problem_count": quiet["problem_count"] + probed["problem_count"]}
        figures.append(figure)
        print(row(figure), file=sys.stderr, flush=True)
    return figures


# ---------------------------------------------------------------- tables
HEADER = ("| K | correct | batch wall (s) | prompt p50 (s) | p99 (s) | server CPU per prompt (ms) "
          "| health p50 / p99 (ms) | GET /session p50 / p99 (ms) | load |")


def _f(value, spec: str) -> str:
    return format(value, spec) if value is not None else "-"


def row(f: dict) -> str:
    correct = f"{f['correct'] + f['probed_correct']}/{2 * f['sessions']}"
    return (f"| {f['sessions']} | {correct} | {_f(f['wall_s'], '.2f')} | {_f(f['prompt_p50_s'], '.2f')} | "
            f"{_f(f['prompt_p99_s'], '.2f')} | {_f(f['cpu_ms_per_prompt'], '.0f')} | "
            f"{_f(f['health_p50_ms'], '.1f')} / {_f(f['health_p99_ms'], '.1f')} | "
            f"{_f(f['session_p50_ms'], '.1f')} / {_f(f['session_p99_ms'], '.1f')} | {f['load']:.2f} |")


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def compare(a_files: list[str], b_files: list[str], names: tuple[str, str]) -> None:
    """Medians per K over each side's runs, and A / B."""
    sides = [[json.loads(Path(f).read_text()) for f in files] for files in (a_files, b_files)]
    counts = sorted({f["sessions"] for run in sides[0] for f in run["figures"]})

    def median(side: int, sessions: int, key: str) -> float | None:
        return _median([f[key] for run in sides[side] for f in run["figures"] if f["sessions"] == sessions])

    def pair(sessions: int, key: str, spec: str, scale: float = 1) -> str:
        a, b = median(0, sessions, key), median(1, sessions, key)
        ratio = f" ({a / b:.2f})" if a is not None and b else ""
        return f"{_f(a and a * scale, spec)} / {_f(b and b * scale, spec)}{ratio}"

    def correct(side: int, sessions: int) -> str:
        figures = [f for run in sides[side] for f in run["figures"] if f["sessions"] == sessions]
        return f"{sum(f['correct'] + f['probed_correct'] for f in figures)}/{sum(2 * f['sessions'] for f in figures)}"

    print(f"{names[0]} / {names[1]}: medians of {len(sides[0])} and {len(sides[1])} runs (ratio in brackets)")
    print(f"| K | batch wall (s) | prompt p50 (s) | prompt p99 (s) | CPU per prompt (ms) | health p99 (ms) "
          f"| GET /session p99 (ms) | correct {names[0]} | correct {names[1]} |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in counts:
        print(f"| {k} | {pair(k, 'wall_s', '.2f')} | {pair(k, 'prompt_p50_s', '.2f')} | "
              f"{pair(k, 'prompt_p99_s', '.2f')} | {pair(k, 'cpu_ms_per_prompt', '.0f')} | "
              f"{pair(k, 'health_p99_ms', '.1f')} | {pair(k, 'session_p99_ms', '.1f')} | "
              f"{correct(0, k)} | {correct(1, k)} |")
    if all(f.get("model_calls_per_prompt") for side in sides for run in side for f in run["figures"]):
        per_call(names, counts, median)
    if len(counts) > 1:
        low, high = counts[0], counts[-1]
        for side, name in enumerate(names):
            a, b = median(side, high, "cpu_ms_per_prompt"), median(side, low, "cpu_ms_per_prompt")
            if a is not None and b:
                print(f"{name}: CPU per prompt at K={high} / K={low}: {a / b:.2f}")
    problems = [p for side in sides for run in side for f in run["figures"] for p in f["problems"]]
    if problems:
        print("problems (first few):", *problems[:5], sep="\n  ")


def per_call(names: tuple[str, str], counts: list[int], median) -> None:
    """CPU per model call of each side, and what A costs more than B per prompt, shared out per model call
    and per tool call (medians per K): the figures a per-call CPU limit is judged by."""
    print(f"\nserver CPU per call: {names[0]} / {names[1]} (medians); Δ = {names[0]} − {names[1]} per prompt")
    print("| K | model calls per prompt | tool calls per prompt | CPU per model call (ms) | Δ per prompt (ms) "
          "| Δ per model call (ms) | Δ per tool call (ms) |")
    print("|---|---|---|---|---|---|---|")
    for k in counts:
        cpu = [median(side, k, "cpu_ms_per_prompt") for side in (0, 1)]
        models = [median(side, k, "model_calls_per_prompt") for side in (0, 1)]
        tools = [median(side, k, "tool_calls_per_prompt") for side in (0, 1)]
        per_model = [c / m if c is not None and m else None for c, m in zip(cpu, models, strict=True)]
        delta = cpu[0] - cpu[1] if None not in cpu else None
        print(f"| {k} | {_f(models[0], '.2f')} / {_f(models[1], '.2f')} | {_f(tools[0], '.2f')} / "
              f"{_f(tools[1], '.2f')} | {_f(per_model[0], '.1f')} / {_f(per_model[1], '.1f')} | "
              f"{_f(delta, '+.1f')} | {_f(delta / models[0] if delta is not None and models[0] else None, '+.1f')} | "
              f"{_f(delta / tools[0] if delta is not None and tools[0] else None, '+.1f')} |")


# ---------------------------------------------------------------- entry points
def serve_fake(port: int, directories: list[str], tools: int) -> None:
    fake = ToolThenAnswer(port, log_calls=True, tools=tools)
    for directory in directories:
        write_config(directory, fake.base_url)
    print(fake.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        # agent.py compare NAME_A NAME_B a1.json ... -- b1.json ...
        argv = sys.argv[2:]
        split = argv.index("--")
        compare(argv[2:split], argv[split + 1:], names=(argv[0], argv[1]))
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "fake":
        serve_fake(int(sys.argv[2]), [os.path.realpath(d) for d in sys.argv[3:]],
                   tools=int(os.environ.get("AGENT_TOOLS", "1")))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base_url")
    parser.add_argument("--token", help="Bearer token (agentserver); none for opencode serve")
    parser.add_argument("--directory", required=True, help="the project directory (gets opencode.json)")
    parser.add_argument("--server-pid", type=int, help="the server's pid, for its process tree's CPU time")
    parser.add_argument("--sessions", default="1,8,32", help="K values, comma-separated")
    parser.add_argument("--llm", help="a running fake's base URL (`agent.py fake`); default: one in this process")
    parser.add_argument("--llm-log", help="that fake's output (one line per model call), to count the calls")
    parser.add_argument("--timeout", type=float, default=300, help="seconds one request may take")
    parser.add_argument("--json", help="write the figures here (for `agent.py compare`)")
    args = parser.parse_args()
    if not args.base_url.startswith(("http://127.", "http://localhost", "http://[::1]")):
        parser.error("loopback only")
    args.base_url = args.base_url.rstrip("/")
    args.directory = os.path.realpath(os.path.expanduser(args.directory))
    args.sessions = [int(k) for k in args.sessions.split(",")]
    args.headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    fake = None if args.llm else ToolThenAnswer(tools=int(os.environ.get("AGENT_TOOLS", "1")))
    args.model_calls = (lambda: fake.calls) if fake is not None else \
        (lambda: _lines(args.llm_log)) if args.llm_log else None
    previous = write_config(args.directory, args.llm or fake.base_url)
    try:
        print(HEADER, file=sys.stderr)
        figures = asyncio.run(run(args))
    finally:
        if fake is not None:
            fake.close()
            config = Path(args.directory) / "opencode.json"
            if previous is None:
                config.unlink(missing_ok=True)
            else:
                config.write_text(previous)
    print(f"server {args.base_url}: {len(args.sessions)} batch sizes, each run twice (quiet, then probed)")
    print(HEADER)
    print("|---|---|---|---|---|---|---|---|---|")
    for figure in figures:
        print(row(figure))
    for figure in figures:
        for problem in figure["problems"]:
            print(f"K={figure['sessions']}: {problem}")
    if args.json:
        Path(args.json).write_text(json.dumps({"base_url": args.base_url, "figures": figures}, indent=1))
    return 0 if all(f["problem_count"] == 0 for f in figures) else 1


def _lines(path: str) -> int:
    with open(path, "rb") as log:
        return sum(1 for _ in log)


if __name__ == "__main__":
    sys.exit(main())
