from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"

    def ready(self) -> None:
        # The tools of the user's connected MCP servers join the agent's tools.
        from sessions_app.mcp_tools import tools_for
        from sessions_app.runtime.tools import register_dynamic

        register_dynamic(tools_for)
