"""Rows written without the ORM's per-call compile, for the hot writes (a new session, the event log).

Model.save and bulk_create compile their INSERT anew on every call, which on these paths cost more than
running it. `insert` writes the same statement out: each field still prepares its own value (JSON, defaults
applied by pre_save) for the connection's backend; save signals are not sent (nothing listens on these
models). A value that a plain text, integer or boolean field would pass through unchanged (a str for a
CharField, an int for an IntegerField or a key to one) is taken as it is: asking each field cost more than
the INSERT itself."""
from __future__ import annotations

from functools import lru_cache

from django.db import connection, models

ROWS_PER_STATEMENT = 500  # well under SQLite's limit on bound parameters


def insert(model, instances: list, *, generated_pk: bool = False) -> None:
    """INSERT `instances` of `model`; with `generated_pk` the database numbers them (an AutoField) and each
    instance gets its pk back (RETURNING, on SQLite and PostgreSQL alike)."""
    fields, plain, head, one_row, tail = _statement(model, generated_pk)
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
def _statement(model, generated_pk: bool) -> tuple:
    """(fields, per field the Python type its value passes through unchanged or None, and the statement's
    head, row and tail) for one model; the backend is the process's one database."""
    fields = [field for field in model._meta.concrete_fields if not (generated_pk and field.primary_key)]
    plain = [_AS_IS.get(type(field.target_field if isinstance(field, models.ForeignKey) else field))
             for field in fields]
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) VALUES "
    one_row = f"({', '.join(['%s'] * len(fields))})"
    tail = f" RETURNING {quote(model._meta.pk.column)}" if generated_pk else ""
    return fields, plain, head, one_row, tail


def _prepared(instance, field, kind):
    if kind is not None:
        value = getattr(instance, field.attname)
        if value is None or type(value) is kind:
            return value
    return field.get_db_prep_save(field.pre_save(instance, True), connection)
