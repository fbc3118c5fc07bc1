"""Statements run without the ORM's per-call compile, for the hot paths (a new session, the event log, the
agent loop's saves and reads).

The ORM compiles a statement anew on every call, which on these paths cost many times more than running it:
on a 2-core machine a Session fetched by id took about 1 ms to build and 0.07 ms to run, a Part's update
0.6 ms against 0.1 ms (its columns quoted, converters looked up, lookups resolved, every time).

- `insert` writes rows; `update` sets fields of the rows whose fields equal the given values; both spell
  their statement out once per shape.
- `Query` is a read the ORM compiles once per process and runs many times with new values; `Change` is
  the same for an UPDATE whose values or conditions are expressions (the database's clock, say). Each is
  declared by its queryset alone: the order its values bind in is derived from the compiled statement
  (agentserver.db.sql_compiled).

Each field still prepares its own value (JSON, defaults applied by pre_save) for the connection's backend;
save signals are not sent (nothing listens on these models). A value that a plain text, integer or boolean
field would pass through unchanged (a str for a CharField, an int for an IntegerField or a key to one) is
taken as it is: asking each field cost more than the INSERT itself."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db import connection, models

from agentserver.db.sql_compiled import Change, CompileError, Query

__all__ = ["ROWS_PER_STATEMENT", "Change", "CompileError", "Query", "insert", "update"]

ROWS_PER_STATEMENT = 500  # well under SQLite's limit on bound parameters


def insert(model, instances: list, *, generated_pk: bool = False, skip_conflicts: bool = False) -> None:
    """INSERT `instances` of `model`; with `generated_pk` the database numbers them (an AutoField) and each
    instance gets its pk back (RETURNING, on SQLite and PostgreSQL alike). `skip_conflicts`: a row that
    would break a unique constraint is left out (ON CONFLICT DO NOTHING); give one instance with
    `generated_pk`, and whether it got a pk says whether it was inserted."""
    fields, plain, head, one_row, tail = _statement(model, generated_pk, skip_conflicts)
    for start in range(0, len(instances), ROWS_PER_STATEMENT):
        chunk = instances[start:start + ROWS_PER_STATEMENT]
        params = [_prepared(instance, field, kind) for instance in chunk for field, kind in zip(fields, plain)]
        with connection.cursor() as cursor:
            cursor.execute(head + ", ".join([one_row] * len(chunk)) + tail, params)
            if generated_pk:
                for instance, (pk,) in zip(chunk, cursor.fetchall()):
                    instance.pk = pk
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias


_AS_IS = {
    models.CharField: str, models.TextField: str, models.BooleanField: bool,
    models.IntegerField: int, models.BigIntegerField: int, models.SmallIntegerField: int,
    models.PositiveIntegerField: int, models.PositiveBigIntegerField: int, models.PositiveSmallIntegerField: int,
    models.AutoField: int, models.BigAutoField: int, models.SmallAutoField: int,
}


@lru_cache(maxsize=None)
def _statement(model, generated_pk: bool, skip_conflicts: bool = False) -> tuple:
    """(fields, per field the Python type its value passes through unchanged or None, and the statement's
    head, row and tail) for one model; the backend is the process's one database."""
    fields = [field for field in model._meta.concrete_fields if not (generated_pk and field.primary_key)]
    plain = [_AS_IS.get(type(field.target_field if isinstance(field, models.ForeignKey) else field))
             for field in fields]
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) VALUES "
    one_row = f"({', '.join(['%s'] * len(fields))})"
    tail = (" ON CONFLICT DO NOTHING" if skip_conflicts else "") + (
        f" RETURNING {quote(model._meta.pk.column)}" if generated_pk else "")
    return fields, plain, head, one_row, tail


def _prepared(instance, field, kind):
    if kind is not None:
        value = getattr(instance, field.attname)
        if value is None or type(value) is kind:
            return value
    return field.get_db_prep_save(field.pre_save(instance, True), connection)


def update(model, where: dict[str, Any], values: dict[str, Any]) -> int:
    """UPDATE `model` SET `values` WHERE every field of `where` equals its value; how many rows it changed.
    Each value is prepared by its field for the backend, as QuerySet.update does (JSON encoded, say)."""
    statement, set_fields, where_fields = _update_statement(model, tuple(values), tuple(where))
    params = [field.get_db_prep_save(value, connection) for value, field in zip(values.values(), set_fields)]
    params += [_where_value(field, where[name]) for name, field in zip(where, where_fields)]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount


@lru_cache(maxsize=None)
def _update_statement(model, set_names: tuple[str, ...], where_names: tuple[str, ...]) -> tuple:
    meta, quote = model._meta, connection.ops.quote_name
    set_fields = [meta.get_field(name) for name in set_names]
    where_fields = [meta.get_field(name) for name in where_names]
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in set_fields)
    conditions = " AND ".join(f"{quote(field.column)} = %s" for field in where_fields)
    return f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {conditions}", set_fields, where_fields


def _where_value(field, value):
    if isinstance(field, models.ForeignKey):
        field = field.target_field
        value = getattr(value, "pk", value)
    kind = _AS_IS.get(type(field))
    if kind is not None and type(value) is kind:
        return value
    return field.get_db_prep_value(value, connection, prepared=False)

