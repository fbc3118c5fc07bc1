"""lsp.status lists the servers the directory's edits started; find.symbol asks them for workspace symbols;
instance.dispose stops them (no process is left); each user sees only their own; `lsp: false` starts none."""
import os

import pytest

from tests.fakes.fixtures import configure_fake_provider
from tests.lsp.helpers import (FIXED, TYPE_ERROR, alive, language_servers_of, new_session, run_tool_call, set_config,
                               wait_for)

pytestmark = pytest.mark.long_running(seconds=30)  # scheduled before shorter files (tests/conftest.py)


def start_server(persona, llm, name="totals.py", content=FIXED) -> str:
    path = os.path.realpath(persona.repo / name)
    run_tool_call(persona, llm, new_session(persona), "write", {"filePath": path, "content": content})
    return path


def test_lsp_status_shows_the_running_server_with_its_root(alice, llm):
    params = {"directory": str(alice.repo)}
    assert alice.get("/lsp", params=params).json() == []
    start_server(alice, llm)
    # The root is relative to the directory asked about, as opencode 1.18 gives it.
    expected = [{"id": "pyright", "name": "pyright", "root": "", "status": "connected"}]
    assert alice.get("/lsp", params=params).json() == expected
    v2 = alice.get("/api/lsp", params=params).json()
    assert v2["data"] == expected and v2["location"]["directory"] == os.path.realpath(alice.repo)


def test_a_server_rooted_in_a_sub_project_is_listed_relative_to_the_directory(alice, llm):
    (alice.repo / "pkg").mkdir()
    (alice.repo / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    start_server(alice, llm, name="pkg/mod.py")
    status = alice.get("/lsp", params={"directory": str(alice.repo)}).json()
    assert status == [{"id": "pyright", "name": "pyright", "root": "pkg", "status": "connected"}]


def test_find_symbol_finds_a_function_by_name(alice, llm):
    path = start_server(alice, llm)
    found = alice.get("/find/symbol", params={"directory": str(alice.repo), "query": "compute_total"}).json()
    match = [s for s in found if s["name"] == "compute_total"]
    assert len(match) == 1
    assert match[0]["kind"] == 12  # Function
    assert match[0]["location"]["uri"] == f"file://{path}"
    assert match[0]["location"]["range"]["start"] == {"line": 0, "character": 4}
    nothing = alice.get("/find/symbol", params={"directory": str(alice.repo), "query": "no_such_name_xyz"})
    assert nothing.status_code == 200 and nothing.json() == []


def test_find_symbol_finds_nothing_before_any_server_runs(alice):
    response = alice.get("/find/symbol", params={"directory": str(alice.repo), "query": "compute_total"})
    assert response.status_code == 200 and response.json() == []


def test_instance_dispose_leaves_no_language_server_process(alice, llm, server):
    before = language_servers_of(server)
    start_server(alice, llm, content=TYPE_ERROR)
    mine = language_servers_of(server) - before
    assert len(mine) == 1
    response = alice.post("/instance/dispose", params={"directory": str(alice.repo)})
    assert response.status_code == 200 and response.json() is True
    assert wait_for(lambda: not alive(mine), timeout=15)
    assert alice.get("/lsp", params={"directory": str(alice.repo)}).json() == []


def test_global_dispose_stops_every_language_server_of_the_caller_only(alice, bob, llm, server):
    before = language_servers_of(server)
    start_server(alice, llm)
    alices = language_servers_of(server) - before
    configure_fake_provider(bob, llm)
    start_server(bob, llm)
    bobs = language_servers_of(server) - before - alices
    assert alices and bobs  # (a server's wrappers in the sandbox carry its command line too)
    try:
        response = alice.post("/global/dispose")
        assert response.status_code == 200 and response.json() is True
        assert wait_for(lambda: not alive(alices), timeout=15)
        assert alive(bobs)
        assert bob.get("/lsp", params={"directory": str(bob.repo)}).json()[0]["id"] == "pyright"
    finally:
        bob.post("/instance/dispose", params={"directory": str(bob.repo)})


def test_a_disposed_instance_starts_its_server_again_on_the_next_edit(alice, llm, server):
    before = language_servers_of(server)
    start_server(alice, llm)
    first = language_servers_of(server) - before
    alice.post("/instance/dispose", params={"directory": str(alice.repo)})
    start_server(alice, llm, name="again.py", content=TYPE_ERROR)
    assert [s["id"] for s in alice.get("/lsp", params={"directory": str(alice.repo)}).json()] == ["pyright"]
    second = language_servers_of(server) - before
    assert len(second) == 1 and not second & first


def test_bob_cannot_see_alices_servers_or_symbols(alice, bob, llm, server):
    before = language_servers_of(server)
    start_server(alice, llm)
    alices = language_servers_of(server) - before
    assert bob.get("/lsp", params={"directory": str(bob.repo)}).json() == []
    assert bob.get("/find/symbol", params={"directory": str(bob.repo), "query": "compute_total"}).json() == []
    for path in ("/lsp", "/api/lsp"):
        response = bob.get(path, params={"directory": str(alice.repo)})
        assert response.status_code == 403, response.text
    response = bob.get("/find/symbol", params={"directory": str(alice.repo), "query": "compute_total"})
    assert response.status_code == 403
    bob.post("/instance/dispose", params={"directory": str(bob.repo)})
    assert alive(alices) == alices and len(alices) == 1  # bob's dispose leaves alice's server running


def test_lsp_false_starts_no_server(alice, llm, server):
    set_config(alice, lsp=False)
    before = language_servers_of(server)
    session_id = new_session(alice)
    path = os.path.realpath(alice.repo / "totals.py")
    part = run_tool_call(alice, llm, session_id, "write", {"filePath": path, "content": TYPE_ERROR})
    assert part["state"]["output"] == "Wrote file successfully."
    assert part["state"]["metadata"]["diagnostics"] == {}
    assert alice.get("/lsp", params={"directory": str(alice.repo)}).json() == []
    assert language_servers_of(server) - before == set()


def test_a_disabled_built_in_server_is_not_started(alice, llm):
    set_config(alice, lsp={"pyright": {"disabled": True}})
    part = run_tool_call(alice, llm, new_session(alice), "write",
                         {"filePath": str(alice.repo / "totals.py"), "content": TYPE_ERROR})
    assert part["state"]["metadata"]["diagnostics"] == {}
    assert alice.get("/lsp", params={"directory": str(alice.repo)}).json() == []


def test_a_configured_server_whose_program_is_missing_is_skipped(alice, llm):
    set_config(alice, lsp={"pyright": {"disabled": True},
                           "mystery": {"command": ["no-such-language-server-xyz", "--stdio"],
                                       "extensions": [".py"]}})
    part = run_tool_call(alice, llm, new_session(alice), "write",
                         {"filePath": str(alice.repo / "totals.py"), "content": TYPE_ERROR})
    assert part["state"]["output"] == "Wrote file successfully."
    assert alice.get("/lsp", params={"directory": str(alice.repo)}).json() == []


def test_bad_input_on_the_routes(alice):
    missing = alice.get("/find/symbol", params={"directory": str(alice.repo)})
    assert missing.status_code == 400 and missing.json()["name"] == "BadRequestError"
    too_long = alice.get("/find/symbol", params={"directory": str(alice.repo), "query": "x" * 1001})
    assert too_long.status_code == 400
    for path in ("/lsp", "/api/lsp", "/find/symbol"):
        outside = alice.get(path, params={"directory": "/nonexistent-dir-xyz", "query": "a"})
        assert 400 <= outside.status_code < 500, (path, outside.status_code)
    anonymous = alice.client.get("/lsp", params={"directory": str(alice.repo)}, headers={"Authorization": ""})
    assert anonymous.status_code == 401
