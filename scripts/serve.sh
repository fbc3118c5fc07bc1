#!/usr/bin/env bash
# Set up, create the first admin (printing its API token once) if there is no user yet, then serve.
# The first admin's root: AGENTSERVER_DEFAULT_ROOTS, else your home directory (never the checkout: the
# server's own directories are no one's; see auth_app/roots.py).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here"
.venv/bin/python manage.py bootstrap
echo "agentserver listening on http://${HOST:-127.0.0.1}:${PORT:-4096}"
exec .venv/bin/python -m server.serve --host "${HOST:-127.0.0.1}" --port "${PORT:-4096}"
