"""The Redis event channel is named by the deployment, not by how a host spells DATABASE_URL."""
import os

import pytest
from django.test import override_settings

from tests.events.sse_client import open_stream


@pytest.fixture
def differently_spelled_worker(server_factory):
    from django.db import connection

    settings_dict = connection.settings_dict
    # Same database, another spelling: `localhost` for 127.0.0.1, and the port left to its default.
    assert str(settings_dict.get("PORT") or 5432) == "5432"
    url = f"postgresql://{settings_dict['USER']}@localhost/{settings_dict['NAME']}"
    return server_factory({"REDIS_URL": os.environ["REDIS_URL"], "DATABASE_URL": url})


@pytest.mark.scaled
def test_two_hosts_spelling_the_database_differently_share_events(server, alice, differently_spelled_worker):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event", base_url=differently_spelled_worker.url) as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": repo})  # handled by the first worker
        frame = stream.next()
    assert frame.data["directory"] == repo
    assert frame.data["payload"]["type"] == "server.instance.disposed"


def test_the_identity_is_the_databases_own_unless_the_environment_names_one(db):
    from django.db import connection

    from agentserver.workers import deployment

    found = deployment.identity()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT system_identifier FROM pg_control_system()")
            assert found == f"postgresql:{cursor.fetchone()[0]}/{connection.settings_dict['NAME']}"
    else:
        assert found == f"sqlite:{os.path.realpath(connection.settings_dict['NAME'])}"
    channel = deployment.redis_channel("redis://127.0.0.1:6379/0")
    assert channel == deployment.redis_channel("redis://localhost:6379/0")  # the Redis host is not part of it
    assert channel != deployment.redis_channel("redis://127.0.0.1:6379/1")
    with override_settings(DEPLOYMENT="team-a"):
        assert deployment.identity() == "team-a"
        assert deployment.redis_channel("redis://127.0.0.1:6379/0") != channel
