import subprocess


def git(cwd, *args) -> str:
    from tests.conftest import git as run

    return run(cwd, *args)


def register(persona, directory=None, **extra):
    body = {"type": "directory", "directory": str(directory or persona.repo), **extra}
    response = persona.post("/api/workspace", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def worktree(persona, name="feature", **extra):
    body = {"type": "worktree", "directory": str(persona.repo), "name": name, **extra}
    response = persona.post("/api/workspace", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def worktree_list(repo) -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
