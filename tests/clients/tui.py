"""Drive `opencode attach` (the terminal UI) inside a private tmux server: start it, type, read the screen."""
from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from tests.conftest import ROOT

ARTIFACTS = ROOT / "test-artifacts" / "clients"


class Tui:
    def __init__(self, command: list[str], env: dict, cwd: Path, stderr_path: Path, *, width=200, height=50):
        self.socket = f"agentserver-tui-{uuid.uuid4().hex[:10]}"
        self.stderr_path = stderr_path
        script = stderr_path.with_suffix(".sh")
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items())
        script.write_text(f"{exports}cd {shlex.quote(str(cwd))}\n"
                          f"{shlex.join(command)} 2>{shlex.quote(str(stderr_path))}\n"
                          f"echo \"TUI EXITED $?\"; sleep 600\n")
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", str(width), "-y", str(height),
                   f"bash {shlex.quote(str(script))}")

    @staticmethod
    def available() -> bool:
        return shutil.which("tmux") is not None

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True,
                              timeout=10).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "tui")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "tui", "-l", text)

    def press(self, *keys: str) -> None:
        for key in keys:
            self._tmux("send-keys", "-t", "tui", key)
            time.sleep(0.3)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The screen once it shows `text`; AssertionError with the last screen and the client's stderr."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            if "TUI EXITED" in screen:
                break
            time.sleep(0.25)
        stderr = self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""
        raise AssertionError(f"{text!r} never appeared on the TUI screen:\n{screen}\nstderr:\n{stderr[-3000:]}")

    def save(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{name}.txt").write_text(self.screen())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
