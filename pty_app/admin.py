"""Back office for live terminals: look, and kill through the PTY service (which reaches the owning worker)."""
from django.contrib import admin, messages

from agentserver.errors import NotFound
from pty_app.models import Pty
from pty_app.services import pty_remove


@admin.action(description="Kill selected terminals")
def kill_ptys(modeladmin, request, queryset):
    killed = 0
    for row in queryset:
        try:
            pty_remove(user=row.owner, pty_id=row.id)
            killed += 1
        except NotFound:
            pass  # exited meanwhile
    messages.success(request, f"Killed {killed} terminal(s).")


@admin.register(Pty)
class PtyAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "title", "command", "cwd", "status", "pid", "worker_host", "time_created")
    list_filter = ("status", "worker_host")
    search_fields = ("id", "owner__username", "title", "command", "cwd")
    actions = [kill_ptys]

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in Pty._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a bare row delete would orphan the process; use the kill action
