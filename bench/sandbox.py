"""Sandbox overhead: p50 of PTY spawn-to-first-output, session.shell round trip and vcs.status latency, with the
bubblewrap sandbox and with AGENTSERVER_SANDBOX=off, each on a fresh server over SQLite in a throw-away data dir
(its own user, root and repository), plus the launcher alone (`/bin/true` through sandbox.run, in a one-shot
sandbox and offline in the user's resident one, as the server's git runs). The two modes' samples alternate,
so a machine busy with something else slows both alike.

    .venv/bin/python bench/sandbox.py            # 30 samples per metric
    .venv/bin/python bench/sandbox.py --samples 100

Run it on an idle machine: on a loaded one the numbers measure the scheduler as much as the sandbox."""
from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def set_up(work: Path) -> tuple[str, Path]:
    """Database, user `bench` with a root holding a git repository, a provider config; returns (token, repo)."""
    os.environ.update(AGENTSERVER_DATA_DIR=str(work / "data"), DJANGO_SETTINGS_MODULE="server.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from auth_app.tokens import roots_add, token_create
    from projects_app.models import UserConfig

    call_command("migrate", verbosity=0)
    repo = work / "root" / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@localhost", "commit", "-qm", "i"]):
        if args[0] == "add":
            (repo / "README.md").write_text("bench\n")
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "README.md").write_text("bench, changed\n")
    user = get_user_model().objects.create_user(username="bench", password="x")
    roots_add(user=user, path=str(work / "root"))
    _, token = token_create(user=user)
    provider = {"name": "none", "npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://127.0.0.1:9"},
                "models": {"m": {"name": "m", "limit": {"context": 1000, "output": 100}}}}
    UserConfig.objects.create(user=user, data={"provider": {"p": provider}, "model": "p/m"})
    return token, repo


def start(mode: str, work: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "AGENTSERVER_SANDBOX": mode}
    log = open(work / f"server-{mode}.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "server.serve", "--host", "127.0.0.1", "--port",
                                str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/global/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"server ({mode}) did not start; see {work}/server-{mode}.log")


async def pty_first_output(client: httpx.Client, url: str, token: str, repo: Path) -> float:
    began = time.perf_counter()
    pty = client.post("/pty", params={"directory": str(repo)},
                      json={"command": "/bin/sh", "args": ["-c", "echo first-output; exec sleep 30"]}).json()
    ws_url = url.replace("http", "ws", 1) + f"/pty/{pty['id']}/connect?cursor=0&directory={repo}"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
        seen = ""
        while "first-output" not in seen:
            message = await ws.recv()
            seen += message if isinstance(message, str) else message.decode(errors="replace")
    elapsed = time.perf_counter() - began
    client.delete(f"/pty/{pty['id']}")
    return elapsed


def timed(call) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def probes(url: str, token: str, repo: Path) -> tuple[httpx.Client, dict[str, Callable[[], float]]]:
    """One timed call per metric against the server at `url` (each warmed once)."""
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    params = {"directory": str(repo)}
    session = client.post("/session", params=params, json={}).json()

    def shell():
        response = client.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "echo hi"})
        assert response.status_code == 200, response.text

    def status():
        response = client.get("/api/vcs/status", params=params)
        assert response.status_code == 200 and response.json()["data"], response.text

    for warm in (shell, status):
        warm()
    return client, {
        "PTY spawn → first output": lambda: asyncio.run(pty_first_output(client, url, token, repo)),
        "session.shell `echo hi`": lambda: timed(shell),
        "vcs.status (1 changed file)": lambda: timed(status),
    }


def launcher() -> dict[str, dict[str, Callable[[], float]]]:
    """The launcher alone, in this process, sandboxed and off: `/bin/true` in a one-shot sandbox (as the
    user's programs get), and offline (as the server's git on the user's files: the resident sandbox)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from agentserver.sandbox import launcher as sandbox
    from auth_app.tokens import roots_of

    user = get_user_model().objects.get(username="bench")
    roots = roots_of(user)

    def run(mode: str, offline: bool) -> float:
        settings.SANDBOX_MODE = mode  # (the availability check is cached from the first, sandboxed, call)
        return timed(lambda: sandbox.run(user, ["/bin/true"], cwd=roots[0], roots=roots, offline=offline))

    settings.SANDBOX_MODE = "on"
    sandbox.unavailable_reason.cache_clear()
    run("on", False)
    run("on", True)
    return {"launcher `/bin/true` (in-process)": {mode: functools.partial(run, mode, False) for mode in ("off", "on")},
            "launcher offline, resident (in-process)": {mode: functools.partial(run, mode, True)
                                                        for mode in ("off", "on")}}


def interleaved(calls: dict[str, dict[str, Callable[[], float]]], samples: int) -> dict[str, dict[str, float]]:
    """p50 per metric and mode, the modes' samples alternating (off first, then sandbox first) so that load
    from elsewhere on the machine falls on both alike."""
    rows: dict[str, dict[str, list[float]]] = {}
    for index in range(samples):
        order = ("off", "on") if index % 2 == 0 else ("on", "off")
        for name in calls["off"]:
            for mode in order:
                rows.setdefault(name, {}).setdefault(mode, []).append(calls[mode][name]())
    return {name: {mode: statistics.median(values) * 1000 for mode, values in modes.items()}
            for name, modes in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentserver-bench-sandbox-"))
    processes, clients = [], []
    try:
        token, repo = set_up(work)
        calls: dict[str, dict[str, Callable[[], float]]] = {}
        for mode in ("off", "on"):
            process, url = start(mode, work)
            processes.append(process)
            client, calls[mode] = probes(url, token, repo)
            clients.append(client)
        for name, modes in launcher().items():
            for mode, call in modes.items():
                calls[mode][name] = call
        rows = interleaved(calls, args.samples)
        print(f"load avg {os.getloadavg()[0]:.2f}, {args.samples} samples, p50 in ms")
        print(f"| {'metric':40} | {'off':>8} | {'sandbox':>8} | {'overhead':>8} |")
        print(f"|{'-' * 42}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
        for name, values in rows.items():
            print(f"| {name:40} | {values['off']:8.1f} | {values['on']:8.1f} | {values['on'] - values['off']:+8.1f} |")
    finally:
        for client in clients:
            client.close()
        for process in processes:
            process.terminate()
            process.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
