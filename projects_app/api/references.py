"""reference.list (v2): the references the config names (projects_app.references)."""
from agentserver.http.api import LocatedView, takes
from projects_app.references import reference_list


class ReferenceView(LocatedView):
    operation_ids = {"GET": "reference.list"}
    mounts = {"v2": "reference"}

    @takes(directory=True)
    def get(self, request):
        return self.located(request, reference_list(context=self.context(request)))
