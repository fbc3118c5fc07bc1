"""Usage accounting benchmark: makes N usage records (default 5 million on PostgreSQL, 200,000 on SQLite)
for a year of a 500-person team (and their day sums), then times the queries GET /api/usage makes (through
the same selector), before and after rolling up (removing the records of) everything older than 30 days,
the cost of counting one model call and of the budget check; `--dashboard-only` times the admin dashboard's
reads, `--per-call-only` the cost per call alone.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/usage_bench SECRET_KEY=x python bench/usage.py
    python bench/usage.py --rows 1000000 --keep      # reuse the rows of a previous run when there are N

It runs against the database the settings name (migrated first) and replaces its usage rows: point it at a
database of its own. Rows are made in the database (generate_series on PostgreSQL), not one by one. Prints
a table: each query's best of three runs in ms and the number of rows it answered.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The checkout, not bench/ (whose pty.py would stand in for the standard library's): Django loads pty_app.
sys.path[0] = str(ROOT)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
os.environ.setdefault("SECRET_KEY", "usage-bench")

import django

django.setup()

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection, transaction

from usage_app import budgets, dashboard, selectors, services
from usage_app.calls import ModelCall
from usage_app.models import Budget, UsageDay, UsageDayTotal, UsageRecord
from usage_app.periods import day_start
from usage_app.zone import usage_zone

PEOPLE = 500
SLOTS = 365 * 3  # each person starts a session every 8 hours, which uses one model
MODELS = [("anthropic", "claude-sonnet-4"), ("anthropic", "claude-haiku-4"), ("openai", "gpt-5"),
          ("openai", "gpt-5-mini"), ("openrouter", "qwen3-coder"), ("local", "llama")]


def people() -> list[int]:
    User = get_user_model()
    have = {u.username: u.id for u in User.objects.filter(username__startswith="usage-bench-")}
    missing = [User(username=f"usage-bench-{i:03d}") for i in range(PEOPLE) if f"usage-bench-{i:03d}" not in have]
    User.objects.bulk_create(missing)
    ids = sorted(User.objects.filter(username__startswith="usage-bench-").values_list("id", flat=True))
    group, _ = Group.objects.get_or_create(name="usage-bench-team")
    group.user_set.set(ids[:50])
    return ids


def make_rows(rows: int, person_ids: list[int]) -> float:
    start = time.monotonic()
    UsageRecord.objects.all().delete()
    UsageDay.objects.all().delete()
    UsageDayTotal.objects.all().delete()
    year_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=365)
    if connection.vendor == "postgresql":
        count = len(person_ids)
        models = "ARRAY[" + ",".join(f"'{p}'" for p, _ in MODELS) + "]", \
                 "ARRAY[" + ",".join(f"'{m}'" for _, m in MODELS) + "]"
        with connection.cursor() as cursor:
            cursor.execute(f"""
                INSERT INTO usage_app_usagerecord (call_id, at, day, person_id, person_key, session_id,
                    message_id, agent, purpose, provider_id, model_id, input_tokens, output_tokens,
                    reasoning_tokens, cache_read_tokens, cache_write_tokens, cost, priced, usage_reported,
                    credential, duration_ms, outcome, worker)
                SELECT 'cal_bench_' || g, at, (at AT TIME ZONE %s)::date, (%s::int[])[1 + p], (%s::int[])[1 + p],
                    'ses_bench_' || p || '_' || slot, 'msg_bench_' || g, 'build', 'step',
                    ({models[0]})[1 + (slot + p) %% {len(MODELS)}], ({models[1]})[1 + (slot + p) %% {len(MODELS)}],
                    2000 + g %% 5000, 100 + g %% 900, 0, g %% 20000, 0,
                    (2000 + g %% 5000) * 3e-6 + (100 + g %% 900) * 15e-6, g %% 50 <> 0, true, 'server',
                    500 + g %% 20000, CASE WHEN g %% 40 = 0 THEN 'error' ELSE 'completed' END, 'bench'
                FROM (SELECT g, (g * 7919) %% {count} AS p, (g * {SLOTS}) / %s AS slot,
                             %s::timestamptz + (g::float8 / %s) * interval '365 days' AS at
                      FROM generate_series(1::bigint, %s::bigint) AS g) AS s
            """, [str(usage_zone()), person_ids, person_ids, rows, year_ago, rows, rows])
        analyze()
    else:
        batch, zone = [], usage_zone()
        for g in range(1, rows + 1):
            p, slot = (g * 7919) % len(person_ids), g * SLOTS // rows
            person = person_ids[p]
            provider, model = MODELS[(slot + p) % len(MODELS)]
            at = year_ago + dt.timedelta(days=365 * g / rows)
            batch.append(UsageRecord(
                call_id=f"cal_bench_{g}", at=at, day=at.astimezone(zone).date(), person_id=person,
                person_key=person, session_id=f"ses_bench_{p}_{slot}",
                message_id=f"msg_bench_{g}", agent="build", purpose="step", provider_id=provider, model_id=model,
                input_tokens=2000 + g % 5000, output_tokens=100 + g % 900, cache_read_tokens=g % 20000,
                cost=(2000 + g % 5000) * 3e-6 + (100 + g % 900) * 15e-6, priced=g % 50 != 0,
                credential="server", duration_ms=500 + g % 20000, outcome="error" if g % 40 == 0 else "completed"))
            if len(batch) == 10_000:
                UsageRecord.objects.bulk_create(batch)
                batch = []
        UsageRecord.objects.bulk_create(batch)
    fill_day_sums()
    return time.monotonic() - start


def fill_day_sums() -> None:
    """The day totals of the records made in the database (not counted one by one): what the migration that
    made the table does."""
    migration = importlib.import_module("usage_app.migrations.0003_day_totals_and_calls_in_flight")
    UsageDayTotal.objects.all().delete()
    with connection.schema_editor() as editor:
        migration.fill_day_sums(apps, editor)


def analyze() -> None:
    with connection.cursor() as cursor:
        for table in ("usage_app_usagerecord", "usage_app_usageday", "usage_app_usagedaytotal"):
            cursor.execute(f"ANALYZE {table}")


def queries(person_id: int) -> list[tuple[str, object, selectors.UsageFilter, str | None]]:
    User = get_user_model()
    person = User.objects.get(id=person_id)
    staff = User(username="bench-staff", is_staff=True)
    now = dt.datetime.now(dt.UTC)
    month, year = now - dt.timedelta(days=30), now - dt.timedelta(days=365)
    F = selectors.UsageFilter
    return [
        ("own, 30 days, by day", person, F(since=month), "day"),
        ("own, year, by model", person, F(since=year), "model"),
        ("own, 30 days, by session", person, F(since=month), "session"),
        ("everyone, 30 days, by person", staff, F(since=month), "person"),
        ("everyone, 30 days, by model", staff, F(since=month), "model"),
        ("group of 50, 30 days, by person", staff, F(since=month, group="usage-bench-team"), "person"),
        ("one model, 30 days, by day", staff, F(since=month, provider_id="openai", model_id="gpt-5"), "day"),
        ("everyone, year, by model", staff, F(since=year), "model"),
        ("everyone, year, by day", staff, F(since=year), "day"),
    ]


def time_queries(person_id: int) -> list[tuple[str, float, int]]:
    results = []
    for name, viewer, wanted, group_by in queries(person_id):
        best, answered = float("inf"), 0
        for _ in range(3):
            start = time.monotonic()
            answered = len(selectors.usage_summary(viewer=viewer, wanted=wanted, group_by=group_by))
            best = min(best, time.monotonic() - start)
        results.append((name, best * 1000, answered))
    return results


def time_accounting(person_id: int, calls: int = 2000) -> float:
    """CPU ms to count one model call as the runtime does: its in-flight record in a transaction of its own as
    the request goes out, then the record ended and its day total added to, in the step's transaction."""
    start = time.process_time()
    for n in range(calls):
        call = ModelCall(call_id=f"cal_bench_acct_{time.time_ns()}_{n}", started_ms=int(time.time() * 1000),
                         person_id=person_id, session_id="ses_bench_acct", message_id="msg_bench_acct",
                         agent="build", purpose="step", provider_id="openai", model_id="gpt-5", input_tokens=1000,
                         output_tokens=100, reasoning_tokens=0, cache_read_tokens=0, cache_write_tokens=0,
                         cost=0.01, priced=True, usage_reported=True, credential="server", duration_ms=900,
                         outcome="completed")
        services.do_record_start(call=replace(call, input_tokens=0, output_tokens=0, cost=0.0,
                                              usage_reported=False, duration_ms=0, outcome="in_flight"))
        with transaction.atomic():
            services.do_record_call(call=call)
    return (time.process_time() - start) * 1000 / calls


def time_budget_check(person_id: int, calls: int = 500) -> float:
    """CPU ms of the check before a model call, with a budget for everyone, the person's group and the person."""
    Budget.objects.all().delete()
    Budget.objects.create(scope="everyone", period="month", amount=100000)
    Budget.objects.create(scope="group", group=Group.objects.get(name="usage-bench-team"), period="week",
                          amount=100000)
    Budget.objects.create(scope="person", person_id=person_id, period="day", amount=100000)
    start = time.process_time()
    for _ in range(calls):
        budgets.check_model_call(person_id=person_id, session_id="ses_bench_acct")
    elapsed = (time.process_time() - start) * 1000 / calls
    Budget.objects.all().delete()
    return elapsed


def time_dashboard(person_ids: list[int], runs: int = 2) -> list[tuple[str, float, int]]:
    """The admin dashboard's reads over the last 30 days (best of `runs`, ms): each read the page makes, then
    the whole page's data (dashboard.dashboard_data, what the view renders), for everyone and a group of 50,
    with a budget for everyone, the group and one person (so the budget list has people to rank)."""
    User = get_user_model()
    staff = User(username="bench-staff", is_staff=True)
    team = Group.objects.get(name="usage-bench-team")
    Budget.objects.all().delete()
    Budget.objects.create(scope="everyone", period="month", amount=100000)
    Budget.objects.create(scope="group", group=team, period="week", amount=100000)
    Budget.objects.create(scope="person", person_id=person_ids[0], period="day", amount=100000)
    today = dt.datetime.now(usage_zone()).date()
    first = today - dt.timedelta(days=dashboard.DEFAULT_DAYS - 1)
    results = []
    for whose, group in (("everyone", None), ("group of 50", team)):
        wanted = selectors.UsageFilter(since=day_start(first),
                                       until=day_start(today + dt.timedelta(days=1)),
                                       group=group.name if group else None)
        reads = [
            ("per day by person", lambda w=wanted: selectors.cost_per_day(viewer=staff, wanted=w, split="person")[1]),
            ("per day by model", lambda w=wanted: selectors.cost_per_day(viewer=staff, wanted=w, split="model")[1]),
            ("top 10 sessions", lambda w=wanted: selectors.usage_summary(viewer=staff, wanted=w, group_by="session",
                                                                         first=dashboard.TOP_SESSIONS)),
            ("nearest budgets", lambda w=wanted: budgets.nearest_budgets(viewer=staff, wanted=w)),
            ("whole page, by person", lambda g=group: dashboard.dashboard_data(
                viewer=staff, first=first, last=today, group=g, person=None, provider="", model="",
                split="person")["chart"]["series"]),
            ("whole page, by model", lambda g=group: dashboard.dashboard_data(
                viewer=staff, first=first, last=today, group=g, person=None, provider="", model="",
                split="model")["chart"]["series"]),
        ]
        for name, read in reads:
            best, answered = float("inf"), 0
            for _ in range(runs):
                start = time.monotonic()
                answered = len(read())
                best = min(best, time.monotonic() - start)
            results.append((f"dashboard, {whose}: {name}", best * 1000, answered))
    Budget.objects.all().delete()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="reuse the records and day rows already there")
    parser.add_argument("--no-rollup", action="store_true")
    parser.add_argument("--dashboard-only", action="store_true", help="time only the dashboard's reads")
    parser.add_argument("--per-call-only", action="store_true",
                        help="time only counting a call and the budget check (best of three)")
    options = parser.parse_args()
    rows = options.rows or (5_000_000 if connection.vendor == "postgresql" else 200_000)
    start = time.monotonic()
    call_command("migrate", verbosity=0)
    print(f"migrated in {time.monotonic() - start:.1f} s")
    person_ids = people()
    if not (options.keep and UsageRecord.objects.exists()):
        print(f"making {rows:,} records on {connection.vendor} ...", flush=True)
        print(f"  made in {make_rows(rows, person_ids):.1f} s", flush=True)
    elif not UsageDayTotal.objects.exists():  # records kept from a run that did not get to their day sums
        start = time.monotonic()
        fill_day_sums()
        print(f"day sums of the records filled in {time.monotonic() - start:.1f} s", flush=True)
    if options.per_call_only:
        counting = min(time_accounting(person_ids[0], calls=1000) for _ in range(3))
        check = min(time_budget_check(person_ids[0]) for _ in range(3))
        print(f"{connection.vendor}: counting one model call {counting:.3f} ms CPU, budget check {check:.3f} ms CPU, "
              f"together {counting + check:.3f} ms; load average {os.getloadavg()[0]:.1f}")
        return
    if options.dashboard_only:
        analyze()
        print(f"{UsageRecord.objects.count():,} records, {UsageDay.objects.count():,} day rows, "
              f"{UsageDayTotal.objects.count():,} day totals, load average {os.getloadavg()[0]:.1f}")
        for name, ms, answered in time_dashboard(person_ids):
            print(f"{name:48}{ms:10.1f} ms ({answered} rows)", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}")
        return
    print(f"counting one model call: {time_accounting(person_ids[0]):.3f} ms CPU (in flight, then ended with its "
          "day total)")
    print(f"budget check before a call: {time_budget_check(person_ids[0]):.3f} ms CPU (3 budgets apply)")
    analyze()  # the planner's statistics of the rows as they are (autovacuum may not have come by yet)
    print(f"{UsageRecord.objects.count():,} records, {UsageDay.objects.count():,} day rows, "
          f"{UsageDayTotal.objects.count():,} day totals, load average {os.getloadavg()[0]:.1f}")
    table = {"as they are": time_queries(person_ids[0])}
    if not options.no_rollup:
        start = time.monotonic()
        removed = services.do_rollup(older_than_days=30)
        analyze()
        print(f"rollup of days older than 30: {removed:,} records removed in {time.monotonic() - start:.1f} s")
        table["after rollup"] = time_queries(person_ids[0])
    columns = list(table)
    print(f"\n{'query':34}" + "".join(f"{c:>24}" for c in columns))
    for index, (name, _, _) in enumerate(table[columns[0]]):
        cells = "".join(f"{f'{table[c][index][1]:.1f} ms ({table[c][index][2]} rows)':>24}" for c in columns)
        print(f"{name:34}{cells}")


if __name__ == "__main__":
    main()
