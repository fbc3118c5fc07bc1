import pytest

from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool


async def test_it_reads_numbered_lines_in_the_1_18_envelope(ws):
    result = await run_tool(ws, "read", {"filePath": str(ws.repo / "src/app.py")})
    assert result.output == (f"<path>{ws.repo / 'src/app.py'}</path>\n<type>file</type>\n<content>\n"
                             "1: def main():\n2:     return 1\n\n(End of file - total 2 lines)\n</content>")
    assert result.title == "src/app.py"


async def test_it_honours_offset_and_limit(ws):
    (ws.repo / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await run_tool(ws, "read", {"filePath": str(ws.repo / "long.txt"), "offset": 3, "limit": 2})
    assert "3: line 3\n4: line 4" in result.output
    assert "(Showing lines 3-4 of 10. Use offset=5 to continue.)" in result.output
    assert result.metadata["truncated"] is True


async def test_it_cuts_long_lines_at_2000_characters(ws):
    (ws.repo / "wide.txt").write_text("x" * 2500 + "\n")
    result = await run_tool(ws, "read", {"filePath": str(ws.repo / "wide.txt")})
    assert "1: " + "x" * 2000 + "... (line truncated to 2000 chars)" in result.output


async def test_it_lists_a_directory(ws):
    result = await run_tool(ws, "read", {"filePath": str(ws.repo)})
    assert "<type>directory</type>" in result.output
    assert "src/" in result.output and "README.md" in result.output


async def test_it_suggests_near_names_for_a_missing_file(ws):
    with pytest.raises(ToolError, match="File not found: .*README.m\n\nDid you mean one of these"):
        await run_tool(ws, "read", {"filePath": str(ws.repo / "README.m")})


async def test_it_refuses_binary_files(ws):
    (ws.repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="Cannot read binary file"):
        await run_tool(ws, "read", {"filePath": str(ws.repo / "blob.bin")})
