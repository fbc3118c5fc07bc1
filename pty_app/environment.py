"""The PTY child's environment: the safe allowlist of agentserver.sandbox.childenv, plus the request's env and a
terminal type."""
from agentserver.sandbox.childenv import default_shell, safe_environment  # noqa: F401  (default_shell re-exported)


def child_environment(*, home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = safe_environment(home=home, COLORTERM="truecolor")
    env.update(extra or {})
    env["TERM"] = "xterm-256color"  # as the reference: the request's env cannot change the terminal type
    return env
