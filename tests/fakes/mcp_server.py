"""A tiny real MCP server for the tests, spoken to over stdio: tools add/echo/env, a prompt, a resource.

Run as `python tests/fakes/mcp_server.py` (stdio) or with `--http PORT` / `--sse PORT` (remote); the `env` tool lets a test see the child's environment."""
import os

from mcp.server.mcpserver import MCPServer

app = MCPServer("agentserver-test")


@app.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@app.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"Echo: {text}"


@app.tool()
def env() -> str:
    """The server's environment variable names and its working directory."""
    return "cwd=" + os.getcwd() + "\n" + "\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))


@app.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


@app.resource("test://notes")
def notes() -> str:
    """Some notes."""
    return "the notes text"


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] in ("--http", "--sse"):
        transport = "streamable-http" if sys.argv[1] == "--http" else "sse"
        app.run(transport, host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
