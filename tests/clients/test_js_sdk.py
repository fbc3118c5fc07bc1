"""The JS SDK `@opencode-ai/sdk` (1.18.33, v1 client) against our server through node: session create,
synchronous prompt, messages, config providers (with `capabilities`), agents, a typed 404, and the /event stream.
Skips without node or the SDK (scripts/test.sh installs it into .tools/ when npm is available)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.fixtures import FAKE_PROVIDER, Reply

HERE = Path(__file__).resolve().parent


def sdk_node_modules() -> Path | None:
    for candidate in (os.environ.get("OPENCODE_SDK_NODE_MODULES"), str(ROOT / ".tools" / "node_modules")):
        if candidate and (Path(candidate) / "@opencode-ai" / "sdk" / "package.json").exists():
            return Path(candidate)
    return None


@pytest.fixture
def sdk_dir(tmp_path) -> Path:
    modules = sdk_node_modules()
    if shutil.which("node") is None or modules is None:
        pytest.skip("node or @opencode-ai/sdk not installed (scripts/test.sh: npm install --prefix .tools "
                    "@opencode-ai/sdk@1.18.33)")
    (tmp_path / "node_modules").symlink_to(modules)
    shutil.copy(HERE / "sdk_smoke.mjs", tmp_path / "smoke.mjs")
    return tmp_path


def test_the_js_sdk_creates_prompts_and_reads_back(server, alice, llm, sdk_dir):
    llm.script(Reply(text="Hello, SDK."))
    result = subprocess.run(["node", "smoke.mjs", server.url, alice.token, str(alice.repo)], cwd=sdk_dir,
                            capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["create"] == [200, "sdk smoke", str(alice.repo)]
    assert out["prompt"] == 200 and out["text"] == "Hello, SDK."
    assert out["messages"] == ["user", "assistant"]
    assert FAKE_PROVIDER in out["providers"]
    assert {"toolcall", "reasoning", "attachment", "temperature", "input", "output"} <= set(out["capabilities"])
    assert "build" in out["agents"]
    assert out["missing"] == [404, "NotFoundError"]
    assert {"server.connected", "message.part.delta", "session.idle"} <= set(out["events"])
