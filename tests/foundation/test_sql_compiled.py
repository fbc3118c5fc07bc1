"""agentserver.db.sql's compiled statements (agentserver.db.sql_compiled), declared by their queryset alone: for
many argument values they read and write what the ORM does, on SQLite and on PostgreSQL alike, whatever the
parameter's kind (JSON, DatabaseNow() + N, IN lists, LIMIT, booleans, None); a declaration whose
parameters cannot be traced to its arguments fails at its first call, loudly."""
import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models.query import (
    FlatValuesListIterable,
    ModelIterable,
    ValuesListIterable,
)

from agentserver.clock import DatabaseNow
from agentserver.db import sql, sql_compiled
from sessions_app.models import Message, Session

pytestmark = pytest.mark.django_db
FIELDS = [field.attname for field in Session._meta.concrete_fields]


def _rows(result) -> list:
    """Model instances as every field's value; tuples and single values as they are."""
    return [tuple(getattr(row, name) for name in FIELDS) if isinstance(row, Session) else row for row in result]


@pytest.fixture
def people():
    users = get_user_model().objects
    return [users.create(username="ann"), users.create(username="ben", is_active=False),
            users.create(username="cat")]


@pytest.fixture
def sessions(people):
    ann, ben, _ = people
    rows = []
    for n, (owner, parent, summary, cost) in enumerate([
            (ann, None, {"files": 1}, 0.5), (ann, "ses_0", {"files": 2, "note": "é\"'"}, 1.25),
            (ben, "ses_0", None, 0.0), (ann, None, {"files": 1}, 3.0), (ben, "ses_1", [1, "two"], 1.25)]):
        rows.append(Session.objects.create(
            id=f"ses_{n}", owner=owner, project_id="global", directory="/tmp", title=f"title {n % 2}",
            version="0", parent_id=parent, summary=summary, cost=cost, time_updated=1000 * n,
            tokens={"input": n, "cache": {"read": n * 2}}))
        Message.objects.create(id=f"msg_{n}", session=rows[-1], role="user",
                               info={"id": f"msg_{n}", **({"_noReply": True} if n == 2 else {})})
    return rows


CASES = {
    "whole rows, an int and a str": (
        lambda owner_id, title: Session.objects.filter(owner_id=owner_id, title=title).order_by("id"),
        lambda ann, ben: [(ann, "title 0"), (ben, "title 0"), (ann, "title 1"), (ben, "title 1"), (ann, "none")]),
    "an IN list, of every length": (
        lambda ids: Session.objects.filter(id__in=ids).order_by("id").values_list("id", flat=True),
        lambda ann, ben: [(["ses_1"],), (["ses_0", "ses_3"],), ([],), (["ses_2", "ses_4"],), (("ses_9",),),
                          (["ses_0", "ses_1", "ses_2", "ses_3"],), ([],)]),
    "a LIMIT the argument sets": (
        lambda owner_id, n: Session.objects.filter(owner_id=owner_id).order_by("id").values_list("id", flat=True)[:n],
        lambda ann, ben: [(ann, 1), (ann, 2), (ben, 1), (ann, 3), (ann, 1), (ben, 5)]),
    "a boolean, which the ORM writes as a bare column": (
        lambda active: get_user_model().objects.filter(is_active=active).order_by("id").values_list("username",
                                                                                                    flat=True),
        lambda ann, ben: [(True,), (False,), (True,)]),
    "None, which the ORM writes IS NULL": (
        lambda owner_id, parent: Session.objects.filter(owner_id=owner_id, parent_id=parent).order_by("id")
        .values_list("id", flat=True),
        lambda ann, ben: [(ann, None), (ben, "ses_0"), (ann, "ses_0"), (ben, None), (ann, None)]),
    "a JSON value its field encodes": (
        lambda summary: Session.objects.filter(summary=summary).order_by("id").values_list("id", flat=True),
        lambda ann, ben: [({"files": 1},), ({"files": 2, "note": "é\"'"},), ({"files": 3},), ({"files": 1},)]),
    "DatabaseNow() + N": (
        lambda ms: Session.objects.filter(time_updated__lt=DatabaseNow() + ms).order_by("id")
        .values_list("id", flat=True),
        lambda ann, ben: [(0,), (-10 ** 13,), (10 ** 6,), (-10 ** 13 + 1,)]),
    "a float, and columns with converters": (
        lambda cost: Session.objects.filter(cost__gte=cost).order_by("id").values_list("id", "tokens", "summary"),
        lambda ann, ben: [(1.25,), (0.0,), (3.5,), (1.2,)]),
    "a constant JSON key path beside arguments": (
        lambda session_id, after: Message.objects.filter(session_id=session_id, id__gt=after)
        .exclude(info__has_key="_noReply").order_by("id").values_list("id", flat=True),
        lambda ann, ben: [("ses_2", ""), ("ses_1", ""), ("ses_1", "msg_1"), ("ses_0", "msg_")]),
    "one argument bound twice, through a relation": (
        lambda name: Session.objects.filter(owner__username=name).exclude(title=name).order_by("id"),
        lambda ann, ben: [("ann",), ("ben",), ("nobody",)]),
}


@pytest.mark.parametrize("case", CASES)
def test_a_compiled_read_gives_the_orm_rows_for_every_argument(case, people, sessions):
    build, arguments = CASES[case]
    query = sql.Query(build)
    for args in arguments(people[0].pk, people[1].pk):
        expected = _rows(build(*args))
        assert _rows(query.all(*args)) == expected, args
        assert _rows([query.first(*args)]) == (expected[:1] or [None]), args
    assert _rows(query.all(*arguments(people[0].pk, people[1].pk)[0])) == _rows(
        build(*arguments(people[0].pk, people[1].pk)[0]))


def test_it_builds_the_queryset_only_for_a_new_shape_of_arguments(sessions):
    builds = []

    def build(owner_id, parent):
        builds.append((owner_id, parent))
        return Session.objects.filter(owner_id=owner_id, parent_id=parent).values_list("id", flat=True)

    query = sql.Query(build)
    owner = sessions[0].owner_id
    query.all(owner, "ses_0")
    assert len(builds) == 2 and all(args != (owner, "ses_0") for args in builds)  # two sets of sentinels
    query.all(owner + 1, "ses_1")
    query.all(owner, "ses_2")
    assert len(builds) == 2
    query.all(owner, None)  # IS NULL: another statement
    assert len(builds) == 4 and builds[-1][1] is None


def test_a_compiled_change_writes_what_queryset_update_writes(sessions):
    def build(session_id, summary, ms, title):
        return (Session.objects.filter(id=session_id),
                {"summary": summary, "time_archived": DatabaseNow() + ms, "title": title, "slug": "fixed"})

    change = sql.Change(build)
    for n, (summary, ms, title) in enumerate([({"files": 9, "q": "a\"b"}, 5, "new"), (None, -10 ** 6, "x"),
                                              ([1, {"two": 2}], 0, "é"), ({"files": 9}, 10 ** 9, "")]):
        ours, theirs = sessions[n % 2 * 2], sessions[n % 2 * 2 + 1]
        assert change(ours.id, summary, ms, title) == 1
        queryset, values = build(theirs.id, summary, ms, title)
        assert queryset.update(**values) == 1
        ours.refresh_from_db()
        theirs.refresh_from_db()
        assert (ours.summary, ours.title, ours.slug) == (theirs.summary, theirs.title, theirs.slug) == (
            summary, title, "fixed")
        assert abs(ours.time_archived - theirs.time_archived) < 5000
    assert change("ses_missing", {}, 0, "t") == 0


def test_a_change_compiled_inside_a_transaction_leaves_the_transaction_usable(sessions):
    rename = sql.Change(lambda session_id, title: (Session.objects.filter(id=session_id), {"title": title}))
    with transaction.atomic():
        assert rename(sessions[0].id, "renamed") == 1
        assert Session.objects.get(id=sessions[0].id).title == "renamed"
    assert Session.objects.get(id=sessions[0].id).title == "renamed"


@pytest.mark.parametrize("build, fault", [
    (lambda prefix: Session.objects.filter(title__startswith=prefix), "cannot be bound"),
    (lambda key: Message.objects.filter(info__has_key=key), "cannot be bound" if connection.vendor == "sqlite"
     else None),
    (lambda session_id, unused: Session.objects.filter(id=session_id), r"argument\(s\) \[1\]"),
    (lambda session_id: Session.objects.select_related("owner").filter(id=session_id), "whole rows"),
    (lambda session_id: Session.objects.filter(id=session_id).values("id"), "whole rows or values_list"),
])
def test_a_declaration_it_cannot_trace_fails_loudly_and_names_itself(build, fault):
    query = sql.Query(build, name="the_query_under_test")
    args = ("x",) * build.__code__.co_argcount
    if fault is None:  # PostgreSQL binds a JSON key as it is
        assert query.all(*args) == list(build(*args))
        return
    with pytest.raises(sql.CompileError, match=f"the_query_under_test.*{fault}"):
        query.all(*args)
    with pytest.raises(sql.CompileError):  # every call, not the first only
        query.all(*args)


def test_an_argument_type_it_cannot_stand_in_for_is_refused():
    query = sql.Query(lambda when: Session.objects.filter(time_created=when))
    with pytest.raises(TypeError, match="compiled statement takes"):
        query.all(object())


def test_the_django_internals_it_reads_are_still_there(sessions):
    """sql_compiled.INTERNALS, each checked: a Django upgrade that changes one fails here."""
    assert sql_compiled.INTERNALS == ("QuerySet._iterable_class", "SQLCompiler.select", "SQLCompiler.get_converters")
    rows = Session.objects.all()
    assert rows._iterable_class is ModelIterable
    assert rows.values_list("id")._iterable_class is ValuesListIterable
    assert rows.values_list("id", flat=True)._iterable_class is FlatValuesListIterable
    queryset = Session.objects.filter(id="ses_0").values_list("id", "tokens")
    compiler = queryset.query.get_compiler(using=queryset.db)
    statement, params = compiler.as_sql()
    assert list(params) == ["ses_0"]
    columns = [column for column, _, _ in compiler.select]
    assert [column.target.attname for column in columns] == ["id", "tokens"]
    converters = compiler.get_converters(columns)
    (position, (functions, expression)), = converters.items()
    assert position == 1 and expression is columns[1]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        (row,) = cursor.fetchall()
    value = row[1]
    for function in functions:
        value = function(value, expression, connection)
    assert value == {"input": 0, "cache": {"read": 0}}
