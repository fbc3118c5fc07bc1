"""Statements the ORM compiles once per process and argument shape, then runs many times with new values
(agentserver.db.sql's `Query` and `Change`, for the hot paths).

A compiled statement is declared once, as the function that builds its queryset from the arguments. Its
bind order is derived, never written by hand: on the first call with a given shape of arguments the function
is called twice with distinctive sentinel arguments (two different sets, typed like the real ones: a marker
string for a str, an unusual in-range integer for an int, one marker per element of an IN list), the ORM
compiles both, and each parameter of the statement is traced back to where it came from:

- the sentinel itself: the argument binds there as it is;
- the sentinel as a field of the model prepares it (JSON encoded, an int as a CharField's text): the
  argument binds there prepared by that field (`Field.get_db_prep_value`), on every call;
- the same value in both compilations and no sentinel in it: a constant of the statement (a JSON key path,
  `DatabaseNow() + LEASE_MS`'s milliseconds), kept as compiled.

Anything else (a sentinel rewritten, as a LIKE pattern or a JSON path does; two arguments in one parameter;
an argument found nowhere) raises CompileError naming the query at its first compile, on whichever database
it runs. What changes the statement's text rather than its parameters is part of the shape: None (IS NULL),
a bool (the ORM writes `WHERE active` for True), an IN list's length, an empty IN list (the ORM reads
nothing and runs no statement: so does this), and an int the ORM writes into the text (LIMIT) is compiled
per value.

Django's public API does the compiling: `QuerySet.query.get_compiler(using).as_sql()` for reads, and for
an UPDATE the statement `QuerySet.update()` sends, captured by `connection.execute_wrapper` before it
runs. What remains private is listed in INTERNALS and checked by tests/foundation/test_sql_compiled.py,
so that a Django upgrade that changes it fails there, loudly: a read's result kind
(`QuerySet._iterable_class`), the compiler's selected columns (`SQLCompiler.select`) and their converters
(`SQLCompiler.get_converters`), as `QuerySet.iterator()` applies them."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from django.core.exceptions import EmptyResultSet, ValidationError
from django.db import connection, transaction
from django.db.models.query import (
    FlatValuesListIterable,
    ModelIterable,
    ValuesListIterable,
)

# The Django internals this module reads (see the docstring); tests/foundation/test_sql_compiled.py checks each.
INTERNALS = ("QuerySet._iterable_class", "SQLCompiler.select", "SQLCompiler.get_converters")
_MARK = "9f27c1"  # in every string sentinel: "@sqlarg-a0-9f27c1@"
_INT_BASES = {"a": 1_913_002_000, "b": 2_087_113_000}  # within every integer column's range but SmallInteger's
_FLOAT_BASES = {"a": 1_913_002.25, "b": 2_087_113.75}
# A datetime or date sentinel: far from any real row's, a day (or a second) apart per argument and compilation.
_MOMENT_BASES = {"a": dt.datetime(1913, 1, 2, tzinfo=dt.timezone.utc), "b": dt.datetime(1951, 3, 4, tzinfo=dt.timezone.utc)}
_VARIANTS = 64  # statements per query compiled by an inlined value (LIMIT n) before the ORM is used instead


class CompileError(RuntimeError):
    """A compiled statement whose parameters cannot be traced to its arguments unambiguously."""


def _shape(value) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is dict or kind is dt.date:
        return kind
    if kind is dt.datetime:
        return (kind, value.tzinfo is not None)
    if value is None or kind is bool:
        return value  # compiled as it is: IS NULL, a bare boolean column
    if kind is list or kind is tuple:
        return ("in", tuple(_shape(item) for item in value))
    raise TypeError(f"a compiled statement takes str, int, float, datetime, date, bool, None, dict (JSON) or a list of those, "
                    f"not {kind.__name__}")


def _sentinel(value, tag: str, index: int, item: int | None = None, *, lists_whole: bool = False):
    """A distinctive stand-in for `value` (the same type), or the value itself when it shapes the text. A
    list stands for an IN list (a sentinel per item), or with `lists_whole` for a JSON value."""
    kind = type(value)
    offset = index * 1000 + (0 if item is None else item + 1)
    if kind is str or kind is dict or (lists_whole and (kind is list or kind is tuple)):
        return f"@sqlarg-{tag}{index}{'' if item is None else f'.{item}'}-{_MARK}@"
    if kind is int:
        return _INT_BASES[tag] + offset
    if kind is float:
        return _FLOAT_BASES[tag] + offset
    if kind is dt.datetime:
        moment = _MOMENT_BASES[tag] + dt.timedelta(seconds=offset)
        return moment if value.tzinfo is not None else moment.replace(tzinfo=None)
    if kind is dt.date:
        return (_MOMENT_BASES[tag] + dt.timedelta(days=offset)).date()
    if kind is list or kind is tuple:
        return [_sentinel(element, tag, index, position) for position, element in enumerate(value)]
    return value


def _leaves(args: tuple, sentinels: tuple) -> dict[tuple, Any]:
    """(argument, item or None) → its sentinel, for every argument that a sentinel stands for."""
    out: dict[tuple, Any] = {}
    for index, (arg, sentinel) in enumerate(zip(args, sentinels)):
        if isinstance(sentinel, list):
            out.update({(index, item): value for item, value in enumerate(sentinel) if value is not arg[item]})
        elif sentinel is not arg:
            out[(index, None)] = sentinel
    return out


def _mentions(value, leaves: dict) -> bool:
    text = str(getattr(value, "obj", value))
    return any(str(sentinel) in text for sentinel in leaves.values())


def _same(compiled, expected) -> bool:
    """Two bound values alike (a JSON adapter compares by what it wraps)."""
    if type(compiled) is not type(expected):
        return False
    return compiled == expected or getattr(compiled, "obj", compiled) == getattr(expected, "obj", expected)


class _Bind:
    """Where one parameter comes from: an argument (or an IN list's item), as it is, prepared by a field, or
    wrapped in the driver's type (psycopg's Int4 for a Value(int)); or a constant."""
    __slots__ = ("arg", "constant", "item", "prepare")

    def __init__(self, arg=None, item=None, prepare=None, constant=None):
        self.arg, self.item, self.prepare, self.constant = arg, item, prepare, constant

    def value(self, args: tuple):
        if self.arg is None:
            return self.constant
        value = args[self.arg] if self.item is None else args[self.arg][self.item]
        if self.prepare is None:
            return value
        if isinstance(self.prepare, type):
            return self.prepare(value)
        return self.prepare.get_db_prep_value(value, connection, prepared=False)


def _binds(name: str, fields: list, params_a: list, params_b: list, leaves_a: dict, leaves_b: dict) -> list:
    """Each parameter traced to its argument, or CompileError."""
    if len(params_a) != len(params_b):
        raise CompileError(f"{name}: its statement binds {len(params_a)} or {len(params_b)} values as the "
                           f"arguments change")
    binds, used = [], set()
    for position, (a, b) in enumerate(zip(params_a, params_b)):
        found = [(source, field) for source, sentinel in leaves_a.items()
                 for field in [None, type(a), *fields] if _prepares(field, sentinel, a)]
        sources = {source for source, _ in found}
        if len(sources) > 1:
            raise CompileError(f"{name}: parameter {position} could come from arguments {sorted(sources)}")
        if found:
            source, field = found[0]
            if not _prepares(field, leaves_b[source], b):
                raise CompileError(f"{name}: parameter {position} follows argument {source[0]} in one "
                                   f"compilation only")
            binds.append(_Bind(arg=source[0], item=source[1], prepare=field))
            used.add(source)
        elif _same(a, b) and not _mentions(a, leaves_a):
            binds.append(_Bind(constant=a))
        else:
            raise CompileError(f"{name}: parameter {position} ({a!r}) is made from an argument in a way "
                               f"that cannot be bound (a LIKE pattern, a JSON path?): use the ORM for it")
    missing = sorted(set(leaves_a) - used)
    if missing:
        raise CompileError(f"{name}: argument(s) {[arg for arg, _ in missing]} are bound nowhere in the statement")
    return binds


def _prepares(field, sentinel, param) -> bool:
    """Whether `param` is `sentinel` as it is (field None), in a subclass of its type (field that type), or
    as `field` prepares it."""
    if field is None:
        return type(param) is type(sentinel) and param == sentinel
    if isinstance(field, type):
        return field is not type(sentinel) and isinstance(param, type(sentinel)) and param == sentinel
    try:
        return _same(param, field.get_db_prep_value(sentinel, connection, prepared=False))
    except (TypeError, ValueError, ArithmeticError, ValidationError):  # not a value this field takes (a date)
        return False


class _Compiled:
    """One statement for one shape of arguments: its text, where its parameters come from, how its rows
    are read."""

    def __init__(self, statement: str, binds: list, reader=None):
        self.statement, self.binds, self.reader = statement, binds, reader
        self.direct = [bind.arg for bind in binds] if all(
            bind.arg is not None and bind.item is None and bind.prepare is None for bind in binds) else None

    def params(self, args: tuple) -> list:
        if self.direct is not None:
            return [args[index] for index in self.direct]
        return [bind.value(args) for bind in self.binds]


class _Inlined:
    """A shape whose statement text holds some int arguments (LIMIT n): compiled per value of those."""

    def __init__(self, indexes: list[int]):
        self.indexes, self.variants = indexes, {}


_ORM = object()  # a shape the ORM runs itself (an empty IN list: no statement at all)


class _Statement:
    """What Query and Change share: per database and argument shape, the statement compiled once."""

    def __init__(self, build: Callable[..., Any], name: str | None):
        self._build = build
        code = getattr(build, "__code__", None)
        self._name = name or (f"{build.__module__}:{code.co_firstlineno}" if code else repr(build))
        self._compiled: dict = {}

    def _lookup(self, args: tuple):
        key = (connection.vendor, *map(_shape, args))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._first(args, ())
        if type(compiled) is _Inlined:
            values = tuple(args[index] for index in compiled.indexes)
            variant = compiled.variants.get(values)
            if variant is None:
                variant = self._first(args, compiled.indexes) if len(compiled.variants) < _VARIANTS else _ORM
                compiled.variants[values] = variant
            return variant
        return compiled

    def _first(self, args: tuple, as_they_are) -> Any:
        """The statement for this shape: lists as IN lists, else as JSON values (a list in an UPDATE's SET)."""
        try:
            return self._traced(args, as_they_are, lists_whole=False)
        except CompileError as as_in_lists:
            if not any(isinstance(arg, (list, tuple)) for arg in args):
                raise
            try:
                return self._traced(args, as_they_are, lists_whole=True)
            except CompileError:
                raise as_in_lists from None

    def _traced(self, args: tuple, as_they_are, *, lists_whole: bool) -> Any:
        if not lists_whole and any(isinstance(arg, (list, tuple)) and not arg for arg in args):
            return _ORM
        sentinels = {tag: tuple(arg if index in as_they_are else _sentinel(arg, tag, index, lists_whole=lists_whole)
                                for index, arg in enumerate(args)) for tag in ("a", "b")}
        try:
            (statement, params_a, extra), (statement_b, params_b, _) = (
                self._compile(sentinels["a"]), self._compile(sentinels["b"]))
        except EmptyResultSet as error:
            raise CompileError(f"{self._name}: its sentinel arguments compile to nothing (an int argument "
                               f"on a SmallIntegerField?)") from error
        leaves = {tag: _leaves(args, sentinels[tag]) for tag in ("a", "b")}
        if statement != statement_b:
            inlined = sorted({index for (index, item), value in leaves["a"].items()
                              if item is None and type(value) is int and str(value) in statement})
            if not inlined or as_they_are:
                raise CompileError(f"{self._name}: its statement's text changes with its arguments: {statement}")
            return _Inlined(inlined)
        fields = self._fields(extra)
        return self._done(statement, _binds(self._name, fields, list(params_a), list(params_b),
                                            leaves["a"], leaves["b"]), extra)

    def _compile(self, args: tuple) -> tuple:
        raise NotImplementedError

    def _fields(self, extra) -> list:
        raise NotImplementedError

    def _done(self, statement: str, binds: list, extra) -> _Compiled:
        raise NotImplementedError


class Query(_Statement):
    """A read: `build(*args)` gives a queryset of whole rows of one model, or a values_list()."""

    def __init__(self, build: Callable[..., Any], *, name: str | None = None):
        super().__init__(build, name)

    def all(self, *args) -> list:
        compiled = self._lookup(args)
        if compiled is _ORM:
            return list(self._build(*args))
        with connection.cursor() as cursor:
            cursor.execute(compiled.statement, compiled.params(args))
            rows = cursor.fetchall()
        return compiled.reader(rows)

    def first(self, *args):
        rows = self.all(*args)
        return rows[0] if rows else None

    def _compile(self, args: tuple) -> tuple:
        queryset = self._build(*args)
        compiler = queryset.query.get_compiler(using=queryset.db)
        statement, params = compiler.as_sql()
        return statement, params, (queryset, compiler)

    def _fields(self, extra) -> list:
        return list(extra[0].model._meta.concrete_fields)

    def _done(self, statement: str, binds: list, extra) -> _Compiled:
        return _Compiled(statement, binds, _Reader(self._name, *extra))


class _Reader:
    """Rows as the queryset would give them: converted by each column's converters, then model instances
    (Model.from_db), tuples or single values."""

    def __init__(self, name: str, queryset, compiler):
        kind = queryset._iterable_class
        columns = [column for column, _, _ in compiler.select]
        self.converters = list(compiler.get_converters(columns).items())
        self.kind = kind
        if kind is ModelIterable:
            model = queryset.model
            names = [column.target.attname for column in columns]
            if names != [field.attname for field in model._meta.concrete_fields]:
                raise CompileError(f"{name}: reads whole rows of one model only (no select_related, "
                                   f"annotations, only() or defer())")
            self.model, self.names = model, names
        elif kind not in (ValuesListIterable, FlatValuesListIterable):
            raise CompileError(f"{name}: reads whole rows or values_list()")

    def __call__(self, rows: list) -> list:
        if self.converters:
            rows = [self._converted(list(row)) for row in rows]
        if self.kind is ModelIterable:
            alias, model, names = connection.alias, self.model, self.names
            return [model.from_db(alias, names, row) for row in rows]
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


class _Captured(Exception):
    """Raised by the execute wrapper in place of running the statement it was handed."""


class Change(_Statement):
    """An UPDATE: `build(*args)` gives (queryset, {field: value or expression}), what QuerySet.update takes.
    Calling it runs the UPDATE and gives how many rows it changed."""

    def __init__(self, build: Callable[..., tuple[Any, dict]], *, name: str | None = None):
        super().__init__(build, name)

    def __call__(self, *args) -> int:
        compiled = self._lookup(args)
        if compiled is _ORM:
            queryset, values = self._build(*args)
            return queryset.update(**values)
        with connection.cursor() as cursor:
            cursor.execute(compiled.statement, compiled.params(args))
            return cursor.rowcount

    def _compile(self, args: tuple) -> tuple:
        queryset, values = self._build(*args)
        captured: list = []

        def capture(execute, sql, params, many, context):
            captured.append((sql, params))
            raise _Captured

        try:  # a savepoint of its own: nothing runs, and the caller's transaction is left as it was
            with transaction.atomic(using=queryset.db), connection.execute_wrapper(capture):
                queryset.update(**values)
        except _Captured:
            pass
        if len(captured) != 1:
            raise CompileError(f"{self._name}: its update runs {len(captured)} statements, not one")
        statement, params = captured[0]
        return statement, params, (queryset, values)

    def _fields(self, extra) -> list:
        queryset, values = extra
        meta = queryset.model._meta
        return [meta.get_field(name) for name in values] + list(meta.concrete_fields)

    def _done(self, statement: str, binds: list, extra) -> _Compiled:
        return _Compiled(statement, binds)
