"""Test settings: the real settings, with a throwaway data directory and a file-backed SQLite test
database so the daphne subprocess the tests talk to can share it."""
import os
import tempfile

os.environ.setdefault("AGENTSERVER_DATA_DIR", tempfile.mkdtemp(prefix="agentserver-test-"))
# As for the test daphne (tests/conftest.py): a cold language server on a loaded machine may need longer.
os.environ.setdefault("AGENTSERVER_LSP_DIAGNOSTICS_WAIT_SECONDS", "60")

from agentserver.settings import *  # noqa: E402,F401,F403
from agentserver.settings import DATA_DIR, DATABASES  # noqa: E402

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}

if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
    # The test process runs services in many short-lived threads (sync_to_async, tool waits); a small pool
    # runs dry there, and no request cycle returns connections to it. Plain per-thread connections instead.
    DATABASES["default"]["OPTIONS"] = {}
