"""Routes of auth_app: `original` at the root, `v2` under /api."""
from agentserver.http.api import route
from auth_app.api import accounts

original: list = [
    route("auth/<str:providerID>", accounts.ProviderAuthView, "auth.set", "auth.remove"),
]
v2: list = [
    route("auth", accounts.AuthListView, "auth.list", "auth.create"),
    route("auth/<str:accountID>", accounts.AuthItemView, "auth.get", "auth.update", "auth.delete"),
    route("auth/<str:accountID>/activate", accounts.AuthActivateView, "auth.activate"),
]
