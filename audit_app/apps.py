from django.apps import AppConfig


class AuditAppConfig(AppConfig):
    name = "audit_app"
    label = "audit_app"
    verbose_name = "Audit log"
