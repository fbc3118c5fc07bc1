from django.apps import AppConfig


class AuthAppConfig(AppConfig):
    name = "auth_app"
    label = "auth_app"

    def ready(self) -> None:
        from agentserver import sandbox
        from auth_app.tokens import roots_of

        # The sandbox mounts a user's roots read-write; auth_app is where they are kept.
        sandbox.read_roots_with(roots_of)
