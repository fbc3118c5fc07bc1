from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"

    def ready(self) -> None:
        from django.core.signals import request_started

        from agentserver.events.bus import BUS
        from projects_app import workspaces
        from sessions_app.mcp_tools import tools_for
        from sessions_app.runtime import supervisor, wakeups
        from sessions_app.runtime.tool_registry import register_dynamic
        from sessions_app.services.workspaces import sessions_detach
        from sessions_app.store.rows import share_of
        from sessions_app.wire import read_shares_with

        # The first request starts the runner machinery (loop capture, lease janitor), under any ASGI server.
        request_started.connect(supervisor.on_request_started, dispatch_uid="sessions_app.runner.start")
        # The tools of the user's connected MCP servers join the agent's tools.
        register_dynamic(tools_for)
        # Waits on a session (sync prompts, session.wait) wake on its events, from any worker.
        BUS.listen(wakeups.WAKING_TYPES, wakeups.on_event)
        # A workspace that goes away (workspace.delete, workspace.sync) detaches the sessions pinned to it.
        workspaces.on_removal(sessions_detach)
        # Rendering a session reads its share through the store's compiled statement.
        read_shares_with(share_of)
