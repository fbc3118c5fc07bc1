"""In-process, as the runner calls them: apply_patch (the tool GPT-family models get instead of edit/write)
reports the errors of the files it wrote; disposing stops an instance's servers, or all of a user's."""
import os

import pytest
from asgiref.sync import sync_to_async

from tests.lsp.helpers import TYPE_ERROR
from tests.tools.harness import make_workspace, run_tool


@pytest.fixture
def ws(transactional_db, tmp_path):
    from projects_app.lsp.service import lsp_dispose

    workspace = make_workspace("walter", tmp_path)
    yield workspace
    lsp_dispose(user=workspace.user, directory=str(workspace.repo))


async def test_apply_patch_reports_the_errors_of_the_files_it_wrote(ws):
    patch = ("*** Begin Patch\n*** Add File: patched.py\n" + "".join(f"+{line}\n" for line in TYPE_ERROR.splitlines())
             + "*** Delete File: README.md\n*** End Patch")
    result = await run_tool(ws, "apply_patch", {"patchText": patch})
    path = os.path.realpath(ws.repo / "patched.py")
    assert result.output.startswith(
        "Success. Updated the following files:\nA patched.py\nD README.md\n\n"
        f'LSP errors detected in this file, please fix:\n<diagnostics file="{path}">\nERROR [5:15] Argument of type')
    assert [d["severity"] for d in result.metadata["diagnostics"][path]] == [1]


async def test_the_servers_an_instance_used_stop_when_it_is_disposed(ws):
    from projects_app.lsp.service import lsp_dispose, lsp_status

    await run_tool(ws, "write", {"filePath": str(ws.repo / "a.py"), "content": "x: int = 1\n"})
    status = await sync_to_async(lsp_status)(context=ws.context)
    assert [(s["id"], s["root"], s["status"]) for s in status] == [("pyright", "", "connected")]
    await sync_to_async(lsp_dispose)(user=ws.user, directory=str(ws.repo))
    assert await sync_to_async(lsp_status)(context=ws.context) == []


async def test_disposing_without_a_directory_stops_all_of_the_users_servers(ws):
    from projects_app.contexts import context_for_directory
    from projects_app.lsp.service import edit_diagnostics, lsp_dispose, lsp_status

    (ws.root / "second").mkdir()
    other = await sync_to_async(context_for_directory)(ws.user, str(ws.root / "second"))
    await run_tool(ws, "write", {"filePath": str(ws.repo / "a.py"), "content": "x: int = 1\n"})
    (ws.root / "second" / "b.py").write_text("y: int = 2\n")
    await edit_diagnostics(context=other, config={}, files=[str(ws.root / "second" / "b.py")])
    assert len(await sync_to_async(lsp_status)(context=ws.context)) == 1
    assert len(await sync_to_async(lsp_status)(context=other)) == 1
    await sync_to_async(lsp_dispose)(user=ws.user, directory=None)
    assert await sync_to_async(lsp_status)(context=ws.context) == []
    assert await sync_to_async(lsp_status)(context=other) == []
