#!/usr/bin/env bash
# Snapshot readers (issue 44, DESIGN.md "One snapshot for many readers"): N readers of catalog.events started together, as
# N feed replicas scaling out start, each asking catalog for a snapshot; how many snapshots catalog published for them and
# the bytes each reader read until all were loaded, with catalog's coalescing off (CATALOG_SNAPSHOT_WINDOW_MS=0, each
# request answered alone, as before) and on, and the ratio:
#
#   scripts/bench-snapshots.sh            POIS=20000 TOURS=200 EVENTS=2000 PEOPLE=1000 READERS="1 10" WINDOW_MS=1000
#
# On private processes it starts and stops itself: a private Postgres and broker on free ports, catalog (restarted for
# each window), `itour-bench generate-city`, then `itour-bench snapshot-readers --readers N` for each N. Release builds
# unless ITOUR_BIN_DIR names a directory with catalog and itour-bench (e.g. .build/debug: the counts and bytes are the
# same, the times are not). KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
source scripts/common.sh

POIS=${POIS:-20000}
TOURS=${TOURS:-200}
EVENTS=${EVENTS:-2000}
PEOPLE=${PEOPLE:-1000}
READERS=${READERS:-1 10}
WINDOW_MS=${WINDOW_MS:-1000}
python=$root/.venv/bin/python
export LD_LIBRARY_PATH=$root/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

work=$(mktemp -d /tmp/itour-bench-snapshots.XXXXXX)
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pg_port=$(free_port); broker_port=$(free_port); catalog_port=$(free_port)
catalog_pid=

cleanup() {
  set +e
  [[ -n $catalog_pid ]] && alive "$catalog_pid" && stop_pid catalog "$catalog_pid" 15 >/dev/null
  bench_stores stop
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

log() { printf '\n== %s\n' "$*" >&2; }

bench_binaries catalog itour-bench

bench_stores start
export LOG_FORMAT=json LOG_LEVEL=info HTTP_HOST=127.0.0.1
export CATALOG_COMMAND_KEY=bench-command-key-$RANDOM$RANDOM$RANDOM

start_catalog() { # WINDOW_MS
  [[ -n $catalog_pid ]] && stop_pid catalog "$catalog_pid" 30 >&2
  CATALOG_SNAPSHOT_WINDOW_MS=$1 HTTP_PORT=$catalog_port "$bin/catalog" >>"$work/catalog.log" 2>&1 &
  catalog_pid=$!
  local deadline=$((SECONDS + 120))
  until [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$catalog_port/ready") == 200 ]]; do
    ((SECONDS < deadline)) || { echo "bench-snapshots: catalog not ready after 120 s" >&2; exit 1; }
    sleep 0.05
  done
}

start_catalog 0
log "generating the city: $POIS POIs in $TOURS tours, $EVENTS events, $PEOPLE people"
"$bin/itour-bench" generate-city --pois "$POIS" --tours "$TOURS" --events "$EVENTS" --people "$PEOPLE" | tee "$work/generate.txt"

declare -A snapshots bytes ready
for window in 0 "$WINDOW_MS"; do
  start_catalog "$window"
  for n in $READERS; do
    log "CATALOG_SNAPSHOT_WINDOW_MS=$window: $n readers started together"
    line=$("$bin/itour-bench" snapshot-readers --readers "$n" | tee /dev/stderr | grep '^snapshot-readers:')
    snapshots[$window,$n]=$(sed -E 's/.* snapshots=([0-9]+) .*/\1/' <<<"$line")
    bytes[$window,$n]=$(sed -E 's/.* bytes-per-reader=([0-9]+) .*/\1/' <<<"$line")
    ready[$window,$n]=$(sed -E 's/.* all-ready=([0-9.]+) s.*/\1/' <<<"$line")
  done
done

echo
echo "=== snapshot readers (POIS=$POIS TOURS=$TOURS EVENTS=$EVENTS PEOPLE=$PEOPLE, $(basename "$bin") binaries) ==="
printf '| readers | window 0: snapshots | bytes each reader read | all ready | window %s ms: snapshots | bytes each reader read | all ready | bytes, before/after |\n' "$WINDOW_MS"
printf '|---|---|---|---|---|---|---|---|\n'
for n in $READERS; do
  awk -v n="$n" -v s0="${snapshots[0,$n]}" -v b0="${bytes[0,$n]}" -v r0="${ready[0,$n]}" \
      -v s1="${snapshots[$WINDOW_MS,$n]}" -v b1="${bytes[$WINDOW_MS,$n]}" -v r1="${ready[$WINDOW_MS,$n]}" \
      'BEGIN { printf "| %d | %d | %.1f MB | %.1f s | %d | %.1f MB | %.1f s | %.2f× |\n", n, s0, b0 / 1e6, r0, s1, b1 / 1e6, r1, b0 / b1 }'
done
