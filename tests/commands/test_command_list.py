"""GET /command and the v2 /api/command, /api/skill: built-ins, config commands, .opencode files, skills."""
from projects_app.models import UserConfig


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def set_config(persona, **data):
    config, _ = UserConfig.objects.get_or_create(user=persona.user)
    config.data = {**(config.data or {}), **data}
    config.save(update_fields=["data"])


def test_it_lists_builtins_config_files_and_skills(alice):
    set_config(alice, command={"greet": {"template": "Say hello to $1", "description": "greets",
                                         "agent": "plan", "model": "fake/fake-model"}})
    write(alice.repo / ".opencode/command/deploy.md",
          "---\ndescription: deploy it\nagent: build\nsubtask: true\n---\nDeploy $ARGUMENTS now\n")
    write(alice.repo / ".opencode/commands/nested/child.md", "Child body")
    write(alice.repo / ".opencode/skill/tidy/SKILL.md", "---\nname: tidy\ndescription: tidy up\n---\nTidy steps\n")
    response = alice.get("/command", params={"directory": str(alice.repo)})
    assert response.status_code == 200
    commands = {c["name"]: c for c in response.json()}
    init = commands["init"]
    assert init["template"].startswith("Create or update `AGENTS.md` for this repository.")
    assert init["source"] == "command" and init["hints"] == ["$ARGUMENTS"]
    assert init["description"] == "guided AGENTS.md setup"
    assert commands["review"]["subtask"] is True
    assert commands["greet"] == {"name": "greet", "description": "greets", "agent": "plan",
                                 "model": "fake/fake-model", "source": "command", "template": "Say hello to $1",
                                 "hints": ["$1"]}
    assert commands["deploy"] == {"name": "deploy", "description": "deploy it", "agent": "build",
                                  "source": "command", "template": "Deploy $ARGUMENTS now", "subtask": True,
                                  "hints": ["$ARGUMENTS"]}
    assert commands["nested/child"]["template"] == "Child body"
    skill = commands["tidy"]
    assert skill["source"] == "skill" and skill["description"] == "tidy up" and skill["hints"] == []
    assert skill["template"].startswith("Tidy steps")
    assert list(commands)[:2] == ["init", "review"]


def test_v2_command_and_skill_lists_carry_the_location(alice):
    write(alice.repo / ".claude/skills/lint/SKILL.md", "---\nname: lint\ndescription: run linters\n---\nLint it\n")
    set_config(alice, command={"greet": {"template": "Hi", "model": "fake/fake-model"}})
    body = alice.get("/api/command", params={"directory": str(alice.repo)}).json()
    assert body["location"]["directory"] == str(alice.repo)
    names = {c["name"]: c for c in body["data"]}
    assert set(names["init"]) <= {"name", "template", "description", "agent", "model", "subtask"}
    assert names["greet"]["model"] == {"id": "fake-model", "providerID": "fake"}  # opencode's ModelRef
    skills = alice.get("/api/skill", params={"directory": str(alice.repo)}).json()
    assert skills["location"]["project"]["directory"] == str(alice.repo)
    lint = next(s for s in skills["data"] if s["name"] == "lint")
    assert lint["description"] == "run linters" and lint["content"].startswith("Lint it")
    assert lint["location"].endswith(".claude/skills/lint/SKILL.md")
    original = alice.get("/skill", params={"directory": str(alice.repo)}).json()
    assert [s["name"] for s in original] == [s["name"] for s in skills["data"]]


def test_anonymous_callers_and_foreign_directories_are_refused(alice, bob, anon):
    assert anon.get("/command").status_code == 401
    assert anon.get("/api/skill").status_code == 401
    assert anon.get("/skill").status_code == 401
    assert bob.get("/command", params={"directory": str(alice.repo)}).status_code == 403
