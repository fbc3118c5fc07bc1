from tests.snapshots.conftest import (  # noqa: F401 — fixtures shared with the runner and snapshot tests
    _server_log_on_failure,
    edit_turn,
    llm,
    pytest_runtest_makereport,
    recorder,
    session_of,
)
