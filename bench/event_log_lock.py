"""What the event log's ordering lock costs on PostgreSQL (agentserver/events/publisher.py `_write_log`).

Every worker writes its events to one log table; ids come from a sequence, so two workers could commit id 11
before id 10, and a client replaying from 11 (Last-Event-ID) would never see 10. The server therefore takes a
transaction-level advisory lock around each log write, which serialises the deployment's writers. This
measures that: W writer processes each commit one-event transactions as the outbox does (synchronous_commit
off, one INSERT of a typical part update), with and without the lock, alternating, medians of R rounds.

    .venv/bin/python bench/event_log_lock.py                      # 127.0.0.1:5432, user postgres
    .venv/bin/python bench/event_log_lock.py --url postgresql://postgres@db:5432 --writers 1,4,8,16

A throw-away database (event_log_lock_bench) is created and dropped. Run it on an idle machine."""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time

import psycopg

DATABASE = "event_log_lock_bench"
LOCK = 42
PROPERTIES = '{"sessionID": "ses_bench", "part": {"id": "prt_bench", "type": "text", "text": "hello world"}}'


def _writer(url: str, lock: bool, events: int, start, results) -> None:
    with psycopg.connect(f"{url}/{DATABASE}", autocommit=False) as conn, conn.cursor() as cursor:
        start.wait()
        began = time.perf_counter()
        for _ in range(events):
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            if lock:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK])
            cursor.execute("INSERT INTO log (owner_id, type, properties) VALUES (%s, %s, %s)",
                           [1, "message.part.updated", PROPERTIES])
            conn.commit()
        results.put(time.perf_counter() - began)


def _rate(url: str, lock: bool, writers: int, events: int) -> float:
    """Events per second that `writers` processes commit together."""
    start, results = multiprocessing.Barrier(writers + 1), multiprocessing.Queue()
    processes = [multiprocessing.Process(target=_writer, args=(url, lock, events, start, results))
                 for _ in range(writers)]
    for process in processes:
        process.start()
    start.wait()
    began = time.perf_counter()
    for process in processes:
        process.join()
    return writers * events / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432", help="server, no database")
    parser.add_argument("--writers", default="1,4,8")
    parser.add_argument("--events", type=int, default=1500, help="per writer and run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with psycopg.connect(f"{args.url}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    try:
        with psycopg.connect(f"{args.url}/{DATABASE}", autocommit=True) as conn:
            conn.execute("CREATE TABLE log (id bigserial PRIMARY KEY, owner_id int, type text, properties jsonb)")
        print("| writers | without the lock (events/s) | with the lock (events/s) | with / without |")
        print("|---|---|---|---|")
        for writers in (int(w) for w in args.writers.split(",")):
            without, with_lock = [], []
            for _ in range(args.rounds):
                without.append(_rate(args.url, False, writers, args.events))
                with_lock.append(_rate(args.url, True, writers, args.events))
            a, b = statistics.median(without), statistics.median(with_lock)
            print(f"| {writers} | {a:,.0f} | {b:,.0f} | {b / a:.2f} |", flush=True)
    finally:
        with psycopg.connect(f"{args.url}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")


if __name__ == "__main__":
    main()
