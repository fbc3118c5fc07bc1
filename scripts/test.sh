#!/usr/bin/env bash
# Set up, install the headless browser the admin test drives (Debian's chromium) if missing, run the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The scaled mode (PostgreSQL) takes SECRET_KEY from the environment; a test run brings its own.
if [[ "${DATABASE_URL:-}" == postgres* ]]; then export SECRET_KEY="${SECRET_KEY:-agentserver-tests-only-secret-key}"; fi
./scripts/setup.sh
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser tests will fail"
fi
# The two-host tests (tests/hosts, PostgreSQL + Redis only) start a real nginx from deploy/ and give each simulated
# host its own wall clock with libfaketime (plus a small preload built with cc): Debian's nginx-light, faketime, gcc.
hosts_missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || hosts_missing+=(nginx-light)
command -v faketime >/dev/null 2>&1 || hosts_missing+=(faketime)
command -v cc >/dev/null 2>&1 || hosts_missing+=(gcc libc6-dev)
if [ ${#hosts_missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${hosts_missing[@]}" >/dev/null) \
    || echo "warning: could not install ${hosts_missing[*]}; the two-host tests will fail on PostgreSQL + Redis"
fi
# opencode's own clients (tests/clients) run the stock 1.18.33 binary and JS SDK; they skip when missing.
if { ! ls .tools/node_modules/opencode-linux-*/bin/opencode || [ ! -e .tools/node_modules/@opencode-ai/sdk ]; } \
    >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  npm install --prefix .tools --no-audit --no-fund --loglevel=error opencode-ai@1.18.33 @opencode-ai/sdk@1.18.33 \
    >/dev/null \
    || echo "warning: could not install opencode-ai; the client tests will be skipped"
fi
# The SDK's v2 client of 1.19.3 (tests/clients/test_js_sdk_v2.py), beside 1.18.33's under its own name.
if [ ! -e .tools/node_modules/sdk119/package.json ] && command -v npm >/dev/null 2>&1; then
  npm install --prefix .tools --no-audit --no-fund --loglevel=error sdk119@npm:@opencode-ai/sdk@1.19.3 >/dev/null \
    || echo "warning: could not install @opencode-ai/sdk 1.19.3; the SDK v2 client tests will be skipped"
fi
# The import contracts (.importlinter): a new cycle or an upward import fails the run before any test.
.venv/bin/lint-imports --no-cache
# The TypeScript language server (tests/lsp checks it when present, and skips otherwise); Node >= 20.
if { [ ! -e .tools/node_modules/typescript-language-server/lib/cli.mjs ] \
    || [ ! -e .tools/node_modules/typescript/lib/tsserver.js ]; } && command -v npm >/dev/null 2>&1; then
  npm install --prefix .tools --no-audit --no-fund --loglevel=error typescript-language-server@5.3.0 \
    typescript@5.9.3 >/dev/null \
    || echo "warning: could not install typescript-language-server; its test will be skipped"
fi
# Three processes, each with its own live server and test database; files stay together, the longest first
# (tests/conftest.py orders them; xdist's own reordering, by number of tests, is off). On two cores a third
# process fills the time the others wait on servers, browsers and clients: 7.0 min against 9.3 with two.
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@"
