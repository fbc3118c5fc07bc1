from django.contrib import admin

from pty_app.models import Pty


@admin.register(Pty)
class PtyAdmin(admin.ModelAdmin):
    """Read-only view of the running terminals; remove them through the API (DELETE /pty/{id})."""

    list_display = ("id", "owner", "title", "command", "cwd", "status", "pid", "worker_id", "time_created")
    list_filter = ("status", "worker_host")
    search_fields = ("id", "title", "command", "cwd", "owner__username")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
