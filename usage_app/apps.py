from django.apps import AppConfig


class UsageAppConfig(AppConfig):
    name = "usage_app"
    label = "usage_app"
    verbose_name = "Usage"

    def ready(self) -> None:
        from usage_app.zone import usage_zone

        usage_zone()  # an unknown AGENTSERVER_USAGE_TIME_ZONE stops the server at start-up, not at a report
