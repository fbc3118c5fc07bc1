"""The root URL conf: original routes at the root, v2 routes under /api (namespace "v2"), the admin and its
static files, the browser's pages and the front door. The API routes are derived from the views: each
declares its operation ids and where it is mounted (agentserver/http/mounting.py), so `grep "session.fork"`
finds its view, its mount and its handler in one place."""
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path

import audit_app.api
import auth_app.api
import projects_app.api
import providers_app.api
import pty_app.api
import server.api
import sessions_app.api
import tui_app.api
import usage_app.api
from agentserver.http.mounting import mounted_routes
from web_app import urls as web_urls
from web_app.signin import AdminSignInForm

# The packages whose views declare API operations (agentserver/http/mounting.py reads their modules).
API_PACKAGES = [server.api, tui_app.api, sessions_app.api, pty_app.api, usage_app.api, providers_app.api,
                projects_app.api, auth_app.api, audit_app.api]

original: list = mounted_routes(API_PACKAGES, "original")
v2: list = mounted_routes(API_PACKAGES, "v2")

# The admin's login checks passwords through the same throttle as /signin (web_app/throttle.py); its form
# says so when it refuses.
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("admin/", admin.site.urls),
    # The admin's CSS/JS and each app's static/ (the usage charts' Chart.js), found where they ship, so every
    # host serves them with no collecting step (deploy/ runs server.serve alone); a self-hosted server has no
    # separate web server. `insecure`: Django serves them only with DEBUG otherwise.
    re_path(r"^static/(?P<path>.*)$", serve_static, {"insecure": True}),
    path("api/", include((v2, "v2"))),
    *original,
    # The browser's pages (sign-in, account), then last the front door: the web app's files and page, or
    # the JSON 404 for an unknown API path.
    *web_urls.pages,
    *web_urls.fallback,
]

handler404 = "agentserver.errors.not_found"
handler500 = "agentserver.errors.server_error"
