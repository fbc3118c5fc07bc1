"""Counts what a server does per prompt, to compare two checkouts (bench/trace/compare.py): every SQL statement
it runs on SQLite, by its text with the values taken out, and every hand-off of the runtime's work to a thread
(agentserver.workers.loop.run_on), by the function handed off. Not part of the server: Python loads this file
at start-up only when its directory is on PYTHONPATH (an absolute path: each checkout's server starts in its own).

    SQLTRACE=/tmp/trace PYTHONPATH=$PWD/bench/trace AGENT_BEFORE=/work/wt-before ROUNDS=2 AGENT_SESSIONS=1 \\
        bash bench/perf.sh agent-compare
    .venv/bin/python bench/trace/compare.py /tmp/trace.*

Each process writes /tmp/trace.<pid> (a JSON object: statement or "hop <function>" → count) twice a second
and at exit. SQLSTACK="text|other text" also counts, for the statements containing either text, the chain of
this code's callers that ran them ("STACK text @ caller < caller..."), SQLDEPTH of them (7)."""
import collections
import json
import os
import re
import sys
import threading
import time

_OUT = os.environ.get("SQLTRACE")

if _OUT:
    counts: collections.Counter = collections.Counter()
    lock = threading.Lock()
    stacked = [text for text in os.environ.get("SQLSTACK", "").split("|") if text]
    depth = int(os.environ.get("SQLDEPTH", "7"))

    def _shape(statement: str) -> str:
        statement = re.sub(r"'[^']*'", "?", statement)
        statement = re.sub(r"\b\d+(\.\d+)?\b", "N", statement)
        statement = re.sub(r"(%s, )+%s", "%s...", statement)
        return re.sub(r"(\?, )+\?", "?...", statement)[:400]

    def _callers() -> str:
        frame, found = sys._getframe(3), []
        while frame is not None and len(found) < depth:
            path = frame.f_code.co_filename
            if "site-packages" not in path and "/bench/trace/" not in path and path.startswith(os.getcwd()):
                found.append(f"{os.path.relpath(path)}:{frame.f_code.co_name}")
            frame = frame.f_back
        return " < ".join(found)

    def _count(statement: str) -> None:
        shape = _shape(statement)
        with lock:
            counts[shape] += 1
            for text in stacked:
                if text in shape:
                    counts[f"STACK {text} @ {_callers()}"] += 1

    from django.db.backends.sqlite3 import base as _sqlite

    _execute, _executemany = _sqlite.SQLiteCursorWrapper.execute, _sqlite.SQLiteCursorWrapper.executemany

    def execute(self, query, params=None):
        _count(query)
        return _execute(self, query, params)

    def executemany(self, query, param_list):
        _count(query)
        return _executemany(self, query, param_list)

    _sqlite.SQLiteCursorWrapper.execute, _sqlite.SQLiteCursorWrapper.executemany = execute, executemany

    def _hand_offs() -> None:
        """Wraps run_on once the server has imported it (every hand-off goes through it; agentserver.loop in
        checkouts before the plumbing's sub-packages)."""
        while not hasattr(loop := sys.modules.get("agentserver.workers.loop") or sys.modules.get("agentserver.loop"),
                          "run_on"):
            time.sleep(0.05)
        run_on = loop.run_on

        async def counted(executor, fn, *args, **kwargs):
            real = args[0] if getattr(fn, "__name__", "") == "_release_after" and args else fn
            name = (getattr(real, "__qualname__", None)
                    or getattr(getattr(real, "func", None), "__qualname__", repr(real)))
            with lock:
                counts[f"hop {getattr(real, '__module__', '?')}.{name}"] += 1
            return await run_on(executor, fn, *args, **kwargs)

        loop.run_on = counted

    def _dump() -> None:
        with lock:
            data = dict(counts)
        with open(f"{_OUT}.{os.getpid()}", "w") as out:
            json.dump(data, out)

    def _dump_often() -> None:
        while True:
            time.sleep(0.5)
            _dump()

    import atexit

    atexit.register(_dump)
    threading.Thread(target=_hand_offs, daemon=True).start()
    threading.Thread(target=_dump_often, daemon=True).start()
