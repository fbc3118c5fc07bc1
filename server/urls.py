"""The root URL conf: original routes at the root, v2 routes under /api (namespace "v2"), the admin and its
static files. Each app's urls.py has an `original` and a `v2` list of routes, each named by its operation id
(`grep "session.fork"` finds its route and view).

Apps are mounted from the top layer down: Django takes the first pattern that matches a path, and a higher
app may serve a fixed path (sessions_app's workspace/warp) that a lower app's pattern would take for an id
(projects_app's workspace/<workspaceID>)."""
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path

from agentserver.http.api import route
from audit_app import urls as audit_urls
from auth_app import urls as auth_urls
from projects_app import urls as projects_urls
from providers_app import urls as providers_urls
from pty_app import urls as pty_urls
from server.api import doc, events, health, log, upgrade
from sessions_app import urls as sessions_urls
from tui_app import urls as tui_urls
from usage_app import urls as usage_urls
from web_app import urls as web_urls
from web_app.signin import AdminSignInForm

APPS = [tui_urls, sessions_urls, pty_urls, usage_urls, providers_urls, projects_urls, auth_urls, audit_urls]

original: list = [
    route("global/health", health.HealthView, "global.health"),
    route("global/event", events.global_event_stream, "global.event"),
    route("event", events.instance_event_stream, "event.subscribe"),
    route("doc", doc.OpenApiView, "doc"),
    route("log", log.LogView, "app.log"),
    route("global/upgrade", upgrade.UpgradeView, "global.upgrade"),
    *(pattern for app in APPS for pattern in app.original),
]
v2: list = [
    route("event", events.v2_event_stream, "event.subscribe"),
    route("health", health.HealthV2View, "health.get"),
    route("session/<str:sessionID>/event", events.session_event_stream, "session.events"),
    *(pattern for app in APPS for pattern in app.v2),
]

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
