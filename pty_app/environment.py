"""The child's environment: an allowlist, never the server's own environment. The server process holds
SECRET_KEY, DATABASE_URL, REDIS_URL, provider keys and AGENTSERVER_*/DJANGO_* settings; none may reach a
shell a user opens."""
import os
import pwd

ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "SHELL", "USER", "LOGNAME", "TMPDIR")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def default_shell() -> str:
    shell = os.environ.get("SHELL", "")
    if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"


def child_environment(*, home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """HOME is the user's default root, not the server's home: the server's dotfiles (which may export
    tokens), ~/.netrc, ~/.ssh and ~/.git-credentials stay out of a login shell's reach by default."""
    env = {key: os.environ[key] for key in ALLOWED if key in os.environ}
    env.update({key: value for key, value in os.environ.items() if key.startswith("LC_")})
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env["SHELL"] = default_shell()
    try:
        account = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        account = str(os.getuid())
    env.setdefault("USER", account)
    env.setdefault("LOGNAME", account)
    env["HOME"] = home
    env["COLORTERM"] = "truecolor"
    env.update(extra or {})
    env["TERM"] = "xterm-256color"  # as the reference: the request's env cannot change the terminal type
    return env
