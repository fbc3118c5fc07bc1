"""Back office for sessions (read-only, with the transcript), shares (revoke) and permission requests."""
import json

from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from sessions_app.models import PermissionRequest, Session, Share
from sessions_app.store.sharing import session_unshare

_CLIP = 4000


def _clip(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
    return text if len(text) <= _CLIP else text[:_CLIP] + f"\n… ({len(text) - _CLIP} more characters)"


def _part_html(part) -> str:
    data = part.data or {}
    kind = data.get("type", part.type)
    if kind in ("text", "reasoning"):
        body = data.get("text", "")
    elif kind == "tool":
        state = data.get("state") or {}
        body = {"tool": data.get("tool"), "status": state.get("status"), "input": state.get("input"),
                "output": state.get("output"), "error": state.get("error")}
    else:
        body = data
    return format_html('<div class="part"><strong>{}</strong><pre style="white-space:pre-wrap">{}</pre></div>',
                       kind, _clip(body))


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # deletions go through the API's services, which also stop runners and publish events


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "title", "project_id", "directory", "workspace_id", "time_updated")
    search_fields = ("id", "owner__username", "title", "directory")
    list_filter = ("project_id",)
    fields = ("id", "owner", "title", "project_id", "directory", "workspace_id", "parent_id", "agent", "model",
              "cost", "tokens", "time_created", "time_updated", "time_archived", "transcript")
    readonly_fields = fields

    @admin.display(description="Transcript")
    def transcript(self, session):
        blocks = []
        for message in session.messages.order_by("id").prefetch_related("parts"):
            parts = sorted(message.parts.all(), key=lambda part: part.id)
            blocks.append(format_html(
                '<div class="message" style="margin-bottom:1em"><h3>{} · {}</h3>{}</div>',
                message.role, message.id, format_html_join("", "{}", ((_part_html(part),) for part in parts)),
            ))
        return format_html_join("", "{}", ((block,) for block in blocks)) if blocks else "(no messages)"


@admin.action(description="Revoke selected shares")
def revoke_shares(modeladmin, request, queryset):
    count = 0
    for share in queryset.select_related("session"):
        session_unshare(session=share.session)
        count += 1
    messages.success(request, f"Revoked {count} share(s).")


@admin.register(Share)
class ShareAdmin(ReadOnlyAdmin):
    list_display = ("slug", "session", "url", "time_created")
    search_fields = ("slug", "session__id", "session__owner__username")
    fields = ("session", "slug", "url", "time_created")
    readonly_fields = fields
    actions = [revoke_shares]


@admin.register(PermissionRequest)
class PermissionRequestAdmin(ReadOnlyAdmin):
    list_display = ("id", "session", "permission", "status", "reply", "time_created")
    list_filter = ("status", "permission")
    search_fields = ("id", "session__id", "permission")
    fields = ("id", "session", "permission", "patterns", "metadata", "always", "tool", "status", "reply",
              "message", "time_created")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("session")
