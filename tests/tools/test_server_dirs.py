"""The agent's tools and the server's own directories (issue 29): with the data dir inside the session's
root (a checkout's `.data` under a root of `$HOME/src`), no tool reads, lists or finds anything in it, by
path, through a symlink or from a shell."""
import pytest

from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool

SECRET = "server-secret-NEEDLE-51c2"


@pytest.fixture
def data(ws, settings):
    """The server's data dir (and shared dir) at <root>/agentserver/.data, holding a secret key."""
    data = ws.root / "agentserver" / ".data"
    data.mkdir(parents=True)
    (data / "secret_key").write_text(SECRET + "\n")
    settings.DATA_DIR = data
    settings.SHARED_DIR = data
    return data


async def test_the_read_tool_refuses_the_data_dir(ws, data):
    for path in (data / "secret_key", data):
        with pytest.raises(ToolError, match="outside the directories you are allowed to use"):
            await run_tool(ws, "read", {"filePath": str(path)})


async def test_a_symlink_into_the_data_dir_is_refused(ws, data):
    (ws.repo / "key").symlink_to(data / "secret_key")
    for tool, args in (("read", {"filePath": str(ws.repo / "key")}),
                       ("write", {"filePath": str(ws.repo / "key"), "content": "x"}),
                       ("edit", {"filePath": str(ws.repo / "key"), "oldString": "server", "newString": "x"})):
        with pytest.raises(ToolError, match="outside the directories"):
            await run_tool(ws, tool, args)
    assert (data / "secret_key").read_text() == SECRET + "\n"


async def test_bash_cannot_read_it(ws, data):
    with pytest.raises(ToolError, match="outside the directories"):
        await run_tool(ws, "bash", {"command": f"cat {data / 'secret_key'}"})
    with pytest.raises(ToolError, match="outside the directories"):
        await run_tool(ws, "bash", {"command": "ls", "workdir": str(data)})
    # A path the command computes is not seen by the check; the sandbox shows an empty directory there.
    result = await run_tool(ws, "bash", {"command": "cd .. && cat agentserver/.$(echo data)/secret_key; "
                                                    "ls -A agentserver/.data; true"})
    assert SECRET not in result.output and "No such file or directory" in result.output


@pytest.mark.parametrize("sandbox", ["bwrap", "off"])
async def test_search_tools_leave_it_out(ws, data, settings, sandbox):
    settings.SANDBOX_MODE = sandbox  # unconfined, ripgrep sees the whole data dir
    (ws.root / "notes.txt").write_text(f"{SECRET} in a note\n")
    # Her own HOME is mounted in her sandbox inside the (otherwise empty) data dir.
    own = data / "users" / str(ws.user.pk) / "home"
    own.mkdir(parents=True)
    (own / "needle.txt").write_text(f"{SECRET} at home\n")
    grep = await run_tool(ws, "grep", {"pattern": SECRET, "path": str(ws.root)})
    assert str(ws.root / "notes.txt") in grep.output and ".data" not in grep.output
    found = await run_tool(ws, "glob", {"pattern": "**/*.txt", "path": str(ws.root)})
    assert found.output.splitlines() == [str(ws.root / "notes.txt")]
    listed = await run_tool(ws, "list", {"path": str(ws.root)})
    assert ".data" not in listed.output and "notes.txt" in listed.output
