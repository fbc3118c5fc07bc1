"""Django's SQLite backend, with the writers of one process taking turns on a lock instead of on SQLite's
busy handler.

SQLite lets one connection write at a time. A second writer is told "busy", and SQLite's busy handler sleeps
1 ms, then 2, 5, 10 ms... before it asks again, however short the first writer's transaction is. In one
server process several threads write side by side (a request, the event outbox logging the events the last
request published, an agent runner saving parts), so a write that takes 50 µs cost the others a millisecond
or more: a POST /session waited on the outbox's log write of the previous one in a third of the requests.
Here a write first takes the process's one writer lock, which hands over the moment the previous writer
commits.

The lock queues writers in front of SQLite's own lock; it does not replace it. A writer waits for it at most
the connection's busy timeout and then goes on to SQLite regardless, which answers as it always did (a
write, or "database is locked"): a thread that holds a transaction while it waits for another thread's
write behaves as it would without the lock instead of deadlocking. Other processes (manage.py) still meet
SQLite's busy handler. Reads never take the lock (WAL readers do not block the writer).

A request that finds the lock taken gives its turn to run Python up (agentserver.workers.loop.let_others_run) before
it waits: during an agent batch the runners' writes hold the lock most of the time, and a sync prompt that
waited for it holding the HTTP handler's one turn kept every other request (GET /global/health too) queued
behind it."""
from __future__ import annotations

import threading
from functools import lru_cache

from django.db.backends.sqlite3 import base

from agentserver.workers.loop import let_others_run

_writer = threading.Lock()
_WRITE_VERBS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"})


def _take_turn(timeout: float) -> bool:
    if _writer.acquire(blocking=False):
        return True
    let_others_run()
    return _writer.acquire(timeout=timeout)


def _writes(query: str) -> bool:
    head = query.lstrip()[:8].split(None, 1)
    return bool(head) and head[0].upper() in _WRITE_VERBS


@lru_cache(maxsize=2048)
def _qmark_style(query: str) -> str:
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class _WriterCursor(base.SQLiteCursorWrapper):
    """A statement that writes outside a transaction (autocommit) is its own transaction: it takes its
    turn for the statement. Inside a transaction the connection took the turn at BEGIN."""

    timeout: float = 5.0

    def convert_query(self, query, *, param_names=None):
        # The same few hundred statements run again and again (agentserver.db.sql compiles them once): their
        # conversion to SQLite's "?" style, a regular expression over the whole text, is remembered too.
        if param_names is None:
            return _qmark_style(query)
        return super().convert_query(query, param_names=param_names)

    def execute(self, query, params=None):
        return self._in_turn(query, super().execute, params)

    def executemany(self, query, param_list):
        return self._in_turn(query, super().executemany, param_list)

    def _in_turn(self, query, run, params):
        if self.connection.in_transaction or not _writes(query):
            return run(query, params)
        turn = _take_turn(self.timeout)
        try:
            return run(query, params)
        finally:
            if turn:
                _writer.release()


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._holds_writer = False
        timeout = self.settings_dict.get("OPTIONS", {}).get("timeout", 5.0)
        self._cursor_class = type("WriterCursor", (_WriterCursor,), {"timeout": float(timeout)})

    def create_cursor(self, name=None):
        return self.connection.cursor(factory=self._cursor_class)

    def _start_transaction_under_autocommit(self):
        # atomic() on SQLite begins explicitly (BEGIN IMMEDIATE here): the turn lasts until commit/rollback.
        if not self._holds_writer:
            self._holds_writer = _take_turn(self._cursor_class.timeout)
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._end_turn()
            raise

    def _in_transaction(self) -> bool:
        return self.connection is not None and self.connection.in_transaction

    def _end_turn(self, *, closing: bool = False):
        if self._holds_writer and (closing or not self._in_transaction()):
            self._holds_writer = False
            _writer.release()

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._end_turn()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._end_turn()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._end_turn(closing=True)
