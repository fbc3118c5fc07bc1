"""lsp.status on both mounts: the language servers this directory's edits started, with their root and state."""
from rest_framework.response import Response

from agentserver.http.api import ApiView, LocatedView, located, opencode, takes
from projects_app.lsp.service import lsp_status


class LspView(ApiView):
    operation_ids = {"GET": "lsp.status"}
    mounts = {"original": "lsp"}

    @takes(directory=True)
    def get(self, request):
        return Response(lsp_status(context=self.context(request)))


class V2LspView(LocatedView):
    operation_ids = {"GET": "lsp.status"}
    mounts = {"v2": "lsp"}
    answer_schemas = {"GET": located(opencode("GET /lsp"))}

    @takes(directory=True)
    def get(self, request):
        return self.located(request, lsp_status(context=self.context(request)))
