"""schemathesis, with every check on and alice's token, fuzzes the server from its own /doc for a bounded
time and finds nothing: no request the document admits is refused, no invalid one is taken, no status,
content type, header or body outside the document, no server error, no answer slower than the bound, no hang.

It runs against a worker of its own (server_factory): the terminals, MCP servers and sessions the fuzzer
makes end with that worker, not in the shared one the other tests use. Six schemathesis processes share the
work, three per route set (the v2 routes under /api, the original ones at the root), so that an operation that
waits (an MCP server's connect timeout) does not hold up the rest, and no process has more operations than its
time budget reaches on a loaded machine (beside the other database's suite, one reached 42 of the 72 of a
set of v2 routes that also held the tools'); each has one thread: two threads of
hypothesis in one CPython 3.11 process can break its AST compiler."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.long_running(seconds=65)  # scheduled before shorter files (tests/conftest.py)

# The fuzzing budget of each process; the run stops there, finished or not, so the test stays bounded. The six
# processes keep both cores busy for all of it (at 100 s, a third of the suite's CPU). In 45 s on a quiet 2-core
# machine every phase ran on every operation, about 6,000 cases in all (15,000 in 100 s); each run draws new
# ones (no fixed seed). AGENTSERVER_FUZZ_SECONDS=600 searches deeper.
FUZZ_SECONDS = int(os.environ.get("AGENTSERVER_FUZZ_SECONDS", "60"))
CONFIG = Path(__file__).with_name("schemathesis.toml")
SESSIONS = "(session|message|part|permission|question|share)"
TOOLS = "(experimental|sync|mcp|provider|auth|config|tui)"
ROUTE_SETS = {
    "v2 sessions": ["--include-path-regex", f"^/api/{SESSIONS}"],
    "v2 tools": ["--include-path-regex", f"^/api/{TOOLS}"],
    "v2 others": ["--include-path-regex", "^/api/", "--exclude-path-regex", f"^/api/({SESSIONS}|{TOOLS})"],
    "original sessions": ["--include-path-regex", f"^/{SESSIONS}"],
    "original tools": ["--include-path-regex", f"^/{TOOLS}"],
    "original others": ["--exclude-path-regex", f"^/(api/|{SESSIONS}|{TOOLS})"],
}


def _summary(output: str) -> str:
    return output[output.rfind("SUMMARY"):] if "SUMMARY" in output else output[-4000:]


def _count(summary: str, before: str, after: str) -> int:
    return int(summary.split(before, 1)[1].split(after, 1)[0].strip().split()[0]) if before in summary else -1


@pytest.mark.timeout(FUZZ_SECONDS + 240)
def test_schemathesis_with_every_check_finds_nothing(server_factory, alice, tmp_path):
    live = server_factory()
    st = Path(sys.executable).with_name("st")
    seed = ["--seed", os.environ["AGENTSERVER_FUZZ_SEED"]] if os.environ.get("AGENTSERVER_FUZZ_SEED") else []
    runs = {}
    for name, selection in ROUTE_SETS.items():
        command = [
            str(st), "--config-file", str(CONFIG), "run", f"{live.url}/doc",  # every check: the config says so
            *selection, *seed,
            "-H", f"Authorization: Bearer {alice.token}",
            "--max-time", str(FUZZ_SECONDS),
            "--workers", "1",
            "--request-timeout", "30",       # no hang: a request that does not answer is an error
            "--max-response-time", "30",     # an MCP server the fuzzer registers may take its connect timeout
            "--report", "ndjson", "--report-dir", str(tmp_path / name.replace(" ", "-")),
        ]
        runs[name] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"})
    outputs = {name: run.communicate(timeout=FUZZ_SECONDS + 200)[0] for name, run in runs.items()}
    failed = [name for name, run in runs.items() if run.returncode != 0]
    assert not failed, ("".join(f"schemathesis found failures in the {name} routes:\n{outputs[name][-20000:]}\n"
                                for name in failed) + f"the server's log ends:\n{live.log()[-5000:]}")
    for name, output in outputs.items():
        summary = _summary(output)
        # It really ran: every operation of the set, and many cases beyond the first ones.
        assert "Errored" not in summary, summary
        # The boundary values of each operation (coverage) and random cases (fuzzing) ran. The sequences that
        # follow the document's links from one answer into the next request (stateful) come last: on a loaded
        # machine a set's budget can end before them.
        for phase in ("Coverage", "Fuzzing"):
            assert f"✅ {phase}" in summary, summary
        tested = _count(summary, "Tested:", "\n")
        assert tested == _count(summary, "Selected:", "/") > 10, summary
        # Cases per operation, not a fixed total: under a time budget the total is the machine's speed (a
        # loaded 2-core machine made 187 where a quiet one makes several hundred).
        assert _count(summary, "Test cases:", " generated") >= 3 * tested, summary
    # The sets together are every operation of the document, each once.
    total = _count(_summary(outputs["v2 sessions"]).replace("/", " / "), "/", "\n")
    assert sum(_count(_summary(output), "Selected:", "/") for output in outputs.values()) == total
