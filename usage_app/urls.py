"""Routes of usage_app: `v2` under /api (it has none at the root: opencode has no usage API)."""
from agentserver.http.api import route
from usage_app.api import usage

original: list = []
v2: list = [
    route("usage", usage.UsageView, "usage.list"),
]
