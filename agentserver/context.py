"""The runtime context of a request or a run: who acts, in which directory, in which git worktree and
project, optionally in which v2 workspace. A plain value: projects_app.contexts resolves it from a request
(and creates the project row it names); everything that runs for a user takes one."""
import os
from dataclasses import dataclass

from agentserver import paths


@dataclass(frozen=True)
class RuntimeContext:
    user: object
    directory: str
    worktree: str
    project_id: str
    vcs: str | None
    workspace_id: str | None = None

    @property
    def path(self) -> str:
        """The directory relative to the worktree ("" at its top)."""
        if self.vcs is None:
            return ""
        rel = os.path.relpath(self.directory, self.worktree)
        return "" if rel == "." else rel

    @property
    def boundary(self) -> str:
        """The tree agent tools may touch without asking: the git worktree, or the directory itself."""
        return self.worktree if self.vcs else self.directory

    def location(self) -> dict:
        """The `location` that v2 request-kind responses carry beside their `data`."""
        info = {"directory": self.directory, "project": {"id": self.project_id, "directory": self.boundary}}
        if self.workspace_id:
            info["workspaceID"] = self.workspace_id
        return info

    def directories_up(self) -> list[str]:
        """The directory, its parent, … up to and including the boundary (nearest first). Project files
        (config, instructions, commands, skills) are looked up along this chain."""
        top = self.boundary
        chain = [self.directory]
        current = self.directory
        while current != top and paths.is_within(current, top):
            parent = os.path.dirname(current)
            if parent == current:
                break
            chain.append(parent)
            current = parent
        return chain
