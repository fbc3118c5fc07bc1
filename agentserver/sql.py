"""Statements run without the ORM's per-call compile, for the hot paths (a new session, the event log, the
agent loop's saves and reads).

The ORM compiles a statement anew on every call, which on these paths cost many times more than running it:
on a 2-core machine a Session fetched by id took about 1 ms to build and 0.07 ms to run, a Part's update
0.6 ms against 0.1 ms (its columns quoted, converters looked up, lookups resolved, every time).

- `insert` writes rows; `update` sets fields of the rows whose fields equal the given values; both spell
  their statement out once per shape.
- `Query` is a read the ORM compiles once per process and runs many times with new values; `Change` is
  the same for an UPDATE whose values or conditions are expressions (the database's clock, say).

Each field still prepares its own value (JSON, defaults applied by pre_save) for the connection's backend;
save signals are not sent (nothing listens on these models). A value that a plain text, integer or boolean
field would pass through unchanged (a str for a CharField, an int for an IntegerField or a key to one) is
taken as it is: asking each field cost more than the INSERT itself."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from django.db import connection, models
from django.db.models.query import FlatValuesListIterable, ModelIterable, ValuesListIterable
from django.db.models.sql.subqueries import UpdateQuery

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


AS_COMPILED = object()  # in a Query's bind: the value the ORM bound there, one that no argument changes


class Query:
    """A read the ORM compiles once per process and runs many times. `build(*args)` makes the queryset
    (whole rows of one model, or values_list); `bind(*args)` gives the values its statement takes, in the
    statement's order, AS_COMPILED where the ORM's own constant goes (a JSON key path, spelled differently
    on each backend). The first call compiles `build` with its own arguments and checks that the ORM bound
    exactly `bind`'s values, so a `bind` that disagrees with its queryset fails at once, in every test that
    runs it, on either database. A None argument goes to the ORM instead: there `x=None` means IS NULL,
    which the compiled `x = %s` would never match."""

    def __init__(self, build: Callable[..., Any], bind: Callable[..., Sequence]):
        self._build, self._bind = build, bind
        self._compiled: _Compiled | None = None

    def all(self, *args) -> list:
        if None in args:
            return list(self._build(*args))
        compiled = self._compiled
        if compiled is None or compiled.vendor != connection.vendor:
            compiled = self._compiled = _Compiled(self._build(*args), list(self._bind(*args)))
        return compiled.run(compiled.params(self._bind(*args)))

    def first(self, *args):
        rows = self.all(*args)
        return rows[0] if rows else None


class _Compiled:
    def __init__(self, queryset, bound: list):
        compiler = queryset.query.get_compiler(using=queryset.db)
        statement, params = compiler.as_sql()
        if len(params) != len(bound) or not all(b is AS_COMPILED or _same(a, b) for a, b in zip(params, bound)):
            raise RuntimeError(f"sql.Query binds {bound!r}, but its queryset binds {list(params)!r}: {statement}")
        self.vendor, self.statement = connection.vendor, statement
        self.constants = {i: value for i, (value, b) in enumerate(zip(params, bound)) if b is AS_COMPILED}
        self.converters = list(compiler.get_converters([expression for expression, _, _ in compiler.select]).items())
        self.kind = queryset._iterable_class
        if self.kind is ModelIterable:
            klass_info = compiler.klass_info
            if klass_info.get("related_klass_infos") or compiler.annotation_col_map:
                raise RuntimeError("sql.Query reads whole rows of one model only (no select_related, annotations)")
            self.model = klass_info["model"]
            self.start, self.end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
            self.names = [column.target.attname for column, _, _ in compiler.select[self.start:self.end]]
        elif self.kind not in (ValuesListIterable, FlatValuesListIterable):
            raise RuntimeError("sql.Query reads whole rows or values_list()")

    def params(self, bound) -> list:
        params = list(bound)
        for position, value in self.constants.items():
            params[position] = value
        return params

    def run(self, params: list) -> list:
        with connection.cursor() as cursor:
            cursor.execute(self.statement, params)
            rows = cursor.fetchall()
        if self.converters:
            rows = [self._converted(list(row)) for row in rows]
        if self.kind is ModelIterable:
            alias, start, end = connection.alias, self.start, self.end
            return [self.model.from_db(alias, self.names, row[start:end]) for row in rows]
        if self.kind is FlatValuesListIterable:
            return [row[0] for row in rows]
        return [tuple(row) for row in rows]

    def _converted(self, row: list) -> list:
        for position, (converters, expression) in self.converters:
            value = row[position]
            for converter in converters:
                value = converter(value, expression, connection)
            row[position] = value
        return row


def _same(compiled, bound) -> bool:
    """A bound value as the ORM would bind it (a JSON value's adapter compares by what it wraps)."""
    if compiled == bound:
        return True
    return type(compiled) is type(bound) and getattr(compiled, "obj", compiled) == getattr(bound, "obj", bound)


class Change:
    """An UPDATE the ORM compiles once per process: `build(*args)` gives (queryset, {field: value or
    expression}), `bind(*args)` the values the statement takes, the SET clause's first (JSON prepared with
    `prepared`), then the WHERE clause's. Checked against the ORM's on the first call, as Query is."""

    def __init__(self, build: Callable[..., tuple[Any, dict]], bind: Callable[..., Sequence]):
        self._build, self._bind = build, bind
        self._statement: tuple[str, str] | None = None  # (vendor, statement)

    def __call__(self, *args) -> int:
        """Rows changed."""
        bound = list(self._bind(*args))
        if self._statement is None or self._statement[0] != connection.vendor:
            queryset, values = self._build(*args)
            query = queryset.query.chain(UpdateQuery)
            query.add_update_values(values)
            compiler = query.get_compiler(using=queryset.db)
            compiler.pre_sql_setup()
            statement, params = compiler.as_sql()
            if len(params) != len(bound) or not all(_same(a, b) for a, b in zip(params, bound)):
                raise RuntimeError(f"sql.Change binds {bound!r}, but its update binds {list(params)!r}: {statement}")
            self._statement = (connection.vendor, statement)
        with connection.cursor() as cursor:
            cursor.execute(self._statement[1], bound)
            return cursor.rowcount


def prepared(model, name: str, value):
    """`value` as field `name` of `model` hands it to the database (JSON encoded, say)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)
