from django.apps import AppConfig


class PtyAppConfig(AppConfig):
    name = "pty_app"
    label = "pty_app"

    def ready(self) -> None:
        from django.core.signals import request_started

        from pty_app import manager

        # Every worker keeps its liveness announced and looks for dead workers' terminals from its first request.
        request_started.connect(manager.on_request_started, dispatch_uid="pty_app.manager.start")
