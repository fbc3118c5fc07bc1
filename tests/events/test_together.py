"""events.together(): the events a service publishes at once are logged as one batch when its block ends.
In-process, with the real outbox and event log."""
import pytest
from django.db import connection

from agentserver.events import publisher as events
from agentserver.models import EventLog

pytestmark = pytest.mark.django_db(transaction=True)
OWNER = 747474


class LogInserts:
    def __init__(self):
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("INSERT") and EventLog._meta.db_table in sql:
            self.count += 1
        return execute(sql, params, many, context)


def logged() -> list[int]:
    return list(EventLog.objects.filter(owner_id=OWNER).order_by("id").values_list("properties__seq", flat=True))


def test_events_published_together_are_logged_with_one_statement_in_publish_order():
    assert events.flush(10)
    inserts = LogInserts()
    with connection.execute_wrapper(inserts):
        with events.together():
            for seq in range(3):
                events.publish("test.together", {"seq": seq}, owner_id=OWNER, directory="/d")
    assert events.flush(10)
    assert logged() == [0, 1, 2]
    assert inserts.count == 1


def test_nothing_is_logged_before_the_outermost_block_ends():
    assert events.flush(10)
    with events.together():
        with events.together():
            events.publish("test.together", {"seq": 0}, owner_id=OWNER, directory="/d")
        assert logged() == []
        events.publish("test.together", {"seq": 1}, owner_id=OWNER, directory="/d")
    assert events.flush(10)
    assert logged() == [0, 1]


def test_events_published_before_an_error_in_the_block_are_still_logged():
    assert events.flush(10)
    with pytest.raises(RuntimeError):
        with events.together():
            events.publish("test.together", {"seq": 0}, owner_id=OWNER, directory="/d")
            raise RuntimeError("the service failed after its commit")
    assert events.flush(10)
    assert logged() == [0]


def test_a_flush_inside_the_block_logs_what_is_queued_and_does_not_wait_for_the_end():
    with events.together():
        events.publish("test.together", {"seq": 0}, owner_id=OWNER, directory="/d")
        assert events.flush(10)
        assert logged() == [0]
