"""Reading the audit log, for staff only (the API and the admin check who asks; these take the filters)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, replace

from django.contrib.postgres.search import SearchQuery, SearchVectorField
from django.db import connection
from django.db.models import BigIntegerField, ExpressionWrapper, F, Max, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower

from agentserver.errors import Forbidden
from audit_app.models import AuditRecord

MAX_LIMIT = 500
# Free text first looks among this many newest positions (below the cursor), walking them in order.
RECENT_POSITIONS = 50_000


@dataclass(frozen=True)
class AuditFilters:
    person: str | None = None        # a user id or a username
    action: str | None = None        # exact, or a prefix ending in "." ("token.")
    object: str | None = None        # "type" or "type:id"
    session: str | None = None
    outcome: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None
    q: str | None = None             # free text: words of the action, object, actor's name, details


def filtered(filters: AuditFilters) -> QuerySet[AuditRecord]:
    rows = AuditRecord.objects.all()
    if filters.person:
        rows = rows.filter(actor_person=int(filters.person)) if filters.person.isdigit() else rows.filter(
            actor_name=filters.person)
    if filters.action:
        rows = rows.filter(action__startswith=filters.action) if filters.action.endswith(".") else rows.filter(
            action=filters.action)
    if filters.object:
        kind, _, object_id = filters.object.partition(":")
        rows = rows.filter(object_type=kind, **({"object_id": object_id} if object_id else {}))
    if filters.session:
        rows = rows.filter(session=filters.session)
    if filters.outcome:
        rows = rows.filter(outcome=filters.outcome)
    # Positions are given in time order (audit_app/chain.py), so a time range is a range of ids: found by the
    # time index at its two ends, then walked by the primary key like every other page.
    if filters.since:
        first = AuditRecord.objects.filter(time__gte=filters.since).order_by("time").values_list("id", flat=True)[:1]
        rows = rows.filter(id__gte=first[0]) if first else rows.none()
    if filters.until:
        after = AuditRecord.objects.filter(time__gte=filters.until).order_by("time").values_list("id", flat=True)[:1]
        if after:
            rows = rows.filter(id__lt=after[0])
    if filters.q:
        rows = matching_text(rows, filters.q)
    return rows


# PostgreSQL: the words of a record (its action, object type and id, actor's name and details) as a tsvector
# of the `simple` configuration, kept as written, lower-cased. The characters PostgreSQL's parser would join
# words with (paths, hosts, e-mail addresses, hyphenated words, signed numbers, tags) are read as spaces first,
# so every run of letters and digits is a word, and JSON's \n, \r, \t do not glue their letter to the next
# word. Migration 0005 indexes this very expression (GIN): the query must spell it the same way to use it.
RECORD_FIELDS_SQL = "\"action\" || ' ' || \"object_type\" || ' ' || \"object_id\" || ' ' || \"actor_name\" || ' ' || "
WORD_JOINERS = "-./:@_\\~+<>&"
RECORD_TEXT_SQL = (
    f"translate({RECORD_FIELDS_SQL}replace(replace(replace(\"details\", '\\n', ' '), '\\r', ' '), '\\t', ' '), "
    f"'{WORD_JOINERS}', '{' ' * len(WORD_JOINERS)}')")
RECORD_WORDS_SQL = f"to_tsvector('simple'::regconfig, {RECORD_TEXT_SQL})"
_AS_SPACES = str.maketrans(WORD_JOINERS, " " * len(WORD_JOINERS))


def matching_text(rows: QuerySet[AuditRecord], q: str, *, indexed: bool = True) -> QuerySet[AuditRecord]:
    """The records among `rows` that the free text `q` finds. PostgreSQL: every word of q, whole, in any case
    and order, anywhere in the record, through the words index (RECORD_WORDS_SQL); a q of no word finds
    nothing. Not a phrase: a phrase of words found in most records would have each of their millions of
    records read again, for the words' positions. SQLite: each space-separated term of q as a substring of
    one of those fields, in any case (its logs are small). `indexed=False` (PostgreSQL) spells the words so
    that their index cannot be used: for a walk of the newest records."""
    if connection.vendor != "postgresql":
        for term in q.split():
            found = Q()
            for field in ("action", "object_type", "object_id", "actor_name", "details"):
                found |= Q(**{f"{field}__icontains": term})
            rows = rows.filter(found)
        return rows
    text = q.translate(_AS_SPACES)
    words = _lexemes(text)
    if not words:
        return rows.none()
    words_sql = RECORD_WORDS_SQL if indexed else f"to_tsvector('simple'::regconfig, {RECORD_TEXT_SQL} || '')"
    rows = rows.alias(record_words=RawSQL(words_sql, [], output_field=SearchVectorField()),
                      record_fields=Lower(RawSQL(RECORD_FIELDS_SQL + '"details"', [])))
    # Each word is in the record as a substring: cheap tests that PostgreSQL makes before it builds a
    # record's words, where it walks records rather than the index.
    return rows.filter(*[Q(record_fields__contains=word) for word in words],
                       record_words=SearchQuery(text, config="simple", search_type="plain"))


def _lexemes(text: str) -> list[str]:
    """The words PostgreSQL's parser finds in `text` (as the `simple` configuration keeps them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector('simple'::regconfig, %s))", [text])
        return [lexeme for (lexeme,) in cursor.fetchall()]


def check_reader(*, viewer) -> None:
    """Only staff read the audit log: Forbidden (403) for anyone else."""
    if not getattr(viewer, "is_staff", False):
        raise Forbidden("Only staff can read the audit log")


def audit_page(*, viewer, filters: AuditFilters, before_id: int | None = None,
               limit: int = 100) -> tuple[list[AuditRecord], int | None]:
    """Newest first: up to `limit` records older than `before_id`, and the id to continue before (or None).
    Staff only (check_reader)."""
    check_reader(viewer=viewer)
    count = min(limit, MAX_LIMIT) + 1
    if filters.q:
        found = newest_matching(filtered(replace(filters, q=None)), filters.q, count=count, before_id=before_id)
        page = list(AuditRecord.objects.filter(id__in=found).order_by("-id"))
    else:
        rows = filtered(filters)
        if before_id is not None:
            rows = rows.filter(id__lt=before_id)
        page = list(rows.order_by("-id")[:count])
    more = len(page) > limit
    page = page[:limit]
    return page, (page[-1].id if more and page else None)


def newest_matching(rows: QuerySet[AuditRecord], q: str, *, count: int, before_id: int | None = None) -> list[int]:
    """The positions of the newest `count` records of `rows` (older than `before_id`) that the free text `q`
    finds, newest first. Walking the log newest first answers at once for a word in most records and reads
    all 10 million for a word in none; the words index is the reverse (a common word's list of records is
    millions long). Which one a word needs, the planner can guess from its statistics only when it sees the
    word, and a prepared statement's generic plan does not. So the newest RECENT_POSITIONS are walked first,
    matching the words without their index (a bounded walk; each record is tested for q's words as substrings
    before its words are built); when they do not fill the page, matches are rare, and they are found through
    the words index and sorted, ordered by `id + 0` to keep the planner off the newest-first walk
    (docs/audit.md has the figures)."""
    upper = before_id if before_id is not None else (AuditRecord.objects.aggregate(top=Max("id"))["top"] or 0) + 1
    rows = rows.filter(id__lt=upper)
    walked = matching_text(rows.filter(id__gte=upper - RECENT_POSITIONS), q, indexed=False)
    found = list(walked.order_by("-id").values_list("id", flat=True)[:count])
    if len(found) < count:
        position = ExpressionWrapper(F("id") + 0, output_field=BigIntegerField())
        found = list(matching_text(rows, q).order_by(position.desc()).values_list("id", flat=True)[:count])
    return found
