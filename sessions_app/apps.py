from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"

    def ready(self) -> None:
        from django.core.signals import request_started

        from sessions_app.runtime import supervisor

        # daphne has no lifespan: the first request starts the runner machinery (loop capture, lease janitor).
        request_started.connect(supervisor.on_request_started, dispatch_uid="sessions_app.runner.start")
