"""Back office for users (roots, tokens) and auth accounts. Secrets are write-only here as in the API:
tokens are shown once when created, credentials never after they are saved."""
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin as DjangoGroupAdmin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.models import Group
from django.db import transaction
from django.template.response import TemplateResponse
from django.urls import reverse

from agentserver.errors import ApiError
from audit_app.admin_changes import AuditedAdmin, admin_actor
from audit_app.log import record
from auth_app import accounts
from auth_app.models import AllowedRoot, ApiToken, AuthAccount
from auth_app.roots import RootRefused, check_root
from auth_app.tokens import token_create, token_revoke

User = get_user_model()


class AllowedRootForm(forms.ModelForm):
    """A root inside the server's own directories (its checkout, data dir) is refused (auth_app/roots.py)."""

    class Meta:
        model = AllowedRoot
        fields = ("path", "position")

    def clean_path(self):
        try:
            return check_root(self.cleaned_data["path"])
        except RootRefused as error:
            raise forms.ValidationError(str(error)) from error


class AllowedRootInline(admin.TabularInline):
    model = AllowedRoot
    form = AllowedRootForm
    extra = 1
    fields = ("path", "position")


class ApiTokenInline(admin.TabularInline):
    model = ApiToken
    extra = 0
    can_delete = False
    fields = ("name", "prefix", "created", "last_used", "expires", "revoked")
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # tokens are minted by the "Create API token" action, which shows the secret once


@admin.action(description="Create API token")
def create_api_token(modeladmin, request, queryset):
    actor = admin_actor(request)
    created = [(user.get_username(), token_create(user=user, name="admin", actor=actor)[1]) for user in queryset]
    return TemplateResponse(request, "admin/auth_app/token_created.html", {
        **modeladmin.admin_site.each_context(request), "title": "API tokens created", "created": created,
        "back_url": reverse("admin:auth_user_changelist"),
    })


admin.site.unregister(User)


@admin.register(User)
class UserAdmin(AuditedAdmin, DjangoUserAdmin):
    inlines = [AllowedRootInline, ApiTokenInline]
    actions = [create_api_token]

    def user_change_password(self, request, id, form_url=""):
        """The password form's change and its audit record in one transaction (never the password)."""
        with transaction.atomic():
            response = super().user_change_password(request, id, form_url)
            if request.method == "POST" and response.status_code == 302:
                record(action="password.changed", actor=admin_actor(request), object_type="user", object_id=id,
                       details={"by": "an administrator, in the admin"})
        return response


admin.site.unregister(Group)


@admin.register(Group)
class GroupAdmin(AuditedAdmin, DjangoGroupAdmin):
    """Django's group admin, its changes audited."""


@admin.action(description="Revoke selected tokens (closes their open streams and terminals)")
def revoke_tokens(modeladmin, request, queryset):
    count = 0
    for token in queryset.filter(revoked__isnull=True):
        token_revoke(token=token, actor=admin_actor(request))
        count += 1
    messages.success(request, f"Revoked {count} token(s).")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "prefix", "created", "last_used", "expires", "revoked")
    list_filter = (("revoked", admin.EmptyFieldListFilter), ("expires", admin.EmptyFieldListFilter))
    search_fields = ("user__username", "name", "prefix")
    fields = ("user", "name", "prefix", "created", "last_used", "expires", "revoked")
    readonly_fields = fields
    actions = [revoke_tokens]

    def has_add_permission(self, request):
        return False


class AuthAccountForm(forms.ModelForm):
    """The secret fields are password inputs that are never pre-filled; leaving them empty on change keeps
    the stored credential."""

    credential_type = forms.ChoiceField(choices=[("api", "API key"), ("oauth", "OAuth tokens")])
    secret = forms.CharField(label="API key / OAuth access token", required=False, strip=True,
                             widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}))
    refresh = forms.CharField(label="OAuth refresh token", required=False, strip=True,
                              widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}))
    expires = forms.IntegerField(label="OAuth expiry (ms since epoch)", required=False, min_value=0)
    make_active = forms.BooleanField(label="Make this the active account for its service", required=False)

    class Meta:
        model = AuthAccount
        fields = ("owner", "service_id", "description")

    def clean(self):
        data = super().clean()
        kind, secret = data.get("credential_type"), data.get("secret")
        if not secret:
            if self.instance._state.adding:
                self.add_error("secret", "A new account needs its key.")
            data["credential"] = None
            return data
        if kind == "oauth":
            if not data.get("refresh") or data.get("expires") is None:
                self.add_error("refresh", "OAuth needs the refresh token and the expiry too.")
                return data
            data["credential"] = {"type": "oauth", "access": secret, "refresh": data["refresh"],
                                  "expires": data["expires"]}
        else:
            data["credential"] = {"type": "api", "key": secret}
        try:
            data["credential"] = accounts.normalize_credential(data["credential"])
        except ApiError as error:
            raise forms.ValidationError(error.message) from error
        return data


@admin.action(description="Make active for its service")
def activate_accounts(modeladmin, request, queryset):
    for account in queryset:
        accounts.account_activate(user=account.owner, account_id=account.id)
    messages.success(request, "Activated.")


@admin.register(AuthAccount)
class AuthAccountAdmin(AuditedAdmin):
    form = AuthAccountForm
    list_display = ("id", "owner", "service_id", "description", "credential_type", "masked", "active")
    list_filter = ("service_id", "active", "credential_type")
    search_fields = ("id", "owner__username", "service_id", "description")
    readonly_fields = ("id", "masked", "fingerprint", "active", "time_created", "time_updated")
    actions = [activate_accounts]

    def get_fields(self, request, obj=None):
        fields = ["owner", "service_id", "description", "credential_type", "secret", "refresh", "expires",
                  "make_active"]
        return (["id", "masked", "fingerprint", "active"] + fields) if obj else fields

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields + (("owner", "service_id") if obj else ())

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is not None:
            form.base_fields["credential_type"].initial = obj.credential_type
        return form

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        # The form's clean() already validated the credential, so the services do not refuse it here.
        if change:
            saved = accounts.account_update(user=obj.owner, account_id=obj.id, description=data.get("description", ""),
                                            credential=data.get("credential"))
            if data.get("make_active"):
                accounts.account_activate(user=obj.owner, account_id=obj.id)
        else:
            saved = accounts.account_create(user=data["owner"], service_id=data["service_id"],
                                            credential=data["credential"], description=data.get("description", ""),
                                            active=True if data.get("make_active") else None)
        # The admin reads obj.pk afterwards (redirects, log entries): hand it the saved row.
        obj.pk = obj.id = saved.id
        obj.owner, obj.service_id = saved.owner, saved.service_id
