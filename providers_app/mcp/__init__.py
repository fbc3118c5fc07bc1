"""MCP servers: configs per user and project (registry), connections in this worker (client), remote OAuth
(oauth), the agent's MCP tools (tools)."""
