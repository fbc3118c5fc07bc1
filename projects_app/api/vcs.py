"""Version control: vcs.get, vcs.status, vcs.diff, vcs.diff.raw, vcs.apply (original) and vcs.get,
vcs.status, vcs.diff, vcs.patch (v2), over projects_app.environment."""
from django.core.validators import RegexValidator
from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    BOOLEAN,
    NUMBER,
    STRING,
    WHITESPACE,
    ApiView,
    LocatedView,
    StrictCharField,
    V2RequestView,
    array,
    located,
    opencode,
    record,
    ref,
    takes,
)
from projects_app import environment


class V2DiffQuery(serializers.Serializer):
    format = serializers.ChoiceField(choices=["json", "patch"], required=False, default="json")
    mode = serializers.ChoiceField(choices=["worktree", "default"], required=False, default="worktree")


class DiffQuery(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["git", "branch"])


class PatchBody(serializers.Serializer):
    # A patch names at least one file (the lines environment._patch_paths reads); whether it applies to the
    # tree as it is now is the service's to say (409).
    patch = StrictCharField(validators=[RegexValidator(rf"(^|\n)(--- |\+\+\+ |rename (from|to) |copy (from|to) |diff --git a/.* b/)[^{WHITESPACE}]",
                                                       message="The patch names no files")])


def _diff_text(text: str) -> HttpResponse:
    return HttpResponse(text, content_type="text/x-diff; charset=utf-8")


def status_1_18(change: dict) -> str:
    """A change's status as opencode 1.18 names it (file.status too)."""
    return "added" if change["status"] == "untracked" else change["status"]


class VcsView(ApiView):
    operation_ids = {"GET": "vcs.get"}
    mounts = {"original": "vcs"}

    @takes(directory=True)
    def get(self, request):
        return Response(environment.vcs_info(context=self.context(request)))


class VcsStatusView(ApiView):
    operation_ids = {"GET": "vcs.status"}
    mounts = {"original": "vcs/status"}

    @takes(directory=True)
    def get(self, request):
        changes = environment.vcs_status(context=self.context(request))
        return Response([{"file": c["path"], "additions": c["additions"], "deletions": c["deletions"],
                          "status": status_1_18(c)} for c in changes])


class VcsDiffView(ApiView):
    operation_ids = {"GET": "vcs.diff"}
    mounts = {"original": "vcs/diff"}

    @takes(query=DiffQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        mode = "worktree" if query["mode"] == "git" else "default"
        return Response(environment.vcs_diff(context=self.context(request), mode=mode))


class VcsDiffRawView(ApiView):
    operation_ids = {"GET": "vcs.diff.raw"}
    mounts = {"original": "vcs/diff/raw"}

    @takes(directory=True)
    def get(self, request):
        return _diff_text(environment.vcs_diff_patch(context=self.context(request)))


class VcsApplyView(ApiView):
    operation_ids = {"POST": "vcs.apply"}
    mounts = {"original": "vcs/apply"}
    answers = (409,)

    @takes(PatchBody, directory=True)
    def post(self, request):
        body = self.body(request)
        environment.vcs_patch(context=self.context(request), patch=body["patch"])
        return Response({"applied": True})


# ---- v2 -----------------------------------------------------------------------------------------------

class V2VcsView(V2RequestView):
    operation_ids = {"GET": "vcs.get"}
    mounts = {"v2": "vcs"}
    answer_schemas = {"GET": ref("VcsInfo")}

    @takes(directory=True)
    def get(self, request):
        return Response(environment.vcs_info(context=self.context(request)))


class V2VcsStatusView(LocatedView):
    operation_ids = {"GET": "vcs.status"}
    mounts = {"v2": "vcs/status"}
    answer_schemas = {"GET": located(array(record({
        "path": STRING, "additions": NUMBER, "deletions": NUMBER,
        "status": {"enum": ["added", "modified", "deleted", "untracked"]}})))}

    @takes(directory=True)
    def get(self, request):
        return self.located(request, environment.vcs_status(context=self.context(request)))


class V2VcsDiffView(LocatedView):
    operation_ids = {"GET": "vcs.diff"}
    mounts = {"v2": "vcs/diff"}
    answer_schemas = {"GET": located(opencode("GET /vcs/diff"))}
    answer_media_types = {"GET": {"text/x-diff": {"type": "string"}}}  # format=patch: the diff itself

    @takes(query=V2DiffQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        context = self.context(request)
        if query["format"] == "patch":
            return _diff_text(environment.vcs_diff_patch(context=context, mode=query["mode"]))
        return self.located(request, environment.vcs_diff(context=context, mode=query["mode"]))


class V2VcsPatchView(LocatedView):
    operation_ids = {"POST": "vcs.patch"}
    mounts = {"v2": "vcs/patch"}
    answer_schemas = {"POST": located(record({"applied": BOOLEAN, "files": array(STRING)}))}
    answers = (409,)

    @takes(PatchBody, directory=True)
    def post(self, request):
        body = self.body(request)
        return self.located(request, environment.vcs_patch(context=self.context(request), patch=body["patch"]))
