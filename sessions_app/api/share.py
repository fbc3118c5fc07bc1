"""The public share page and its JSON: the only session routes that answer anonymously. Every request
looks the Share row up, so an unshared or deleted session is a 404 at once."""
from django.shortcuts import render
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from agentserver.errors import NotFound
from agentserver.http.api import NUMBER, OBJECT, STRING, array, record
from sessions_app.store import sharing


class _PublicView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]

    def document(self, shareID: str) -> dict:
        if not isinstance(shareID, str) or len(shareID) > 64:
            raise NotFound("Share not found")
        return sharing.share_document(session=sharing.shared_session(slug=shareID))


class SharePageView(_PublicView):
    operation_ids = {"GET": "share.page"}
    mounts = {"original": "share/<str:shareID>"}

    def get(self, request, shareID: str):
        document = self.document(shareID)
        if request.GET.get("format") == "json":
            return Response(document, headers=_no_index())
        response = render(request, "sessions_app/share.html", {"doc": document, "messages": _for_template(document)})
        for key, value in _no_index().items():
            response[key] = value
        return response


# sharing.share_document: the conversation, redacted, without the assistant's paths (they name the owner's home).
SHARED = record({
    "session": record({"id": STRING, "slug": STRING, "title": STRING, "version": STRING,
                       "time": record({"created": NUMBER, "updated": NUMBER}), "cost": NUMBER, "tokens": OBJECT},
                      {"summary": OBJECT}),
    "messages": array(record({
        "info": record({"id": STRING, "sessionID": STRING, "role": {"enum": ["user", "assistant"]}}, closed=False),
        "parts": array(OBJECT)})),
})


class ShareDataView(_PublicView):
    operation_ids = {"GET": "share.data"}
    mounts = {"original": "share/<str:shareID>/data"}
    answer_schemas = {"GET": SHARED}

    def get(self, request, shareID: str):
        return Response(self.document(shareID), headers=_no_index())


def _no_index() -> dict:
    return {"X-Robots-Tag": "noindex", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _for_template(document: dict) -> list[dict]:
    """Flatten parts into what the page prints: text, reasoning, tool calls with their output, files."""
    out = []
    for item in document["messages"]:
        info, blocks = item["info"], []
        for part in item["parts"]:
            kind = part.get("type")
            if kind in ("text", "reasoning") and not part.get("synthetic"):
                blocks.append({"kind": kind, "text": part.get("text", "")})
            elif kind == "tool":
                state = part.get("state") or {}
                blocks.append({"kind": "tool", "tool": part.get("tool", ""), "status": state.get("status", ""),
                               "title": state.get("title") or "", "input": state.get("input"),
                               "output": state.get("output") or state.get("error") or ""})
            elif kind == "file":
                blocks.append({"kind": "file", "text": part.get("filename") or part.get("url", "")[:200]})
        error = info.get("error") or {}
        out.append({"role": info.get("role"), "agent": info.get("agent") or info.get("mode"),
                    "model": info.get("modelID") or (info.get("model") or {}).get("modelID"),
                    "error": (error.get("data") or {}).get("message") or error.get("name"), "blocks": blocks})
    return out
