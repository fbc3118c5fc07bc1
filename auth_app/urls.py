"""Routes of auth_app: `original` at the root, `v2` under /api."""
original: list = []
v2: list = []
