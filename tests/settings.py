"""Test settings: the real settings, with a throwaway data directory and a file-backed SQLite test
database so the server subprocess the tests talk to can share it."""
import os
import sys
import tempfile

os.environ.setdefault("AGENTSERVER_DATA_DIR", tempfile.mkdtemp(prefix="agentserver-test-"))
# The interpreter (virtualenv + base install) and tests/fakes are read-only in users' sandboxes: tests start
# `sys.executable tests/fakes/...` as users' programs (MCP servers, PTY commands). The live servers the tests
# start inherit this environment.
# Users' sandboxed git leaves files owned by their uids in their roots; the tests' own git (as root) trusts them.
if "GIT_CONFIG_COUNT" not in os.environ:
    os.environ.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="safe.directory", GIT_CONFIG_VALUE_0="*")
os.environ.setdefault("AGENTSERVER_SANDBOX_EXPOSE", ",".join([
    sys.prefix, os.path.realpath(sys.base_prefix),
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakes")]))
# The scaled mode takes its keys from the environment (server/settings.py); every live server inherits this one.
if os.environ.get("DATABASE_URL", "").startswith("postgres"):
    os.environ.setdefault("SECRET_KEY", "agentserver-tests-only-secret-key")
# For this process and every live server, which inherits the environment: a cold language server's first
# analysis on a loaded CI machine can take longer than the default wait, and so can the spell between its
# syntax and its semantic diagnostics (CI saw typescript's error come more than 150 ms after the first).
os.environ.setdefault("AGENTSERVER_LSP_DIAGNOSTICS_WAIT_SECONDS", "60")
os.environ.setdefault("AGENTSERVER_LSP_DIAGNOSTICS_QUIET_SECONDS", "1.5")

from django.conf import global_settings  # noqa: E402

from tests.hashers import with_hasher  # noqa: E402

from server.settings import *  # noqa: E402,F401,F403
from server.settings import DATA_DIR, DATABASES  # noqa: E402

if DATABASES["default"]["ENGINE"] == "agentserver.db.sqlite":
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}

if DATABASES["default"]["ENGINE"] != "agentserver.db.sqlite":
    # The test process runs services in many short-lived threads (sync_to_async, tool waits); a small pool
    # runs dry there, and no request cycle returns connections to it. Plain per-thread connections instead.
    DATABASES["default"]["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 2}

# Users made by the tests get their PBKDF2 hashes (1,000 iterations) from a memo (tests/hashers.py); the live
# servers hash and check at the same count (tests/server_settings.py).
PASSWORD_HASHERS = with_hasher("tests.hashers.RepeatablePBKDF2PasswordHasher", global_settings.PASSWORD_HASHERS)
