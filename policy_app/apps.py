from django.apps import AppConfig


class PolicyAppConfig(AppConfig):
    name = "policy_app"
    label = "policy_app"
    verbose_name = "Managed policy"
    default_auto_field = "django.db.models.BigAutoField"
