"""Language-server benchmark: the time from an agent's edit to its diagnostics, first with the server cold
(start + initialize + first analysis), then warm (didChange → publishDiagnostics → settled).

It runs exactly what the edit tools run after writing a file (`projects_app.edit_feedback.after_edit`: the
formatter, if one is enabled, then the language server's check) in a throw-away data directory and project,
with the server started through the sandbox launcher as in production:

    .venv/bin/python bench/lsp.py --edits 20 --repeat 3

Each cold start is a fresh project root (a new server); the warm edits alternate between a file with a type
error and its fix, so every edit changes the diagnostics. Prints one row per language (median of the repeats
for the cold start; p50/p90/max over all warm edits), and the 1-minute load average: on a busy machine the
numbers measure the scheduler too."""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = {
    "python (basedpyright)": ("main.py",
                              "def total(price: int) -> int:\n    return price\n\n\ntotal({arg})\n", "'a'", "1"),
    "typescript (typescript-language-server)": ("main.ts",
                                                "export function total(price: number): number {{\n"
                                                "  return price\n}}\n\ntotal({arg})\n", "'a'", "1"),
}


def setup(wait: float) -> tuple[object, Path]:
    data = Path(tempfile.mkdtemp(prefix="lsp-bench-"))
    os.environ["AGENTSERVER_DATA_DIR"] = str(data)
    os.environ["AGENTSERVER_LSP_DIAGNOSTICS_WAIT_SECONDS"] = str(wait)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from auth_app.tokens import roots_add

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(username="bench", password="x")
    roots_add(user=user, path=str(data))
    return user, data


async def one_round(user, base: Path, name: str, case: tuple, edits: int) -> tuple[float | None, list[float]]:
    from asgiref.sync import sync_to_async

    from projects_app.contexts import context_for_directory
    from projects_app.edit_feedback import after_edit
    from projects_app.lsp.service import lsp_dispose, lsp_status

    filename, template, bad, good = case
    project = Path(tempfile.mkdtemp(dir=base))
    context = await sync_to_async(context_for_directory)(user, str(project))
    path = str(project / filename)
    config: dict = {}

    async def edit(content: str) -> tuple[float, dict]:
        Path(path).write_text(content)
        started = time.monotonic()
        feedback = await after_edit(context=context, config=config, files=[path])
        return time.monotonic() - started, feedback.diagnostics

    cold, diagnostics = await edit(template.format(arg=bad))
    if not await sync_to_async(lsp_status)(context=context):
        return None, []  # no server for this language here (not installed)
    if not diagnostics.get(path):
        print(f"warning: {name}: the cold edit came back without its diagnostics (timed out?)")
    warm = []
    for index in range(edits):
        seconds, diagnostics = await edit(template.format(arg=good if index % 2 == 0 else bad))
        expected_errors = index % 2 == 1
        if bool([d for d in diagnostics.get(path, []) if d.get("severity") == 1]) != expected_errors:
            print(f"warning: {name}: edit {index + 1} came back without its diagnostics (timed out?)")
        warm.append(seconds)
    await sync_to_async(lsp_dispose)(user=user, directory=str(project))
    return cold, warm


def ms(value: float) -> str:
    return f"{value * 1000:8.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=20, help="warm edits after each cold start")
    parser.add_argument("--repeat", type=int, default=3, help="cold starts (fresh servers) per language")
    parser.add_argument("--wait", type=float, default=60.0,
                        help="the longest wait for an edit's diagnostics (the server's default is 10 s)")
    args = parser.parse_args()
    user, base = setup(args.wait)
    rows = []
    for name, case in CASES.items():
        colds, warms = [], []
        for _ in range(args.repeat):
            cold, warm = asyncio.run(one_round(user, base, name, case, args.edits))
            if cold is None:
                break
            colds.append(cold)
            warms += warm
        if not colds:
            rows.append(f"{name:42} {'(not installed)':>8}")
            continue
        warms.sort()
        p90 = warms[min(len(warms) - 1, int(len(warms) * 0.9))]
        rows.append(f"{name:42} {ms(statistics.median(colds))} {ms(min(colds))} {ms(max(colds))} "
                    f"{ms(statistics.median(warms))} {ms(p90)} {ms(max(warms))} {len(warms):6}")
    print(f"edit → diagnostics, ms ({args.repeat} cold starts, {args.edits} warm edits each; "
          f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs)")
    print(f"{'server':42} {'cold p50':>8} {'cold min':>8} {'cold max':>8} {'warm p50':>8} {'warm p90':>8} "
          f"{'warm max':>8} {'edits':>6}")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
