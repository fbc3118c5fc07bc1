"""Routes of auth_app: `original` at the root, `v2` under /api."""
from django.urls import path

from auth_app import api_accounts

original: list = [
    path("auth/<str:providerID>", api_accounts.ProviderAuthView.as_view(), name="auth.set"),
]
v2: list = [
    path("auth", api_accounts.AuthListView.as_view(), name="auth.list"),
    path("auth/<str:accountID>", api_accounts.AuthItemView.as_view(), name="auth.get"),
    path("auth/<str:accountID>/activate", api_accounts.AuthActivateView.as_view(), name="auth.activate"),
]
