"""What a path no API route claims answers: one of the web app's files (to anyone: the app's code is
public), the app's page for a browser that asks for a page (signed in; otherwise the sign-in page), and
for everything else, the API's JSON 404 as before."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt

from agentserver.errors import not_found
from web_app.assets import (
    SESSION_SCRIPT,
    Asset,
    is_asset_path,
    page_policy,
    session_script,
    source,
    with_session_script,
)
from web_app.signin import signed_in_user, signin_url


def wants_page(request: HttpRequest) -> bool:
    """A browser navigating (fetch metadata), or a client that asks for HTML: curl and the SDKs ask for
    */* or JSON, and keep getting JSON."""
    destination = request.headers.get("Sec-Fetch-Dest")
    if destination is not None:
        return destination in ("document", "iframe")
    return "text/html" in request.headers.get("Accept", "")


def _asset_response(request: HttpRequest, asset: Asset) -> HttpResponse:
    if asset.etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(asset.body, content_type=asset.content_type)
        if asset.gzipped:
            response["Content-Encoding"] = "gzip"
    response["ETag"] = asset.etag
    response["Cache-Control"] = asset.cache_control
    response["X-Content-Type-Options"] = "nosniff"
    patch_vary_headers(response, ["Accept-Encoding"])
    return response


def _page_response(request: HttpRequest) -> HttpResponse:
    page = source().page()
    if page is None:
        return render(request, "web_app/not_installed.html", status=503)
    page = with_session_script(page)
    response = HttpResponse(page, content_type="text/html; charset=utf-8")
    response["Content-Security-Policy"] = page_policy(page)
    response["Cache-Control"] = "no-store"
    return response


@csrf_exempt  # answers reads only; anything else is the API's 404
def front_door(request: HttpRequest, path: str = "") -> HttpResponse:
    if request.method in ("GET", "HEAD"):
        if path == SESSION_SCRIPT:
            return _asset_response(request, session_script())
        if is_asset_path(path):
            accepts_gzip = "gzip" in request.headers.get("Accept-Encoding", "")
            asset = source().asset(path, accepts_gzip=accepts_gzip)
            if asset is not None:
                return _asset_response(request, asset)
        if wants_page(request):
            if signed_in_user(request) is None:
                return redirect(signin_url(request.get_full_path()))
            return _page_response(request)
    return not_found(request)
