"""Original routes at the root, v2 routes under /api (namespace "v2"), the admin, the OpenAPI document, the
browser's pages, and last the front door (web_app: the web app's files and page, or the JSON 404).

Each app's urls.py exposes `original` and `v2` lists; every view declares `operation_ids`
(method → spec operation id), so `grep "session.fork"` lands on its route and view."""
from importlib import import_module

from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve as serve_static

from agentserver import views as core_views
from web_app import urls as web_urls

APPS = ["auth_app", "projects_app", "sessions_app", "providers_app", "pty_app"]

original: list = [
    path("global/health", core_views.HealthView.as_view(), name="global.health"),
    path("global/event", core_views.global_event_stream, name="global.event"),
    path("event", core_views.instance_event_stream, name="event.subscribe"),
    path("instance/dispose", core_views.InstanceDisposeView.as_view(), name="instance.dispose"),
    path("doc", core_views.OpenApiView.as_view(), name="doc"),
]
v2: list = [
    path("event", core_views.v2_event_stream, name="event.subscribe"),
    path("health", core_views.HealthV2View.as_view(), name="health.get"),
]

for app in APPS:
    module = import_module(f"{app}.urls")
    original += getattr(module, "original", [])
    v2 += getattr(module, "v2", [])

urlpatterns = [
    path("admin/", admin.site.urls),
    # The admin's own CSS/JS, collected by `make serve`; a self-hosted server has no separate web server.
    re_path(r"^static/(?P<path>.*)$", serve_static, {"document_root": settings.STATIC_ROOT}),
    path("api/", include((v2, "v2"))),
    *original,
    *web_urls.pages,
    *web_urls.fallback,
]

handler404 = "agentserver.views.not_found"
handler500 = "agentserver.views.server_error"
