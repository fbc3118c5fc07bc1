"""fs.*, vcs.status/diff/patch, formatter.status, lsp.status and the TUI's extra routes.

v2 request-kind routes answer `{location, data}`; the original routes answer opencode 1.18's bare shapes."""
from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.response import Response

from agentserver import context as runtime
from agentserver.api import ApiView, V2RequestView, parse, parse_query
from projects_app import environment, files, tui
from projects_app.api_workspaces import StrictCharField
from projects_app.lsp.service import symbol_search


class LocatedView(V2RequestView):
    """v2 view that also takes the TUI's `location[directory]` / `location[workspace]` query form."""

    def context(self, request) -> runtime.RuntimeContext:
        directory = request.GET.get("location[directory]")
        workspace = request.GET.get("location[workspace]")
        if request.GET.get("directory") or not (directory or workspace):
            return super().context(request)
        query = {k: v for k, v in (("directory", directory), ("workspace", workspace)) if v}
        return runtime.from_request(request, allow_workspace=True, query=query)

    def located(self, request, data) -> Response:
        return Response({"location": self.context(request).location(), "data": data})


def _diff_text(text: str) -> HttpResponse:
    return HttpResponse(text, content_type="text/x-diff; charset=utf-8")


# ---- inputs -------------------------------------------------------------------------------------------

class PathQuery(serializers.Serializer):
    path = serializers.CharField(max_length=4096, trim_whitespace=False)


class ListQuery(serializers.Serializer):
    # opencode's web app asks for the directory's top as `path=` (empty), which opencode answers.
    path = serializers.CharField(max_length=4096, allow_blank=True, trim_whitespace=False)


class TreeQuery(serializers.Serializer):
    path = serializers.CharField(max_length=4096, required=False, default=".", trim_whitespace=False)


class SearchBody(serializers.Serializer):
    query = StrictCharField(max_length=1000, allow_blank=True, trim_whitespace=False)
    type = serializers.ChoiceField(choices=["file", "directory"], required=False)
    limit = serializers.IntegerField(min_value=1, max_value=files.SEARCH_LIMIT_MAX, required=False,
                                     default=files.SEARCH_LIMIT_DEFAULT)


class GrepBody(serializers.Serializer):
    pattern = StrictCharField(max_length=10_000, trim_whitespace=False)
    include = StrictCharField(max_length=1000, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=files.GREP_LIMIT_MAX, required=False,
                                     default=files.GREP_LIMIT_DEFAULT)


class FindFileQuery(serializers.Serializer):
    query = serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False)
    dirs = serializers.ChoiceField(choices=["true", "false"], required=False, default="true")
    type = serializers.ChoiceField(choices=["file", "directory"], required=False)
    limit = serializers.IntegerField(min_value=1, max_value=files.SEARCH_LIMIT_MAX, required=False,
                                     default=files.SEARCH_LIMIT_DEFAULT)


class FindSymbolQuery(serializers.Serializer):
    query = serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False)


class FindTextQuery(serializers.Serializer):
    pattern = serializers.CharField(max_length=10_000, trim_whitespace=False)


class V2DiffQuery(serializers.Serializer):
    format = serializers.ChoiceField(choices=["json", "patch"], required=False, default="json")
    mode = serializers.ChoiceField(choices=["worktree", "default"], required=False, default="worktree")


class DiffQuery(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["git", "branch"])


class PatchBody(serializers.Serializer):
    patch = StrictCharField(trim_whitespace=False)


# ---- v2 -----------------------------------------------------------------------------------------------

class V2FileView(LocatedView):
    operation_ids = {"GET": "fs.file"}

    def get(self, request):
        query = parse_query(PathQuery, request)
        return self.located(request, files.file_read(context=self.context(request), path=query["path"]))


class V2TreeView(LocatedView):
    operation_ids = {"GET": "fs.tree"}

    def get(self, request):
        query = parse_query(TreeQuery, request)
        return self.located(request, files.directory_list(context=self.context(request), path=query["path"]))


class V2SearchView(LocatedView):
    operation_ids = {"POST": "fs.search"}

    def post(self, request):
        body = parse(SearchBody, request.data)
        found = files.path_search(context=self.context(request), query=body["query"], type=body.get("type"),
                                  limit=body["limit"])
        return self.located(request, found)


class V2GrepView(LocatedView):
    operation_ids = {"POST": "fs.grep"}

    def post(self, request):
        body = parse(GrepBody, request.data)
        found = files.content_grep(context=self.context(request), pattern=body["pattern"],
                                   include=body.get("include"), limit=body["limit"])
        return self.located(request, found)


class V2VcsStatusView(LocatedView):
    operation_ids = {"GET": "vcs.status"}

    def get(self, request):
        return self.located(request, environment.vcs_status(context=self.context(request)))


class V2VcsDiffView(LocatedView):
    operation_ids = {"GET": "vcs.diff"}

    def get(self, request):
        query = parse_query(V2DiffQuery, request)
        context = self.context(request)
        if query["format"] == "patch":
            return _diff_text(environment.vcs_diff_patch(context=context, mode=query["mode"]))
        return self.located(request, environment.vcs_diff(context=context, mode=query["mode"]))


class V2VcsPatchView(LocatedView):
    operation_ids = {"POST": "vcs.patch"}

    def post(self, request):
        body = parse(PatchBody, request.data)
        return self.located(request, environment.vcs_patch(context=self.context(request), patch=body["patch"]))


class V2FormatterView(LocatedView):
    operation_ids = {"GET": "formatter.status"}

    def get(self, request):
        return self.located(request, tui.formatter_status(context=self.context(request)))


class V2LspView(LocatedView):
    operation_ids = {"GET": "lsp.status"}

    def get(self, request):
        return self.located(request, tui.lsp_status(context=self.context(request)))


class LocationView(LocatedView):
    operation_ids = {"GET": "location.get"}

    def get(self, request):
        return Response(self.context(request).location())


class ReferenceView(LocatedView):
    operation_ids = {"GET": "reference.list"}

    def get(self, request):
        return self.located(request, tui.references(context=self.context(request)))


class IntegrationView(LocatedView):
    operation_ids = {"GET": "integration.list"}

    def get(self, request):
        return self.located(request, tui.integrations(context=self.context(request)))


# ---- original (opencode 1.18 shapes) ------------------------------------------------------------------

class FileListView(ApiView):
    operation_ids = {"GET": "file.list"}

    def get(self, request):
        query = parse_query(ListQuery, request)
        return Response(files.directory_list(context=self.context(request), path=query["path"] or "."))


class FileContentView(ApiView):
    operation_ids = {"GET": "file.read"}

    def get(self, request):
        query = parse_query(PathQuery, request)
        return Response(files.file_read(context=self.context(request), path=query["path"]))


def _status_1_18(change: dict) -> str:
    return "added" if change["status"] == "untracked" else change["status"]


class FileStatusView(ApiView):
    operation_ids = {"GET": "file.status"}

    def get(self, request):
        changes = environment.vcs_status(context=self.context(request))
        return Response([{"path": c["path"], "added": c["additions"], "removed": c["deletions"],
                          "status": _status_1_18(c)} for c in changes])


class FindTextView(ApiView):
    operation_ids = {"GET": "find.text"}

    def get(self, request):
        query = parse_query(FindTextQuery, request)
        return Response(files.content_grep(context=self.context(request), pattern=query["pattern"]))


class FindFileView(ApiView):
    operation_ids = {"GET": "find.files"}

    def get(self, request):
        query = parse_query(FindFileQuery, request)
        kind = query.get("type") or ("file" if query["dirs"] == "false" else None)
        return Response(files.path_search(context=self.context(request), query=query["query"], type=kind,
                                          limit=query["limit"]))


class FindSymbolView(ApiView):
    operation_ids = {"GET": "find.symbols"}

    def get(self, request):
        query = parse_query(FindSymbolQuery, request)
        return Response(symbol_search(context=self.context(request), query=query["query"]))


class VcsStatusView(ApiView):
    operation_ids = {"GET": "vcs.status"}

    def get(self, request):
        changes = environment.vcs_status(context=self.context(request))
        return Response([{"file": c["path"], "additions": c["additions"], "deletions": c["deletions"],
                          "status": _status_1_18(c)} for c in changes])


class VcsDiffView(ApiView):
    operation_ids = {"GET": "vcs.diff"}

    def get(self, request):
        query = parse_query(DiffQuery, request)
        mode = "worktree" if query["mode"] == "git" else "default"
        return Response(environment.vcs_diff(context=self.context(request), mode=mode))


class VcsDiffRawView(ApiView):
    operation_ids = {"GET": "vcs.diff.raw"}

    def get(self, request):
        return _diff_text(environment.vcs_diff_patch(context=self.context(request)))


class VcsApplyView(ApiView):
    operation_ids = {"POST": "vcs.apply"}

    def post(self, request):
        body = parse(PatchBody, request.data)
        environment.vcs_patch(context=self.context(request), patch=body["patch"])
        return Response({"applied": True})


class FormatterView(ApiView):
    operation_ids = {"GET": "formatter.status"}

    def get(self, request):
        return Response(tui.formatter_status(context=self.context(request)))


class LspView(ApiView):
    operation_ids = {"GET": "lsp.status"}

    def get(self, request):
        return Response(tui.lsp_status(context=self.context(request)))


class CapabilitiesView(ApiView):
    operation_ids = {"GET": "experimental.capabilities.get"}

    def get(self, request):
        return Response(tui.capabilities())


class ConsoleView(ApiView):
    operation_ids = {"GET": "experimental.console.get"}

    def get(self, request):
        return Response(tui.console_state())


class ProjectDirectoriesView(ApiView):
    operation_ids = {"GET": "project.directories"}

    def get(self, request, projectID: str):
        if len(projectID) > 128:
            from agentserver.errors import BadRequest

            raise BadRequest(f"Invalid project id: {projectID[:16]}…", kind="Params")
        return Response(tui.project_directories(user=request.user, project_id=projectID))


class ResourceView(ApiView):
    operation_ids = {"GET": "experimental.resource.list"}

    def get(self, request):
        return Response(tui.mcp_resources(context=self.context(request)))


class ExperimentalWorkspaceView(ApiView):
    operation_ids = {"GET": "experimental.workspace.list"}

    def get(self, request):
        return Response(tui.project_workspaces(context=self.context(request)))


class ExperimentalWorkspaceStatusView(ApiView):
    operation_ids = {"GET": "experimental.workspace.status"}

    def get(self, request):
        return Response(tui.project_workspace_status(context=self.context(request)))
