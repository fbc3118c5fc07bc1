"""The browser's pages (sign-in, account, single sign-on) and the front door that answers every path no
other route claims. They are no API operations: unnamed, so the route battery and /doc leave them out."""
from django.conf import settings
from django.urls import path, re_path

from web_app import account, front_door, signin

pages: list = [
    path("signin", signin.signin),
    path("signout", signin.signout),
    path("account", account.account),
    path("account/tokens", account.token_new),
    path("account/tokens/<int:token_id>/revoke", account.token_remove),
    path("account/password", account.password_change),
]
if settings.OIDC_ISSUER:
    from web_app import oidc

    pages += oidc.urlpatterns

fallback: list = [re_path(r"^(?P<path>.*)$", front_door.front_door)]
