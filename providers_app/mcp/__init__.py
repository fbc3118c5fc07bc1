"""MCP servers: their configs (configs), which a user has in a context (registry), connections in this worker
(client), remote OAuth (oauth), the stored connect/disconnect switch (switch). The agent's MCP tools are
sessions_app/mcp_tools.py."""
