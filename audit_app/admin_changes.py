"""What an administrator changed in the admin, field by field: an admin class based on AuditedAdmin records
from save_related (after the object and its inlines are saved, inside the admin's transaction) and
delete_model / delete_queryset. Secret fields (passwords, keys, tokens) are named but never shown (audit_app/redaction.py)."""
from __future__ import annotations

from django.contrib import admin
from django.db import models

from audit_app.actors import Actor
from audit_app.log import record


def _shown(value):
    if isinstance(value, models.Model):
        return str(value)
    if isinstance(value, (list, tuple, set, models.QuerySet)):
        return sorted(str(item) for item in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _form_changes(form) -> dict:
    return {field: {"before": _shown(form.initial.get(field)), "after": _shown(form.cleaned_data.get(field))}
            for field in form.changed_data}


def _label(obj: models.Model) -> str:
    return obj._meta.label_lower


def record_admin_save(request, *, obj: models.Model, form, formsets=(), change: bool) -> None:
    """One record of an admin's add or change: the object's changed fields, and its inlines' rows added,
    changed and deleted."""
    details: dict = {"object": str(obj), "fields": _form_changes(form)}
    related = []
    for formset in formsets:
        for inline in getattr(formset, "new_objects", []):
            related.append({"added": _label(inline), "id": inline.pk, "object": str(inline)})
        for inline, changed in getattr(formset, "changed_objects", []):
            inline_form = next((f for f in formset.forms if f.instance.pk == inline.pk), None)
            related.append({"changed": _label(inline), "id": inline.pk, "object": str(inline),
                            "fields": _form_changes(inline_form) if inline_form is not None else changed})
        for inline in getattr(formset, "deleted_objects", []):
            related.append({"deleted": _label(inline), "id": inline.pk, "object": str(inline)})
    if related:
        details["related"] = related
    if change and not details["fields"] and not related:
        return  # saved unchanged: nothing happened
    record(action="admin.change" if change else "admin.add", actor=admin_actor(request),
           object_type=_label(obj), object_id=obj.pk, details=details)


def record_admin_delete(request, *, obj: models.Model) -> None:
    record(action="admin.delete", actor=admin_actor(request), object_type=_label(obj), object_id=obj.pk,
           details={"object": str(obj)})


def admin_actor(request) -> Actor:
    return Actor.person(request.user, request=request)


class AuditedAdmin(admin.ModelAdmin):
    """An admin whose adds, changes and deletions are each one audit record, written in the admin's own
    transaction. Put it first among the bases (`class UserAdmin(AuditedAdmin, DjangoUserAdmin)`)."""

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        record_admin_save(request, obj=form.instance, form=form, formsets=formsets, change=change)

    def delete_model(self, request, obj):
        record_admin_delete(request, obj=obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            record_admin_delete(request, obj=obj)
        super().delete_queryset(request, queryset)
