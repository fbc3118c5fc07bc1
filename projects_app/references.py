"""reference.list: the config's `reference` map (name → `{type: "local", path}` or `{type: "git", repository}`)
as opencode's ReferenceInfo records."""
from __future__ import annotations

import os

from agentserver.context import RuntimeContext
from projects_app.config import effective_config


def reference_list(*, context: RuntimeContext) -> list[dict]:
    configured = effective_config(context).get("reference")
    if not isinstance(configured, dict):
        return []
    out = []
    for name, source in configured.items():
        if not isinstance(source, dict) or source.get("type") not in ("local", "git"):
            continue
        if source["type"] == "local" and isinstance(source.get("path"), str):
            path = os.path.normpath(os.path.join(context.worktree if context.vcs else context.directory,
                                                 os.path.expanduser(source["path"])))
        elif source["type"] == "git" and isinstance(source.get("repository"), str):
            path = source["repository"]
        else:
            continue
        info = {"name": name, "path": path, "source": source}
        for key in ("description", "hidden"):
            if key in source:
                info[key] = source[key]
        out.append(info)
    return out
