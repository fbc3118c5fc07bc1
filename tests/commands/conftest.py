from tests.runner.conftest import (_server_log_on_failure, llm, pytest_runtest_makereport,  # noqa: F401
                                   recorder, session_of)
