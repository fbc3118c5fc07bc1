"""Routes of pty_app: `original` at the root, `v2` under /api."""
original: list = []
v2: list = []
