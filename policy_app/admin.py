"""The managed policy's admin: one policy for everyone and one per group, edited as lines of text; names the
catalog does not know are saved and flagged; "Effective policy" shows, for one person, what applies and
which policy decided each setting."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from audit_app.admin_changes import AuditedAdmin
from policy_app import known
from policy_app.models import PERMISSION_ACTIONS, Policy
from policy_app.rules import model_matches
from policy_app.selectors import policy_for, scope_of

LIST_FIELDS = ("allowed_providers", "allowed_models", "mcp_local_commands", "mcp_remote_urls")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class LinesField(forms.CharField):
    """A list of strings, one a line."""
    widget = forms.Textarea(attrs={"rows": 4, "cols": 60})

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value):
        return _lines(super().to_python(value))


class CeilingsField(forms.CharField):
    """Permission ceilings, one `permission: action` a line."""
    widget = forms.Textarea(attrs={"rows": 4, "cols": 60, "placeholder": "bash: ask\nwebfetch: deny"})

    def prepare_value(self, value):
        return "\n".join(f"{k}: {v}" for k, v in value.items()) if isinstance(value, dict) else value

    def to_python(self, value):
        out: dict[str, str] = {}
        for line in _lines(super().to_python(value)):
            name, sep, action = line.partition(":")
            if not sep or not name.strip():
                raise forms.ValidationError(f'"{line}": write "permission: allow|ask|deny"')
            out[name.strip()] = action.strip()
        return out


class PolicyForm(forms.ModelForm):
    allowed_providers = LinesField(required=False, help_text=Policy._meta.get_field("allowed_providers").help_text
                                   + " One a line.")
    allowed_models = LinesField(required=False, help_text=Policy._meta.get_field("allowed_models").help_text
                                + " One a line.")
    mcp_local_commands = LinesField(required=False, help_text=Policy._meta.get_field("mcp_local_commands").help_text
                                    + " One a line.")
    mcp_remote_urls = LinesField(required=False, help_text=Policy._meta.get_field("mcp_remote_urls").help_text
                                 + " One a line.")
    permission_ceilings = CeilingsField(required=False, label="Permission ceilings",
                                        help_text="One `permission: allow|ask|deny` a line (deny is the strictest)."
                                                  " Permissions: " + ", ".join(known.PERMISSIONS) + "; * matches any.")

    class Meta:
        model = Policy
        fields = ("group", "allowed_providers", "allowed_models", "default_model", "restrict_mcp",
                  "mcp_local_commands", "mcp_remote_urls", "permission_ceilings", "sharing_allowed", "max_steps")

    def clean_allowed_models(self):
        patterns = self.cleaned_data["allowed_models"]
        bad = [p for p in patterns if "/" not in p]
        if bad:
            raise forms.ValidationError(f"Write each model as provider/model (a pattern may use *): {', '.join(bad)}")
        return patterns

    def clean_mcp_remote_urls(self):
        urls = self.cleaned_data["mcp_remote_urls"]
        bad = [u for u in urls if not u.startswith(("https://", "http://"))]
        if bad:
            raise forms.ValidationError(f"A remote URL prefix starts with https:// or http://: {', '.join(bad)}")
        return urls

    def clean_permission_ceilings(self):
        ceilings = self.cleaned_data["permission_ceilings"]
        problems = [f"{entry} is not one of {', '.join(PERMISSION_ACTIONS)}" for entry in known.bad_actions(ceilings)]
        problems += [f"{name} is no permission" for name in known.unknown_permissions(ceilings)]
        if problems:
            raise forms.ValidationError("; ".join(problems))
        return ceilings

    def clean_default_model(self):
        value = self.cleaned_data["default_model"].strip()
        provider_id, _, model_id = value.partition("/")
        if value and (not provider_id or not model_id or "*" in value or "?" in value):
            raise forms.ValidationError("Write the default model as provider/model, without wildcards")
        return value

    def clean(self):
        cleaned = super().clean()
        default = cleaned.get("default_model")
        if default and not self.errors:
            scope = scope_of(Policy(**{k: cleaned.get(k) for k in LIST_FIELDS}))
            provider_id, model_id = default.split("/", 1)
            if (scope.allowed_providers and provider_id not in scope.allowed_providers
                    or scope.allowed_models and not any(model_matches(m, provider_id, model_id)
                                                        for m in scope.allowed_models)):
                self.add_error("default_model", "This policy's own lists of providers and models do not allow it")
        return cleaned


def flags_of(policy: Policy) -> list[str]:
    """Names in the policy the catalog does not know: saved, harmless (they allow nothing), worth a look."""
    return known.unknown_names(providers=policy.allowed_providers or [], models=policy.allowed_models or [],
                               default_model=policy.default_model)


@admin.register(Policy)
class PolicyAdmin(AuditedAdmin):
    form = PolicyForm
    list_display = ("__str__", "providers", "ceilings", "sharing_allowed", "max_steps", "flags", "updated")
    readonly_fields = ("flags",)
    fieldsets = (
        (None, {"fields": ("group", "flags")}),
        ("Providers and models", {"fields": ("allowed_providers", "allowed_models", "default_model")}),
        ("MCP servers", {"fields": ("restrict_mcp", "mcp_local_commands", "mcp_remote_urls")}),
        ("Permissions, sharing, steps", {"fields": ("permission_ceilings", "sharing_allowed", "max_steps")}),
    )

    @admin.display(description="Providers")
    def providers(self, obj: Policy) -> str:
        return ", ".join(obj.allowed_providers or []) or "any"

    @admin.display(description="Ceilings")
    def ceilings(self, obj: Policy) -> str:
        return ", ".join(f"{k}: {v}" for k, v in (obj.permission_ceilings or {}).items()) or "-"

    @admin.display(description="Unknown names")
    def flags(self, obj: Policy) -> str:
        flags = flags_of(obj) if obj.pk else []
        return format_html('<span class="policy-flags" style="color:#ba2121">{}</span>',
                           "Not in the catalog: " + ", ".join(flags)) if flags else "-"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        flags = flags_of(obj)
        if flags:
            messages.warning(request, f"Saved, but the catalog does not know: {', '.join(flags)}. "
                                      "They allow nothing until a provider of that name exists.")

    def changelist_view(self, request, extra_context=None):
        extra = {**(extra_context or {}), "effective_url": reverse("admin:policy_app_policy_effective")}
        return super().changelist_view(request, extra_context=extra)

    def get_urls(self):
        own = [path("effective/", self.admin_site.admin_view(self.effective_view),
                    name="policy_app_policy_effective")]
        return own + super().get_urls()

    def effective_view(self, request):
        """The effective policy of one person: each setting, its value and which policy decided it, and what
        each policy that applies to them says."""
        users = get_user_model().objects.order_by("username")
        person = None
        if request.GET.get("user"):
            person = get_object_or_404(get_user_model(), pk=request.GET["user"]) \
                if request.GET["user"].isdigit() else None
        policy = policy_for(person) if person is not None else None
        return TemplateResponse(request, "admin/policy_app/effective.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": "Effective policy",
            "users": users, "person": person, "rows": policy.summary() if policy else [],
            "scopes": policy.scopes if policy else [],
        })
