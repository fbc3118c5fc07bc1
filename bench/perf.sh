#!/usr/bin/env bash
# Performance runs, each on throw-away data, users and repositories:
#
#   throughput  bench/throughput.py on the embedded default (the README's serve command: SQLite, in-memory
#               layer, one server process) and, when the test set-up's opencode binary is in .tools, on
#               `opencode serve` in the same run, alternating ROUNDS times; prints the ratio table (medians).
#               Needs wrk (apt-get install wrk).
#   scaled      GET /session at 32 keep-alive clients on PostgreSQL + Redis: one worker against two
#               (the clients divided among the workers, as a balancer would), alternating ROUNDS times.
#   streams     bench/events.py and bench/stream.py on PostgreSQL + Redis (event fan-out, token streaming).
#   eventlog    bench/event_log_lock.py: what the event log's ordering lock (PostgreSQL) costs its writers.
#   sandbox     bench/sandbox.py: the process sandbox's overhead.
#   lsp         bench/lsp.py: an edit's diagnostics, cold and warm language servers.
#   agent       bench/agent.py: K = 1, 8, 32 sessions each sending one prompt whose (fake) model calls bash,
#               on the embedded default (sandbox on) and on `opencode serve` 1.18.33 against one fake model,
#               alternating ROUNDS times; prints the ratio table (medians): batch wall, prompt latency, the
#               server's CPU per prompt (process tree), GET /global/health and GET /session p99 meanwhile.
#   agent-compare  (only when named) the agent part's batches on two checkouts of agentserver, both on the
#               embedded default: AGENT_BEFORE names the other checkout (a git worktree with .venv linked),
#               this one is `after`; alternating ROUNDS times; the ratio table (after / before) and the server
#               CPU per model call, with what `after` costs more per model call and per tool call.
#               AGENT_TOOLS=N (agent, agent-compare): the model asks for N bash calls at once (default 1).
#   chaos       bench/chaos.py (only when named): two hosts behind nginx under prompt load, one killed with
#               SIGKILL every 20-40 s, CHAOS_SECONDS (600) long; its own database bench_chaos and Redis db 6.
#
# scaled, streams and eventlog need PostgreSQL on 127.0.0.1:5432 (user postgres, trust; database bench_perf is created
# and dropped) and Redis on 127.0.0.1:6379 (db 7). The machine's other load shows in every figure: compare
# servers within one run (alternating, medians), not across runs.
#
#     bash bench/perf.sh                        # every part, in the order above
#     bash bench/perf.sh throughput             # one part
#     ROUNDS=5 SECONDS_PER_RUN=3 bash bench/perf.sh throughput
#     ROUNDS=1 AGENT_SESSIONS=1,8 bash bench/perf.sh agent
#     AGENT_BEFORE=/work/wt-before ROUNDS=5 AGENT_SESSIONS=1,8 bash bench/perf.sh agent-compare
#     AGENT_TOOLS=10 AGENT_BEFORE=/work/wt-no-audit ROUNDS=8 AGENT_SESSIONS=1,8 bash bench/perf.sh agent-compare
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PARTS=${*:-throughput scaled streams eventlog sandbox lsp agent}
ROUNDS=${ROUNDS:-3}
REPEAT=${REPEAT:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-2}
AGENT_SESSIONS=${AGENT_SESSIONS:-1,8,32}
WORK=$(mktemp -d /tmp/agentserver-perf.XXXXXX)
DB=bench_perf
PIDS=()

free_port() { $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || continue
    # opencode does not always exit on SIGTERM.
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

new_repo() {  # distinct content: two repos committed in the same second must not share a root commit (project)
  mkdir -p "$1" && git -C "$1" init -q && echo "bench $1" > "$1/README.md"
  git -C "$1" add README.md && git -C "$1" -c user.name=bench -c user.email=bench@localhost commit -qm init
}

wait_up() {
  for _ in $(seq 1 120); do curl -s -o /dev/null -m 1 "$1/global/health" && return 0; sleep 0.5; done
  echo "server at $1 did not start" >&2; return 1
}

# A user `bench` with both repos as roots; prints its token.
bench_user() {
  $PY manage.py migrate -v0
  $PY manage.py shell -c "from django.contrib.auth import get_user_model; get_user_model().objects.create(username='bench')" >/dev/null
  $PY manage.py roots bench --add "$1" --add "$2" >/dev/null
  $PY manage.py createtoken bench | awk '{print $NF}'
}

worker_on() {  # port [VAR=value...] → one worker started as scripts/serve.sh does; its pid in $!
  worker_in . "$@"
}

worker_in() {  # checkout port [VAR=value...] → worker_on, with that checkout's code
  local checkout=$1 port=$2; shift 2
  (cd "$checkout"; if [ $# -gt 0 ]; then export "$@"; fi
   exec .venv/bin/python -m server.serve --host 127.0.0.1 --port "$port" >>"$WORK/server-$port.log" 2>&1) &
}

opencode_binary() {  # the test set-up's opencode 1.18.33 in .tools, or nothing
  for candidate in .tools/node_modules/opencode-linux-x64/bin/opencode .tools/node_modules/opencode-linux-*/bin/opencode; do
    [ -x "$candidate" ] && realpath "$candidate" && return 0
  done
  return 0
}

start_opencode() {  # binary dir port → `opencode serve` in dir/repo with its own home under dir; waits for it
  (cd "$2/repo" && HOME="$2/home" XDG_CONFIG_HOME="$2/home/.config" \
    XDG_DATA_HOME="$2/home/.local/share" XDG_CACHE_HOME="$2/home/.cache" \
    XDG_STATE_HOME="$2/home/.local/state" OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
    OPENCODE_DISABLE_LSP_DOWNLOAD=1 exec "$1" serve --port "$3" --hostname 127.0.0.1 >"$2/opencode.log" 2>&1) &
  PIDS+=($!)
  wait_up "http://127.0.0.1:$3"
}

throughput() {
  echo "== throughput: embedded default vs opencode (bench/throughput.py, $ROUNDS rounds, ${SECONDS_PER_RUN}s per figure)"
  local ours_port oc_port token oc=""
  new_repo "$WORK/ours/repo"; new_repo "$WORK/ours/repo2"
  ours_port=$(free_port)
  local embedded=(DATABASE_URL= REDIS_URL= AGENTSERVER_DATA_DIR="$WORK/ours/data")
  token=$(export "${embedded[@]}"; bench_user "$WORK/ours/repo" "$WORK/ours/repo2")
  worker_on "$ours_port" "${embedded[@]}"
  PIDS+=($!)
  wait_up "http://127.0.0.1:$ours_port"
  oc=$(opencode_binary)
  if [ -n "$oc" ]; then
    new_repo "$WORK/oc/repo"; new_repo "$WORK/oc/repo2"
    oc_port=$(free_port)
    start_opencode "$oc" "$WORK/oc" "$oc_port"
  else
    echo "(no opencode binary in .tools: agentserver only)"
  fi
  for round in $(seq 1 "$ROUNDS"); do
    run_ours() {
      $PY bench/throughput.py "http://127.0.0.1:$ours_port" --token "$token" --directory "$WORK/ours/repo" \
          --write-directory "$WORK/ours/repo2" --seconds "$SECONDS_PER_RUN" --json "$WORK/ours-$round.json" >/dev/null
    }
    run_oc() {
      [ -n "$oc" ] && $PY bench/throughput.py "http://127.0.0.1:$oc_port" --directory "$WORK/oc/repo" \
          --write-directory "$WORK/oc/repo2" --seconds "$SECONDS_PER_RUN" --json "$WORK/oc-$round.json" >/dev/null
      return 0
    }
    if (( round % 2 )); then run_ours; run_oc; else run_oc; run_ours; fi
    echo "round $round done (load avg $(cut -d' ' -f1 /proc/loadavg))"
  done
  if [ -n "$oc" ]; then
    $PY bench/throughput.py compare agentserver opencode "$WORK"/ours-*.json -- "$WORK"/oc-*.json
  else
    $PY bench/throughput.py compare agentserver agentserver "$WORK"/ours-*.json -- "$WORK"/ours-*.json
  fi
  echo
}

scaled_setup() {
  [ -n "${SCALED_TOKEN:-}" ] && return 0
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB" REDIS_URL="redis://127.0.0.1:6379/7"
  export AGENTSERVER_DATA_DIR="$WORK/scaled/data"
  export SECRET_KEY="${SECRET_KEY:-bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d " \n")}"
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB"
  new_repo "$WORK/scaled/repo"; new_repo "$WORK/scaled/repo2"
  SCALED_TOKEN=$(bench_user "$WORK/scaled/repo" "$WORK/scaled/repo2")
  SCALED_A=$(free_port); worker_on "$SCALED_A"; SCALED_A_PID=$!; PIDS+=($!)
  SCALED_B=$(free_port); worker_on "$SCALED_B"; PIDS+=($!)
  wait_up "http://127.0.0.1:$SCALED_A"; wait_up "http://127.0.0.1:$SCALED_B"
}

scaled() {
  echo "== scaled: PostgreSQL + Redis, GET /session at 32 keep-alive clients, one worker vs two ($ROUNDS rounds)"
  scaled_setup
  local args=(--token "$SCALED_TOKEN" --directory "$WORK/scaled/repo" --write-directory "$WORK/scaled/repo2"
              --routes "GET /session" --clients 32 --seconds "$SECONDS_PER_RUN")
  for round in $(seq 1 "$ROUNDS"); do
    one() { $PY bench/throughput.py "http://127.0.0.1:$SCALED_A" "${args[@]}" --json "$WORK/one-$round.json" >/dev/null; }
    two() { $PY bench/throughput.py "http://127.0.0.1:$SCALED_A" --spread-to "http://127.0.0.1:$SCALED_B" \
                "${args[@]}" --json "$WORK/two-$round.json" >/dev/null; }
    if (( round % 2 )); then one; two; else two; one; fi
  done
  $PY bench/throughput.py compare --machine keep-alive two-workers one-worker \
      "$WORK"/two-*.json -- "$WORK"/one-*.json | grep -v " fresh "
  echo
}

streams() {
  scaled_setup
  local url="http://127.0.0.1:$SCALED_A"
  echo "== bench/events.py: logged events from another process (outbox → event log → Redis → bus → SSE)"
  $PY bench/events.py --url "$url" --user bench --token "$SCALED_TOKEN" --server-pid "$SCALED_A_PID" \
      --subscribers 1 100 --rate 1000 --seconds 5 --repeat "$REPEAT"
  echo
  echo "== bench/stream.py: 5,000 back-to-back deltas from the fake provider"
  $PY bench/stream.py --base-url "$url" --token "$SCALED_TOKEN" --directory "$WORK/scaled/repo" \
      --server-pid "$SCALED_A_PID" --subscribers 1,100 --repeat "$REPEAT"
}

eventlog() {
  echo "== bench/event_log_lock.py: one-event log transactions per second, without and with the ordering lock"
  $PY bench/event_log_lock.py --rounds "$ROUNDS"
  echo
}

agent_fake() {  # repo... → one fake model for every server, its opencode.json in each repo before a server reads
  AGENT_FAKE_PORT=$(free_port)  # it; every model call it answers is a line of $WORK/agent/fake.log
  $PY bench/agent.py fake "$AGENT_FAKE_PORT" "$@" >"$WORK/agent/fake.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do curl -s -o /dev/null -m 1 "http://127.0.0.1:$AGENT_FAKE_PORT/v1/models" && break; sleep 0.1; done
}

agent_server() {  # checkout dir → that checkout on the embedded default, its data in dir/data, user bench with
  local embedded=(DATABASE_URL= REDIS_URL= AGENTSERVER_DATA_DIR="$2/data")  # dir/repo and dir/repo2
  AGENT_TOKEN=$(cd "$1" && export "${embedded[@]}" && bench_user "$2/repo" "$2/repo2")
  AGENT_PORT=$(free_port)
  worker_in "$1" "$AGENT_PORT" "${embedded[@]}"
  AGENT_PID=$!; PIDS+=($!)
  wait_up "http://127.0.0.1:$AGENT_PORT"
}

agent_run() {  # round name port pid directory [token] → one bench/agent.py run into $WORK/agent/name-round.json
  echo "round $1, $2:"
  $PY bench/agent.py "http://127.0.0.1:$3" ${6:+--token "$6"} --directory "$5" --server-pid "$4" \
      --llm "http://127.0.0.1:$AGENT_FAKE_PORT/v1" --llm-log "$WORK/agent/fake.log" --sessions "$AGENT_SESSIONS" \
      --json "$WORK/agent/$2-$1.json" >/dev/null || echo "(wrong answers)"
}

agent_rounds() {  # "name port pid directory [token]" twice → ROUNDS alternating runs, then the ratio table (A / B)
  local a=($1) b=($2)
  for round in $(seq 1 "$ROUNDS"); do
    if (( round % 2 )); then agent_run "$round" "${a[@]}"; agent_run "$round" "${b[@]}"
    else agent_run "$round" "${b[@]}"; agent_run "$round" "${a[@]}"; fi
    echo "(load avg $(cut -d' ' -f1-3 /proc/loadavg))"
  done 2>&1 | grep --line-buffered -v '^| K '
  echo
  $PY bench/agent.py compare "${a[0]}" "${b[0]}" "$WORK/agent/${a[0]}"-*.json -- "$WORK/agent/${b[0]}"-*.json
  echo
}

agent() {
  echo "== agent: K sessions, one prompt each whose model calls bash (bench/agent.py), embedded default vs opencode"
  echo "   (K = $AGENT_SESSIONS, $ROUNDS rounds, alternating; the same fake model for both)"
  local dir="$WORK/agent" oc ours
  oc=$(opencode_binary)
  [ -n "$oc" ] || { echo "needs opencode in .tools (the test set-up installs it)" >&2; return 1; }
  new_repo "$dir/ours/repo"; new_repo "$dir/ours/repo2"; new_repo "$dir/oc/repo"
  agent_fake "$dir/ours/repo" "$dir/oc/repo"
  agent_server . "$dir/ours"
  ours="agentserver $AGENT_PORT $AGENT_PID $dir/ours/repo $AGENT_TOKEN"
  local oc_port; oc_port=$(free_port)
  start_opencode "$oc" "$dir/oc" "$oc_port"
  agent_rounds "$ours" "opencode $oc_port ${PIDS[-1]} $dir/oc/repo"
}

agent_compare() {
  local before=${AGENT_BEFORE:?AGENT_BEFORE names the checkout to compare with} dir="$WORK/agent" after_server
  echo "== agent-compare: bench/agent.py on this checkout ($(git rev-parse --short HEAD)) and $before" \
       "($(git -C "$before" rev-parse --short HEAD)), both on the embedded default"
  echo "   (K = $AGENT_SESSIONS, $ROUNDS rounds, alternating; the same fake model for both)"
  new_repo "$dir/before/repo"; new_repo "$dir/before/repo2"; new_repo "$dir/after/repo"; new_repo "$dir/after/repo2"
  agent_fake "$dir/before/repo" "$dir/after/repo"
  agent_server . "$dir/after"
  after_server="after $AGENT_PORT $AGENT_PID $dir/after/repo $AGENT_TOKEN"
  agent_server "$before" "$dir/before"
  agent_rounds "$after_server" "before $AGENT_PORT $AGENT_PID $dir/before/repo $AGENT_TOKEN"
}

sandbox() {
  echo "== bench/sandbox.py: process sandbox overhead, sandboxed vs AGENTSERVER_SANDBOX=off (own SQLite servers)"
  env -u DATABASE_URL -u REDIS_URL -u AGENTSERVER_DATA_DIR $PY bench/sandbox.py
  echo
}

lsp() {
  echo "== bench/lsp.py: an edit's diagnostics, cold and warm language servers"
  env -u DATABASE_URL -u REDIS_URL -u AGENTSERVER_DATA_DIR $PY bench/lsp.py
  echo
}

chaos() {
  echo "== bench/chaos.py: two hosts, one killed every 20-40 s, ${CHAOS_SECONDS:-600} s of prompts"
  $PY bench/chaos.py --seconds "${CHAOS_SECONDS:-600}"
  echo
}

for part in $PARTS; do
  case "$part" in
    throughput|scaled|streams|eventlog|sandbox|lsp|agent|chaos) "$part" ;;
    agent-compare) agent_compare ;;
    *) echo "unknown part: $part (throughput, scaled, streams, eventlog, sandbox, lsp, agent, agent-compare, chaos)" >&2
       exit 2 ;;
  esac
done
