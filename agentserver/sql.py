"""Rows written without the ORM's per-call compile, for the hot writes (a new session, the event log).

Model.save and bulk_create compile their INSERT anew on every call, which on these paths cost more than
running it. `insert` writes the same statement out: each field still prepares its own value (JSON, defaults
applied by pre_save) for the connection's backend; save signals are not sent (nothing listens on these
models)."""
from __future__ import annotations

from django.db import connection

_ROWS_PER_STATEMENT = 500  # well under SQLite's limit on bound parameters


def insert(model, instances: list, *, generated_pk: bool = False) -> None:
    """INSERT `instances` of `model`; with `generated_pk` the database numbers them (an AutoField) and each
    instance gets its pk back (RETURNING, on SQLite and PostgreSQL alike)."""
    fields = [field for field in model._meta.concrete_fields if not (generated_pk and field.primary_key)]
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) VALUES "
    one_row = f"({', '.join(['%s'] * len(fields))})"
    tail = f" RETURNING {quote(model._meta.pk.column)}" if generated_pk else ""
    for start in range(0, len(instances), _ROWS_PER_STATEMENT):
        chunk = instances[start:start + _ROWS_PER_STATEMENT]
        params = [field.get_db_prep_save(field.pre_save(instance, True), connection)
                  for instance in chunk for field in fields]
        with connection.cursor() as cursor:
            cursor.execute(head + ", ".join([one_row] * len(chunk)) + tail, params)
            if generated_pk:
                for instance, (pk,) in zip(chunk, cursor.fetchall()):
                    instance.pk = pk
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias
