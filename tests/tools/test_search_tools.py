from tests.tools.harness import run_tool


async def test_glob_lists_matching_files_as_absolute_paths(ws):
    result = await run_tool(ws, "glob", {"pattern": "**/*.py"})
    assert result.output == str(ws.repo / "src/app.py")
    assert result.metadata == {"count": 1, "truncated": False}


async def test_glob_says_when_nothing_matches(ws):
    result = await run_tool(ws, "glob", {"pattern": "*.nothing"})
    assert result.output == "No files found"


async def test_grep_reports_files_and_line_numbers(ws):
    result = await run_tool(ws, "grep", {"pattern": "return \\d", "include": "*.py"})
    assert result.output == f"Found 1 matches\n{ws.repo / 'src/app.py'}:\n  Line 2:     return 1"
    assert result.metadata == {"matches": 1, "truncated": False}


async def test_list_renders_a_tree(ws):
    result = await run_tool(ws, "list", {})
    assert result.output.startswith(f"{ws.repo}/\n")
    assert "  src/\n    app.py\n" in result.output
    assert "  README.md\n" in result.output
