"""Back office: budgets (validated: a positive amount up to MAX_BUDGET_USD, a known period, the scope's
target), the usage records and rolled-up days, read-only, and the usage dashboard (usage_app/dashboard.py),
linked from both lists."""
from django.contrib import admin
from django.urls import path

from audit_app.admin_changes import AuditedAdmin
from usage_app import dashboard
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

    def get_urls(self):
        # admin_view: staff only (anyone else goes to the admin's sign-in), never cached, CSRF-protected.
        own = [path("dashboard/", self.admin_site.admin_view(dashboard.dashboard_view), name="usage_app_dashboard")]
        return own + super().get_urls()


@admin.register(UsageDay)
class UsageDayAdmin(ReadOnly):
    list_display = ("day", "person", "session_id", "provider_id", "model_id", "calls", "cost")
    list_filter = ("provider_id",)
    search_fields = ("session_id", "model_id", "person__username")
    show_full_result_count = False
