"""schemathesis, with every check on and alice's token, fuzzes the server from its own /doc for a bounded
time and finds nothing: no request the document admits is refused, no invalid one is taken, no status or
body outside the document, no server error, no answer slower than the bound, no hang.

It runs against a worker of its own (server_factory): the terminals, MCP servers and sessions the fuzzer
makes end with that worker, not in the shared one the other tests use."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The fuzzing budget; the run stops there, finished or not, so the test stays bounded on a slow machine.
FUZZ_SECONDS = int(os.environ.get("AGENTSERVER_FUZZ_SECONDS", "90"))
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.mark.timeout(FUZZ_SECONDS + 240)
def test_schemathesis_with_every_check_finds_nothing(server_factory, alice, tmp_path):
    live = server_factory()
    st = Path(sys.executable).with_name("st")
    command = [
        str(st), "--config-file", str(CONFIG), "run", f"{live.url}/doc",  # every check: the config says so
        "-H", f"Authorization: Bearer {alice.token}",
        "--max-time", str(FUZZ_SECONDS),
        "--workers", "1",  # two threads of hypothesis in one CPython 3.11 process can break its AST compiler
        "--request-timeout", "30",       # no hang: a request that does not answer is an error
        "--max-response-time", "30",     # an MCP server the fuzzer registers may take its connect timeout
        "--report", "ndjson", "--report-dir", str(tmp_path / "report"),
    ]
    if os.environ.get("AGENTSERVER_FUZZ_SEED"):
        command += ["--seed", os.environ["AGENTSERVER_FUZZ_SEED"]]
    run = subprocess.run(command, capture_output=True, text=True, timeout=FUZZ_SECONDS + 200,
                         env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"})
    output = run.stdout + run.stderr
    summary = output[output.rfind("SUMMARY"):] if "SUMMARY" in output else output[-4000:]
    assert run.returncode == 0, f"schemathesis found failures (exit {run.returncode}):\n{output[-30000:]}"
    # It really ran: every operation of the document, and many cases.
    assert "Tested: " in summary and "Errored" not in summary, summary
    tested = int(summary.split("Tested: ", 1)[1].split()[0])
    selected = int(summary.split("Selected: ", 1)[1].split("/", 1)[0])
    assert tested == selected > 150, summary
    assert " generated" in summary, summary
    generated = int(summary.split(" generated", 1)[0].rsplit(None, 1)[-1])
    assert generated > 500, summary
