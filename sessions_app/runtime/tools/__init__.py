"""The agent's tools, one module per tool (base.py: what they share). The registry is runtime/tool_registry.py."""
