#!/usr/bin/env bash
# Set up, create the first admin (printing its API token once) if there is no user yet, then serve.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
start_dir="$(pwd)"
"$here/scripts/setup.sh"
cd "$here"
AGENTSERVER_DEFAULT_ROOTS="${AGENTSERVER_DEFAULT_ROOTS:-$start_dir}" .venv/bin/python manage.py bootstrap
.venv/bin/python manage.py collectstatic --noinput -v 0
echo "agentserver listening on http://${HOST:-127.0.0.1}:${PORT:-4096}"
exec .venv/bin/python -m server.serve --host "${HOST:-127.0.0.1}" --port "${PORT:-4096}"
