"""Language servers for the agent's edits and for find.symbol / lsp.status: servers.py decides which exist,
client.py speaks to one, manager.py owns them per worker, service.py is what the rest of the code calls."""
