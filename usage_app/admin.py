"""Back office: budgets (validated: a positive amount up to MAX_BUDGET_USD, a known period, the scope's
target), and the usage records and rolled-up days, read-only."""
from django.contrib import admin

from audit_app.admin_changes import AuditedAdmin
from usage_app.models import Budget, UsageDay, UsageRecord


@admin.register(Budget)
class BudgetAdmin(AuditedAdmin):
    list_display = ("__str__", "scope", "period", "amount", "warn_percent")
    list_filter = ("scope", "period")
    autocomplete_fields = ("person", "group")
    fields = ("scope", "group", "person", "period", "amount", "warn_percent")


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(UsageRecord)
class UsageRecordAdmin(ReadOnly):
    list_display = ("at", "person", "session_id", "purpose", "provider_id", "model_id", "input_tokens",
                    "output_tokens", "cost", "priced", "credential", "outcome")
    list_filter = ("outcome", "purpose", "credential", "priced", "provider_id")
    search_fields = ("session_id", "message_id", "model_id", "person__username")
    date_hierarchy = "at"
    show_full_result_count = False  # a count of millions of rows on every page costs more than the page


@admin.register(UsageDay)
class UsageDayAdmin(ReadOnly):
    list_display = ("day", "person", "session_id", "provider_id", "model_id", "calls", "cost")
    list_filter = ("provider_id",)
    search_fields = ("session_id", "model_id", "person__username")
    show_full_result_count = False
