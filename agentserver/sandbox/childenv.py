"""The one builder of a child process's environment (PTYs, the bash tool, session.shell, command
templates, MCP servers). An allowlist, never the server's own environment: the server holds SECRET_KEY,
DATABASE_URL, REDIS_URL, Fernet and provider keys and AGENTSERVER_*/DJANGO_* settings, and none of them may
reach a process a user or a model chose."""
import os
import pwd

ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "TMPDIR")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def default_shell() -> str:
    shell = os.environ.get("SHELL", "")
    if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"


def safe_environment(*, home: str, **overrides: str) -> dict[str, str]:
    """HOME is the user's directory (their first root), not the server's: the server's dotfiles, ~/.netrc,
    ~/.ssh and ~/.git-credentials stay out of reach by default."""
    env = {key: os.environ[key] for key in ALLOWED if key in os.environ}
    env.update({key: value for key, value in os.environ.items() if key.startswith("LC_")})
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", "C.UTF-8")
    try:
        account = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        account = str(os.getuid())
    env.setdefault("USER", account)
    env.setdefault("LOGNAME", account)
    env["HOME"] = home
    env["SHELL"] = default_shell()
    env.update(overrides)
    return env
