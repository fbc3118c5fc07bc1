#!/usr/bin/env bash
# The event fan-out and token streaming benchmarks against a fresh daphne on PostgreSQL + Redis (the scaled
# deployment), on a throw-away database, user and repository. Needs PostgreSQL on 127.0.0.1:5432 (user
# postgres, trust) and Redis on 127.0.0.1:6379, as .ci/run starts them. Run it on an idle machine: the
# latency columns measure the scheduler as much as the server when other work competes (see `load avg`).
#
#     bash bench/perf.sh            # 3 runs per configuration, median shown
#     REPEAT=5 bash bench/perf.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
REPEAT=${REPEAT:-3}
WORK=$(mktemp -d /tmp/agentserver-perf.XXXXXX)
DB=agentserver_perf_$$
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB" REDIS_URL="redis://127.0.0.1:6379/7"
export AGENTSERVER_DATA_DIR="$WORK/data"
SERVER=""

cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB"
mkdir -p "$WORK/repo" "$WORK/data"
git -C "$WORK/repo" init -q && echo bench > "$WORK/repo/README.md"
git -C "$WORK/repo" add README.md && git -C "$WORK/repo" -c user.name=bench -c user.email=bench@localhost commit -qm init
$PY manage.py migrate -v0
$PY manage.py shell -c "from django.contrib.auth import get_user_model; get_user_model().objects.create(username='bench')" >/dev/null
$PY manage.py roots bench --add "$WORK/repo" >/dev/null
TOKEN=$($PY manage.py createtoken bench | awk '{print $NF}')

$PY -m daphne -b 127.0.0.1 -p "$PORT" agentserver.asgi:application >"$WORK/daphne.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 120); do curl -s -o /dev/null -m 1 "http://127.0.0.1:$PORT/global/health" && break; sleep 0.5; done

echo "== bench/events.py: logged events from another process (outbox → event log → Redis → bus → SSE)"
$PY bench/events.py --url "http://127.0.0.1:$PORT" --user bench --token "$TOKEN" --server-pid "$SERVER" \
    --subscribers 1 100 --rate 1000 --seconds 5 --repeat "$REPEAT"
echo
echo "== bench/stream.py: 5,000 back-to-back deltas from the fake provider"
$PY bench/stream.py --base-url "http://127.0.0.1:$PORT" --token "$TOKEN" --directory "$WORK/repo" \
    --server-pid "$SERVER" --subscribers 1,100 --repeat "$REPEAT"
echo
echo "== bench/sandbox.py: process sandbox overhead, sandboxed vs AGENTSERVER_SANDBOX=off (own SQLite servers)"
env -u DATABASE_URL -u REDIS_URL -u AGENTSERVER_DATA_DIR $PY bench/sandbox.py
