"""The audit log in the admin, for staff: a filterable list (person, action, object, session, dates, outcome,
free text), each record's detail, a person's timeline and a session's history (the list filtered by
person or session, linked from each record). Nothing here adds, changes or deletes a record."""
from __future__ import annotations

import datetime

import orjson
from django.contrib import admin
from django.core.paginator import Paginator
from django.urls import reverse
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.functional import cached_property
from django.utils.html import format_html

from audit_app import selectors
from audit_app.actions import ACTIONS
from audit_app.log import OUTCOMES
from audit_app.models import AuditRecord

COUNT_CAP = 10_000
SEARCH_CAP = 1_000  # a search from the search box lists its newest matches, ten pages


class CappedPaginator(Paginator):
    """Counting ten million rows for a page number costs seconds: count up to COUNT_CAP."""

    @cached_property
    def count(self) -> int:
        return len(self.object_list.values_list("pk", flat=True)[:COUNT_CAP])


class _ParameterFilter(admin.SimpleListFilter):
    """A filter given by a query parameter (a link or the URL), shown with what it is set to."""

    def lookups(self, request, model_admin):
        value = self.value()
        return [(value, value)] if value else []

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        return queryset & selectors.filtered(selectors.AuditFilters(**{self.parameter_name: self.parse(value)}))

    def parse(self, value: str):
        return value


class PersonFilter(_ParameterFilter):
    title, parameter_name = "person (id or username)", "person"


class ObjectFilter(_ParameterFilter):
    title, parameter_name = "object (type or type:id)", "object"


class SessionFilter(_ParameterFilter):
    title, parameter_name = "session", "session"


def _moment(value: str):
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.datetime.combine(day, datetime.time())
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


class SinceFilter(_ParameterFilter):
    title, parameter_name = "since (YYYY-MM-DD or ISO time)", "since"
    parse = staticmethod(_moment)


class UntilFilter(_ParameterFilter):
    title, parameter_name = "until (YYYY-MM-DD or ISO time)", "until"
    parse = staticmethod(_moment)


class ActionFilter(admin.SimpleListFilter):
    title, parameter_name = "action", "action"

    def lookups(self, request, model_admin):
        return [(action, action) for action in ACTIONS]

    def queryset(self, request, queryset):
        return queryset.filter(action=self.value()) if self.value() else queryset


class OutcomeFilter(admin.SimpleListFilter):
    title, parameter_name = "outcome", "outcome"

    def lookups(self, request, model_admin):
        return [(outcome, outcome) for outcome in OUTCOMES]

    def queryset(self, request, queryset):
        return queryset.filter(outcome=self.value()) if self.value() else queryset


def _list_url() -> str:
    return reverse("admin:audit_app_auditrecord_changelist")


@admin.register(AuditRecord)
class AuditRecordAdmin(admin.ModelAdmin):
    list_display = ("id", "time", "action", "actor", "object", "outcome", "session_link")
    list_filter = (ActionFilter, OutcomeFilter, PersonFilter, ObjectFilter, SessionFilter, SinceFilter, UntilFilter)
    search_fields = ("details",)  # shows the search box; get_search_results does the search
    ordering = ("-id",)
    paginator = CappedPaginator
    show_full_result_count = False
    list_per_page = 100
    fields = ("id", "time", "action", "outcome", "actor", "person_timeline", "actor_token", "actor_address",
              "actor_user_agent", "object", "session_link", "pretty_details", "prev_hash", "hash")
    readonly_fields = fields

    @admin.display(description="actor")
    def actor(self, record: AuditRecord) -> str:
        who = record.actor_name or (f"person {record.actor_person}" if record.actor_person else "anonymous")
        if record.actor_session:
            return f"agent in session {record.actor_session} on behalf of {who}"
        return who + (f" (token {record.actor_token})" if record.actor_token else "")

    @admin.display(description="object")
    def object(self, record: AuditRecord) -> str:
        return f"{record.object_type} {record.object_id}".strip()

    @admin.display(description="session")
    def session_link(self, record: AuditRecord):
        if not record.session:
            return "–"
        return format_html('<a href="{}?session={}">{}</a>', _list_url(), record.session, record.session)

    @admin.display(description="timeline")
    def person_timeline(self, record: AuditRecord):
        if record.actor_person is None:
            return "–"
        return format_html('<a href="{}?person={}">everything {} did</a>', _list_url(), record.actor_person,
                           record.actor_name or f"person {record.actor_person}")

    @admin.display(description="details")
    def pretty_details(self, record: AuditRecord):
        pretty = orjson.dumps(orjson.loads(record.details), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        return format_html("<pre>{}</pre>", pretty.decode())

    def get_search_results(self, request, queryset, search_term):
        """The API's free text (selectors.newest_matching: whole words through their index on PostgreSQL), not
        Django's substring scan of each search field: on a log of millions of records an answer in under a
        second. Its newest SEARCH_CAP matches: more would cost a common word's search a walk through as many
        records; a filter beside it narrows the search."""
        if not search_term.strip():
            return queryset, False
        return queryset.filter(id__in=selectors.newest_matching(queryset, search_term, count=SEARCH_CAP)), False

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request) -> bool:
        return self.has_view_permission(request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
