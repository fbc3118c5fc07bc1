"""instance.dispose: opencode drops a directory's instance state; here that is the event, which also
closes the caller's /event streams for the directory (after they receive it), and stops the user's language
servers that directory used. Nothing else is cached per directory (the git lookup cache is a few seconds old
at most)."""
from agentserver.context import RuntimeContext
from agentserver.events import publisher as events
from projects_app.lsp.service import lsp_dispose


def instance_dispose(*, context: RuntimeContext) -> bool:
    lsp_dispose(user=context.user, directory=context.directory)
    events.publish_context("server.instance.disposed", {"directory": context.directory}, context)
    return True


def global_dispose(*, user) -> bool:
    """global.dispose: opencode drops every instance; here each of the caller's clients hears it on
    /global/event as `{directory: "global", payload: {type: "global.disposed"}}` and reloads its state; every
    language server of the caller's stops."""
    lsp_dispose(user=user, directory=None)
    events.publish("global.disposed", {}, owner_id=user.pk, directory="global")
    return True
