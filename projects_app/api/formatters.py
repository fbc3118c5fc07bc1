"""formatter.status on both mounts: the directory's formatters and whether each would run after an edit."""
from rest_framework.response import Response

from agentserver.http.api import ApiView, LocatedView, located, opencode, takes
from projects_app.formatters import formatter_status


class FormatterView(ApiView):
    operation_ids = {"GET": "formatter.status"}
    mounts = {"original": "formatter"}

    @takes(directory=True)
    def get(self, request):
        return Response(formatter_status(context=self.context(request)))


class V2FormatterView(LocatedView):
    operation_ids = {"GET": "formatter.status"}
    mounts = {"v2": "formatter"}
    answer_schemas = {"GET": located(opencode("GET /formatter"))}

    @takes(directory=True)
    def get(self, request):
        return self.located(request, formatter_status(context=self.context(request)))
