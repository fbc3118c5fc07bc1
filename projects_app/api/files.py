"""Files: file.list/read/status and find.text/files/symbols (original), fs.file/tree/search/grep and
fs.read/list/find (v2).

v2 request-kind routes answer `{location, data}`; the original routes answer opencode 1.18's bare shapes."""
from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    ApiView,
    LocatedView,
    StrictCharField,
    StrictIntegerField,
    located,
    opencode,
    takes,
)
from projects_app import environment, files
from projects_app.api.vcs import status_1_18
from projects_app.lsp.service import symbol_search


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
    limit = StrictIntegerField(min_value=1, max_value=files.SEARCH_LIMIT_MAX, required=False,
                                     default=files.SEARCH_LIMIT_DEFAULT)


class GrepBody(serializers.Serializer):
    pattern = StrictCharField(max_length=10_000, help_text="A ripgrep regular expression")
    include = StrictCharField(max_length=1000, required=False)
    limit = StrictIntegerField(min_value=1, max_value=files.GREP_LIMIT_MAX, required=False,
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
    pattern = serializers.CharField(max_length=10_000, trim_whitespace=False, help_text="A ripgrep regular expression")


# ---- v2 -----------------------------------------------------------------------------------------------

class V2FileView(LocatedView):
    operation_ids = {"GET": "fs.file"}
    mounts = {"v2": "fs/file"}
    answer_schemas = {"GET": located(opencode("GET /file/content"))}
    answers = (413,)

    @takes(query=PathQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return self.located(request, files.file_read(context=self.context(request), path=query["path"]))


class V2TreeView(LocatedView):
    operation_ids = {"GET": "fs.tree"}
    mounts = {"v2": "fs/tree"}
    answer_schemas = {"GET": located(opencode("GET /file"))}

    @takes(query=TreeQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return self.located(request, files.directory_list(context=self.context(request), path=query["path"]))


class V2SearchView(LocatedView):
    operation_ids = {"POST": "fs.search"}
    mounts = {"v2": "fs/search"}
    answer_schemas = {"POST": located(opencode("GET /find/file"))}

    @takes(SearchBody, directory=True)
    def post(self, request):
        body = self.body(request)
        found = files.path_search(context=self.context(request), query=body["query"], type=body.get("type"),
                                  limit=body["limit"])
        return self.located(request, found)


class V2GrepView(LocatedView):
    operation_ids = {"POST": "fs.grep"}
    mounts = {"v2": "fs/grep"}
    answer_schemas = {"POST": located(opencode("GET /find"))}

    @takes(GrepBody, directory=True)
    def post(self, request):
        body = self.body(request)
        found = files.content_grep(context=self.context(request), pattern=body["pattern"],
                                   include=body.get("include"), limit=body["limit"])
        return self.located(request, found)


class FsListQuery(serializers.Serializer):
    path = StrictCharField(max_length=4096, required=False, default=".", trim_whitespace=False)


class FsFindQuery(serializers.Serializer):
    query = StrictCharField(max_length=1000, allow_blank=True, trim_whitespace=False)
    type = serializers.ChoiceField(choices=["file", "directory"], required=False)
    limit = serializers.IntegerField(min_value=1, max_value=files.SEARCH_LIMIT_MAX, required=False,
                                     default=files.SEARCH_LIMIT_DEFAULT)


class V2FsReadView(LocatedView):
    """The file at the path after /api/fs/read/, as it is (its bytes, its media type)."""

    operation_ids = {"GET": "fs.read"}
    mounts = {"v2": "fs/read/<path:path>"}

    @takes(directory=True)
    def get(self, request, path: str):
        data, mime = files.file_bytes(context=self.context(request), path=path)
        return HttpResponse(data, content_type=mime, headers={"X-Content-Type-Options": "nosniff"})


class V2FsListView(LocatedView):
    operation_ids = {"GET": "fs.list"}
    mounts = {"v2": "fs/list"}

    @takes(query=FsListQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        nodes = files.directory_list(context=self.context(request), path=query["path"] or ".")
        return self.located(request, files.entries_of(nodes))


class V2FsFindView(LocatedView):
    operation_ids = {"GET": "fs.find"}
    mounts = {"v2": "fs/find"}

    @takes(query=FsFindQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        found = files.path_search(context=self.context(request), query=query["query"], type=query.get("type"),
                                  limit=query["limit"])
        return self.located(request, files.found_entries(found))


# ---- original (opencode 1.18 shapes) ------------------------------------------------------------------

class FileListView(ApiView):
    operation_ids = {"GET": "file.list"}
    mounts = {"original": "file"}

    @takes(query=ListQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return Response(files.directory_list(context=self.context(request), path=query["path"] or "."))


class FileContentView(ApiView):
    operation_ids = {"GET": "file.read"}
    mounts = {"original": "file/content"}
    answers = (413,)

    @takes(query=PathQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return Response(files.file_read(context=self.context(request), path=query["path"]))


class FileStatusView(ApiView):
    operation_ids = {"GET": "file.status"}
    mounts = {"original": "file/status"}

    @takes(directory=True)
    def get(self, request):
        changes = environment.vcs_status(context=self.context(request))
        return Response([{"path": c["path"], "added": c["additions"], "removed": c["deletions"],
                          "status": status_1_18(c)} for c in changes])


class FindTextView(ApiView):
    operation_ids = {"GET": "find.text"}
    mounts = {"original": "find"}

    @takes(query=FindTextQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return Response(files.content_grep(context=self.context(request), pattern=query["pattern"]))


class FindFileView(ApiView):
    operation_ids = {"GET": "find.files"}
    mounts = {"original": "find/file"}

    @takes(query=FindFileQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        kind = query.get("type") or ("file" if query["dirs"] == "false" else None)
        return Response(files.path_search(context=self.context(request), query=query["query"], type=kind,
                                          limit=query["limit"]))


class FindSymbolView(ApiView):
    operation_ids = {"GET": "find.symbols"}
    mounts = {"original": "find/symbol"}

    @takes(query=FindSymbolQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return Response(symbol_search(context=self.context(request), query=query["query"]))
