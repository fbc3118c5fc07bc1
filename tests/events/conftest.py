import pytest


@pytest.fixture(scope="module")
def fast_server(server_factory):
    """A second server on the same test database: 0.5 s heartbeats (and token checks), two streams per user."""
    return server_factory({"AGENTSERVER_SSE_HEARTBEAT_SECONDS": "0.5", "AGENTSERVER_SSE_MAX_STREAMS_PER_USER": "2"})
