"""The audit log's costs: what writing a record adds (records per second, CPU per record, one writer and
several at once), how long `verify` takes, and how long the audit list's queries take over a large log.

    .venv/bin/python bench/audit.py                                   # SQLite in a throw-away data dir
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/audit_bench SECRET_KEY=x \\
        .venv/bin/python bench/audit.py --records 10000000            # PostgreSQL: a database of its own

    DATABASE_URL=… .venv/bin/python bench/audit.py --queries-only --records 10000000  # the queries alone
    DATABASE_URL=… .venv/bin/python bench/audit.py --reuse      # again over those records (after a migration)

The database is migrated and emptied first: never point it at a server's database. The large log is made
quickly (the chain computed here, the rows copied in; with --queries-only, by PostgreSQL itself, with
placeholder hashes that `verify` would refuse), then the queries `GET /api/audit` runs are timed (best of
three), with the filters a staff member uses."""
from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
TOOL_INPUT = {"command": "pytest -q tests/test_models.py -k 'not slow' --maxfail=1", "description": "run the tests",
              "timeout": 120000}


class _Staff:
    """The bench reads as staff (the selector refuses anyone else)."""
    is_staff = True


STAFF = _Staff()


def set_up(*, keep_records: bool = False) -> None:
    if not os.environ.get("DATABASE_URL"):
        os.environ["AGENTSERVER_DATA_DIR"] = tempfile.mkdtemp(prefix="audit-bench-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
    # This script's directory holds bench/pty.py, which would shadow the standard library's pty.
    sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if not keep_records:
        empty()


def empty() -> None:
    from django.db import connection, transaction

    from audit_app.models import AuditRecord, ChainHead

    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"TRUNCATE {AuditRecord._meta.db_table}, {ChainHead._meta.db_table}")
        else:
            cursor.execute(f"DELETE FROM {AuditRecord._meta.db_table}")
            cursor.execute(f"DELETE FROM {ChainHead._meta.db_table}")


def tool_call_record(number: int) -> dict:
    from audit_app.actors import Actor

    return {"action": "tool.call", "actor": Actor.agent(session_id="ses_bench", person_id=1),
            "object_type": "tool", "object_id": "bash", "session_id": "ses_bench",
            "details": {"tool": "bash", "callID": f"call_{number}", "messageID": "msg_bench", "input": TOOL_INPUT,
                        "files": []}}


def write_cost(count: int) -> dict:
    """One writer: each record in a transaction of its own, as a settled tool call's."""
    from django.db import transaction

    from audit_app.log import record

    entries = [tool_call_record(n) for n in range(count)]
    wall, cpu = time.perf_counter(), time.process_time()
    for entry in entries:
        with transaction.atomic():
            record(**entry)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # The same transactions without the record: what the audit adds is the difference.
    from django.db import connection

    base_wall, base_cpu = time.perf_counter(), time.process_time()
    for _ in entries:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    base_wall, base_cpu = time.perf_counter() - base_wall, time.process_time() - base_cpu
    return {"records/s": count / wall, "CPU ms/record": 1000 * (cpu - base_cpu) / count,
            "wall ms/record": 1000 * (wall - base_wall) / count}


def concurrent_writers(threads: int, per_thread: int) -> float:
    from django.db import connection, transaction

    from audit_app.log import record

    def work() -> None:
        for n in range(per_thread):
            with transaction.atomic():
                record(**tool_call_record(n))
        connection.close()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return threads * per_thread / (time.perf_counter() - start)


ACTIONS = ["tool.call"] * 60 + ["permission.asked", "permission.replied", "question.asked", "question.replied",
                                "session.shell", "pty.opened", "pty.closed", "token.first_use", "auth.signin",
                                "auth.signin_failed", "admin.change", "session.shared", "token.created"]


def fill(total: int) -> None:
    """`total` records a year long: 1,000 people, 200,000 sessions, the chain computed as record() does."""
    from django.db import connection, transaction
    from django.utils import timezone

    from audit_app import chain
    from audit_app.models import AuditRecord

    empty()
    postgres = connection.vendor == "postgresql"
    words_index = None
    if postgres:  # as a restore would: the words index (migration 0005) is built once, after the rows are in
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'audit_words'")
            words_index = cursor.fetchone()
            if words_index:
                cursor.execute("DROP INDEX audit_words")
    rng = random.Random(7)
    start = timezone.now() - datetime.timedelta(days=365)
    step = datetime.timedelta(days=365) / total
    prev = chain.GENESIS
    columns = ["id", "time", *chain.FIELDS, "prev_hash", "hash"]
    batch: list = []

    def flush() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            if postgres:
                with cursor.cursor.copy(f"COPY {AuditRecord._meta.db_table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for row in batch:
                        copy.write_row(row)
            else:
                cursor.executemany(f"INSERT INTO {AuditRecord._meta.db_table} ({', '.join(columns)}) VALUES "
                                   f"({', '.join(['%s'] * len(columns))})", batch)
        batch.clear()

    for number in range(1, total + 1):
        moment = start + step * number
        person = rng.randrange(1, 1001)
        action = rng.choice(ACTIONS)
        session = f"ses_{rng.randrange(200_000):08d}"
        values = {"actor_person": person, "actor_name": f"user{person}", "actor_token": None,
                  "actor_address": f"10.0.{person % 256}.{person // 256}", "actor_user_agent": "",
                  "actor_session": session if action == "tool.call" else "", "action": action,
                  "object_type": "tool" if action == "tool.call" else action.split(".")[0],
                  "object_id": "bash" if action == "tool.call" else f"{rng.randrange(100_000)}",
                  "outcome": "failure" if rng.random() < 0.03 else "success", "session": session,
                  "details": orjson.dumps({"tool": "bash", "callID": f"call_{number}", "input": {
                      "command": f"make test-{number % 977}"}}, option=orjson.OPT_SORT_KEYS).decode()}
        digest = chain.content_hash(prev, moment, values)
        batch.append([number, moment if postgres else connection.ops.adapt_datetimefield_value(moment),
                      *(values[f] for f in chain.FIELDS), prev, digest])
        prev = digest
        if len(batch) >= 20_000:
            flush()
    if batch:
        flush()
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO audit_app_chainhead (id, seq, hash) VALUES (1, %s, %s)", [total, prev])
        if postgres:
            if words_index:
                cursor.execute(words_index[0])
            cursor.execute(f"ANALYZE {AuditRecord._meta.db_table}")


def fill_in_sql(total: int) -> None:
    """PostgreSQL only: `total` records like fill()'s, made by the database itself (generate_series) in minutes
    rather than the Python chain's tens of minutes. The hashes are placeholders, so `verify` refuses this log:
    it is for timing the queries, which read no hash. The indexes are built once, after the rows are in."""
    from django.db import connection

    from audit_app.models import AuditRecord

    empty()
    table = AuditRecord._meta.db_table
    actions = "ARRAY[" + ", ".join(f"'{action}'" for action in ACTIONS) + "]"
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT LIKE "
                       "'%%pkey'", [table])
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute(f"""
            INSERT INTO {table} (id, time, actor_person, actor_name, actor_token, actor_address, actor_user_agent,
                                 actor_session, action, object_type, object_id, outcome, session, details,
                                 prev_hash, hash)
            SELECT n, now() - interval '365 days' + (interval '365 days' / %s) * n, person, 'user' || person, NULL,
                   '10.0.' || (person %% 256) || '.' || (person / 256), '',
                   CASE WHEN action = 'tool.call' THEN session ELSE '' END, action,
                   CASE WHEN action = 'tool.call' THEN 'tool' ELSE split_part(action, '.', 1) END,
                   CASE WHEN action = 'tool.call' THEN 'bash' ELSE floor(random() * 100000)::int::text END,
                   CASE WHEN random() < 0.03 THEN 'failure' ELSE 'success' END, session,
                   '{{"callID":"call_' || n || '","input":{{"command":"make test-' || (n %% 977)
                       || '"}},"tool":"bash"}}',
                   md5((n - 1)::text) || md5((n - 1)::text), md5(n::text) || md5(n::text)
            FROM (SELECT n, 1 + floor(random() * 1000)::int AS person,
                         'ses_' || lpad(floor(random() * 200000)::int::text, 8, '0') AS session,
                         ({actions})[1 + floor(random() * {len(ACTIONS)})::int] AS action
                  FROM generate_series(1, %s) AS n) AS generated""", [total, total])
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute("INSERT INTO audit_app_chainhead (id, seq, hash) VALUES (1, %s, md5(%s::text) || md5(%s::text))",
                       [total, total, total])
        cursor.execute(f"ANALYZE {table}")


# Free text alone: words in most records, in about one in a thousand, in one, in none; a word in no record.
FREE_TEXT = {"most records": "make test", "1 in 1,000 records": "test-976", "one record": 'call_4242424"',
             "no record": "test-977", "no such word": "kubernetes"}


def queries() -> list[tuple[str, float]]:
    from audit_app import selectors

    now = datetime.datetime.now(datetime.timezone.utc)
    cases = {
        "newest page (no filter)": selectors.AuditFilters(),
        "person": selectors.AuditFilters(person="417"),
        "person by username": selectors.AuditFilters(person="user417"),
        "action (rare)": selectors.AuditFilters(action="auth.signin_failed"),
        "action prefix": selectors.AuditFilters(action="permission."),
        "object type:id": selectors.AuditFilters(object="pty:4242"),
        "session": selectors.AuditFilters(session="ses_00012345"),
        "outcome failure": selectors.AuditFilters(outcome="failure"),
        "a week, 90 days ago": selectors.AuditFilters(since=now - datetime.timedelta(days=97),
                                                       until=now - datetime.timedelta(days=90)),
        "person + action + month": selectors.AuditFilters(person="417", action="tool.call",
                                                          since=now - datetime.timedelta(days=200),
                                                          until=now - datetime.timedelta(days=170)),
        "free text + person": selectors.AuditFilters(person="417", q="test-42"),
        **{f"free text alone, {name}": selectors.AuditFilters(q=q) for name, q in FREE_TEXT.items()},
    }
    timings = []
    for name, filters in cases.items():
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            selectors.audit_page(viewer=STAFF, filters=filters, limit=100)
            samples.append(time.perf_counter() - start)
        timings.append((name, min(samples)))
    from audit_app.models import AuditRecord

    deep = AuditRecord.objects.order_by("id").values_list("id", flat=True)[AuditRecord.objects.count() // 2]
    start = time.perf_counter()
    selectors.audit_page(viewer=STAFF, filters=selectors.AuditFilters(), before_id=deep, limit=100)
    timings.append(("a page deep in the cursor", time.perf_counter() - start))
    return timings + admin_searches()


def admin_searches() -> list[tuple[str, float]]:
    """The admin's list searched from its search box: the statements of its changelist (the search, the
    count up to its cap, the first page of 100), best of three."""
    from django.contrib import admin

    from audit_app.admin import AuditRecordAdmin, CappedPaginator
    from audit_app.models import AuditRecord

    model_admin = AuditRecordAdmin(AuditRecord, admin.site)
    timings = []
    for name, q in FREE_TEXT.items():
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            rows, _ = model_admin.get_search_results(None, AuditRecord.objects.order_by("-id"), q)
            paginator = CappedPaginator(rows, model_admin.list_per_page)
            list(paginator.page(1).object_list)
            samples.append(time.perf_counter() - start)
        timings.append((f"admin search box, {name}", min(samples)))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=5000, help="records written one by one (default 5000)")
    parser.add_argument("--threads", type=int, default=8, help="concurrent writers (default 8)")
    parser.add_argument("--verify", type=int, default=100_000, help="records whose chain is verified")
    parser.add_argument("--records", type=int, default=1_000_000, help="records the queries run over")
    parser.add_argument("--queries-only", action="store_true",
                        help="PostgreSQL: skip the writes and verify; make the records in SQL (no valid chain)")
    parser.add_argument("--reuse", action="store_true",
                        help="time the queries over the records a --queries-only run left (after a migration)")
    args = parser.parse_args()
    set_up(keep_records=args.reuse)
    from django.db import connection

    from audit_app.verify import verify

    print(f"database: {connection.vendor}")
    if args.reuse:
        report(queries())
        return
    if args.queries_only:
        start = time.perf_counter()
        fill_in_sql(args.records)
        print(f"made {args.records} records in SQL (placeholder hashes) in {time.perf_counter() - start:.0f} s")
        report(queries())
        return  # the records stay, for --reuse or EXPLAIN; the next run empties the database first
    cost = write_cost(args.writes)
    print(f"one writer, {args.writes} records: {cost['records/s']:.0f} records/s; the record adds "
          f"{cost['CPU ms/record']:.3f} ms CPU and {cost['wall ms/record']:.3f} ms wall per record")
    if connection.vendor == "postgresql":
        rate = concurrent_writers(args.threads, max(1, args.writes // args.threads))
        print(f"{args.threads} writers at once: {rate:.0f} records/s")
    fill(args.verify)
    start = time.perf_counter()
    verdict = verify()
    print(f"verify over {args.verify} records: {time.perf_counter() - start:.1f} s ({verdict})")
    start = time.perf_counter()
    fill(args.records)
    print(f"made {args.records} records in {time.perf_counter() - start:.0f} s")
    report(queries())
    empty()


def report(timings: list[tuple[str, float]]) -> None:
    print(f"{'query (first page of 100)':40} {'seconds':>8}")
    for name, seconds in timings:
        print(f"{name:40} {seconds:8.3f}")


if __name__ == "__main__":
    main()
