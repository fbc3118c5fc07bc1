#!/usr/bin/env bash
# Shared set-up of `make serve` and `make test`: virtualenv, pinned install (skipped when unchanged), the
# sandbox's programs (bubblewrap...), migrations, and opencode's web app (copied once out of the pinned
# opencode-ai npm package's binary: README "The web app").
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt 2>&1 | { grep -v '^WARNING: Location' || true; }
  echo "$want" > "$stamp"
fi
./scripts/sandbox-deps.sh
.venv/bin/python manage.py migrate --noinput -v 0
.venv/bin/python manage.py install_web_app --if-missing --npm \
  || echo "warning: opencode's web app is not installed; / explains how (README \"The web app\")" >&2
