"""bench/agent.py stays runnable: one K=1 run against the live test server, and its fake model's script."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm import RecordedRequest

pytestmark = pytest.mark.long_running(seconds=20)  # scheduled before shorter files (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent.parent


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_agent", ROOT / "bench" / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(persona, server, tmp_path, sessions: int) -> dict:
    """bench/agent.py against the live test server with `sessions` at once; its one figure."""
    figures_path = tmp_path / "agent.json"
    done = subprocess.run(
        [sys.executable, "bench/agent.py", server.url, "--token", persona.token, "--directory", str(persona.repo),
         "--server-pid", str(server.process.pid), "--sessions", str(sessions), "--json", str(figures_path)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    [figure] = json.loads(figures_path.read_text())["figures"]
    return figure


def test_one_session_answers_correctly_and_every_figure_is_measured(alice, server, tmp_path):
    figure = run_bench(alice, server, tmp_path, 1)
    assert figure["sessions"] == 1
    assert (figure["correct"], figure["probed_correct"], figure["problem_count"]) == (1, 1, 0), figure["problems"]
    assert 0 < figure["prompt_p50_s"] <= figure["wall_s"]
    assert figure["cpu_ms_per_prompt"] > 0
    assert figure["health_samples"] >= 1 and figure["health_p99_ms"] > 0
    assert figure["session_samples"] >= 1 and figure["session_p99_ms"] > 0
    # Its sessions are deleted and the project's opencode.json it wrote is gone again.
    assert alice.get("/session", params={"directory": str(alice.repo)}).json() == []
    assert not (alice.repo / "opencode.json").exists()


def test_thirty_two_sessions_at_once_each_run_bash_and_answer_correctly(alice, server, tmp_path):
    """32 prompts at once, each running bash in its sandbox: every command's output comes back whole (spawning
    and reading many programs at once once closed another's descriptor: EBADF in a few of 64)."""
    figure = run_bench(alice, server, tmp_path, 32)
    assert (figure["correct"], figure["problem_count"]) == (32, 0), figure["problems"]


def test_the_fake_model_calls_bash_then_answers_with_what_came_back():
    bench = load_bench()
    fake = bench.ToolThenAnswer()
    try:
        def reply(*messages):
            return fake._next_reply(RecordedRequest("openai", "/v1/chat/completions", {},
                                                    {"messages": list(messages)}))

        user = {"role": "user", "content": bench.PROMPT}
        assert reply(user).tool_calls == [("bash", {"command": "echo hi", "description": "Print hi"})]
        call = {"role": "assistant", "tool_calls": [{"id": "call_fake_0"}]}
        assert reply(user, call, {"role": "tool", "content": "hi\n"}).text == bench.ANSWER
        assert reply(user, call, {"role": "tool", "content": "denied"}).text == "Unexpected tool output: 'denied'"
        title = {"role": "system", "content": "You are a title generator."}
        assert reply(title, user).text == "Bench session"
    finally:
        fake.close()


def test_a_tool_heavy_fake_asks_for_every_call_at_once_and_wants_every_output_back():
    """AGENT_TOOLS=N (bench/perf.sh): the first model call asks for N bash calls; the answer needs all N."""
    bench = load_bench()
    fake = bench.ToolThenAnswer(tools=3)
    try:
        def reply(*messages):
            return fake._next_reply(RecordedRequest("openai", "/v1/chat/completions", {},
                                                    {"messages": list(messages)}))

        user = {"role": "user", "content": bench.PROMPT}
        assert reply(user).tool_calls == [("bash", {"command": "echo hi", "description": f"Print hi ({n})"})
                                          for n in (1, 2, 3)]
        call = {"role": "assistant", "tool_calls": [{"id": f"call_fake_{n}"} for n in range(3)]}
        hi = {"role": "tool", "content": "hi\n"}
        assert reply(user, call, hi, hi, hi).text == bench.ANSWER
        assert reply(user, call, hi, hi).text == "Expected 3 tool outputs, got 2"
        assert reply(user, call, hi, {"role": "tool", "content": "denied"}, hi).text == \
            "Unexpected tool output: 'denied'"
    finally:
        fake.close()
