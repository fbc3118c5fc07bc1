"""`manage.py usage report`: everyone's usage from the shell, as a table, CSV, JSON or JSON lines."""
import csv
import datetime as dt
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.usage.conftest import add_record

NOV_10 = dt.datetime(2026, 11, 10, 12, tzinfo=dt.timezone.utc)


def report(*args) -> str:
    out = io.StringIO()
    call_command("usage", "report", *args, stdout=out)
    return out.getvalue()


def test_the_report_sums_everyones_usage_by_person(alice, bob):
    add_record(alice, at=NOV_10, cost=1.0)
    add_record(bob, at=NOV_10, cost=2.5)
    table = report("--since", "2026-11-01", "--group-by", "person")
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["personID", "person", "calls"]
    assert "bob" in lines[1] and "2.500000" in lines[1] and "alice" in lines[2]
    rows = list(csv.DictReader(io.StringIO(report("--group-by", "person", "--format", "csv"))))
    assert [(r["person"], float(r["cost"])) for r in rows] == [("bob", 2.5), ("alice", 1.0)]
    lines = [json.loads(line) for line in report("--person", "alice", "--format", "jsonl").splitlines()]
    assert [line["calls"] for line in lines] == [1]
    assert json.loads(report("--format", "json", "--since", "2026-12-01")) == []


def test_the_report_refuses_bad_input(alice):
    with pytest.raises(CommandError):
        report("--since", "last week")
    with pytest.raises(CommandError):
        report("--person", "nobody")


def test_everyones_usage_is_read_only_by_the_named_shell_reader_never_by_a_missing_viewer(alice, bob):
    from usage_app import selectors

    add_record(alice, at=NOV_10, cost=1.0)
    add_record(bob, at=NOV_10, cost=2.5)
    rows = selectors.usage_summary(viewer=selectors.EVERYONE, wanted=selectors.UsageFilter(), group_by="person")
    assert sorted(row["person"] for row in rows) == ["alice", "bob"]
    with pytest.raises(TypeError):
        selectors.usage_summary(viewer=None, wanted=selectors.UsageFilter(), group_by="person")
    own = selectors.usage_summary(viewer=alice.user, wanted=selectors.UsageFilter(), group_by="person")
    assert [row["person"] for row in own] == ["alice"]
