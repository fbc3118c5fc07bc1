from django.apps import AppConfig


class ProvidersAppConfig(AppConfig):
    name = "providers_app"
    label = "providers_app"

    def ready(self) -> None:
        # The tools of the user's connected MCP servers join the agent's tools.
        from providers_app.mcp.registry import tools_for
        from sessions_app.runtime.tools import register_dynamic

        register_dynamic(tools_for)
