from django.apps import AppConfig


class ProjectsAppConfig(AppConfig):
    name = "projects_app"
    label = "projects_app"

    def ready(self) -> None:
        from agentserver.http import api
        from projects_app.contexts import from_request

        # The HTTP edge resolves a request's directory into a runtime context through projects_app.
        api.resolve_contexts_with(from_request)
