from django.apps import AppConfig


class AuthAppConfig(AppConfig):
    name = "auth_app"
    label = "auth_app"

    def ready(self) -> None:
        from agentserver.events import connections
        from agentserver.sandbox import launcher as sandbox
        from auth_app.authentication import live_credentials
        from auth_app.tokens import roots_of

        # The sandbox mounts a user's roots read-write; auth_app is where they are kept.
        sandbox.read_roots_with(roots_of)
        # Live connections close when the credential that opened them ends; auth_app knows which still stand.
        connections.check_credentials_with(live_credentials)
