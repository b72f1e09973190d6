#!/usr/bin/env bash
# Analytics benchmarks (issue 5), on a Postgres and broker of their own, with release binaries:
#
#   scripts/bench-analytics.sh [EVENTS]         (default 1000000)
#
# 1. ingest: EVENTS tracking events over the last 90 days are produced to tracking.events while analytics
#    is stopped; then analytics starts and the time from its first counted event to its last gives
#    events/s end to end (broker -> decode -> dedupe -> aggregates + offsets in Postgres). In the same
#    run, the same events as CSV are COPYed into an UNLOGGED table of the same columns (psql \copy):
#    Postgres's own ingest limit here. Goals: >= 20 000 events/s and >= 0.3x COPY.
# 2. queries: report latency (HTTP, token, JSON) with those events loaded; every other query covers
#    all 90 days, the rest random ranges; a third filtered by tour. Goal: p95 < 100 ms.
# 3. lag: POST /v1/events on the feed, one event at a time, until the summary report counts it. Goal:
#    p95 < 2 s. Without a feed binary that accepts the POST, events are produced directly (and the
#    output says so).
#
# Postgres runs with its default durability (fsync on), in .run/bench-pg on BENCH_PG_PORT (5474); the
# broker on BENCH_BROKER_PORT (9124). Both are stopped at the end, and the run's database dropped
# (BENCH_KEEP=1 keeps it). ITOUR_BIN_DIR skips the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

events=${1:-1000000}
days=90
pg_dir=$run_dir/bench-pg
pg_port=${BENCH_PG_PORT:-5474}
broker_port=${BENCH_BROKER_PORT:-9124}
broker_pid=$run_dir/bench-broker.pid
broker_log=$log_dir/bench-broker.log
work=$run_dir/bench-analytics
export LD_LIBRARY_PATH=$PWD/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$log_dir" "$work"

if [[ -z ${ITOUR_BIN_DIR:-} ]]; then
  echo "==> swift build -c release (analytics, itour-bench, catalog, feed)"
  # build_summary (common.sh) succeeds when an up-to-date build prints nothing it shows; a failed build fails here.
  for product in analytics itour-bench catalog feed; do swift build -c release --product "$product" 2>&1 | build_summary; done
  ITOUR_BIN_DIR=$PWD/.build/release
fi
bin=$ITOUR_BIN_DIR

pids=()
database=
cleanup() {
  for pid in "${pids[@]}"; do stop_pid bench "$pid" 10 >/dev/null || true; done
  scripts/broker.sh stop "$broker_pid" "$broker_port" "$broker_log" >/dev/null || true
  # The run's database and CSV are large; BENCH_KEEP=1 keeps them for a look (psql -p $pg_port -d $database).
  if [[ -z ${BENCH_KEEP:-} ]]; then
    [[ -n $database ]] && psql -h 127.0.0.1 -p "$pg_port" -U itour -d itour -qc "DROP DATABASE IF EXISTS $database" >/dev/null 2>&1
    rm -f "$work/events.csv"
  fi
  scripts/postgres.sh stop "$pg_dir" "$pg_port" >/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "==> postgres on $pg_port (default durability), broker on $broker_port"
scripts/postgres.sh start "$pg_dir" "$pg_port"
scripts/broker.sh start "$broker_pid" "$broker_port" "$broker_log"
database=bench_$(date +%s)
psql_db() { psql -h 127.0.0.1 -p "$pg_port" -U itour -d "$database" -v ON_ERROR_STOP=1 -qAt "$@"; }
psql -h 127.0.0.1 -p "$pg_port" -U itour -d itour -qc "CREATE DATABASE $database"

export POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_DB=$database
export KAFKA_BROKERS=127.0.0.1:$broker_port KAFKA_TOPIC_PREFIX=$database.
export ITOUR_DEMO=1 REPORTS_TOKEN=bench-token LOG_LEVEL=warning HTTP_HOST=127.0.0.1
analytics_port=$((pg_port + 3)) feed_port=$((pg_port + 4)) catalog_port=$((pg_port + 5))
export ANALYTICS_URL=http://127.0.0.1:$analytics_port FEED_URL=http://127.0.0.1:$feed_port

# start NAME: a service in the background with its own port and log.
start() {
  local port
  case $1 in analytics) port=$analytics_port ;; feed) port=$feed_port ;; catalog) port=$catalog_port ;; esac
  HTTP_PORT=$port setsid "$bin/$1" >>"$log_dir/bench-$1.log" 2>&1 &
  pids+=($!)
}
# wait_ready URL [ready|health]: analytics is never "ready" here (no catalog to name tours), only alive.
wait_ready() {
  local i
  for ((i = 0; i < 600; i++)); do curl -fsS -o /dev/null "$1/${2:-ready}" 2>/dev/null && return 0; sleep 0.2; done
  echo "bench-analytics.sh: $1 not ready; see $log_dir/bench-*.log" >&2
  return 1
}

echo "==> producing $events events over $days days (analytics not running yet)"
"$bin/itour-bench" analytics produce --events "$events" --days "$days" --csv "$work/events.csv"

echo "==> COPY of the same events into an unlogged table"
psql_db -c "CREATE UNLOGGED TABLE copy_events (id uuid, type text, device_id text, tourist_id text, occurred_at timestamptz,
  platform text, os_version text, model text, app_version text, tour_id uuid, poi_id uuid, duration_seconds double precision,
  dwell_seconds double precision, via text, url text, media_type text)"
t=$(now)
psql_db -c "\\copy copy_events FROM '$work/events.csv' WITH (FORMAT csv)" >/dev/null
copy_seconds=$(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
copy_rate=$(awk -v n="$events" -v s="$copy_seconds" 'BEGIN { printf "%.0f", n / s }')
echo "copy: $events rows in ${copy_seconds}s: $copy_rate rows/s"
psql_db -c "DROP TABLE copy_events"

echo "==> ingest: analytics counts what is on the topic"
start analytics
"$bin/itour-bench" analytics ingest --events "$events" | tee "$work/ingest.txt"
ingest_line=$(tail -n 1 "$work/ingest.txt")
ingest_rate=$(sed -E 's/.*: ([0-9]+) events\/s$/\1/' <<<"$ingest_line")
wait_ready "$ANALYTICS_URL" health || true

echo "==> queries"
# Autovacuum analyzes and vacuums the freshly loaded tables within a minute or so; done here at once, so
# the figures do not depend on when it happens to run.
psql_db -c "VACUUM ANALYZE"
"$bin/itour-bench" analytics queries --runs 400 --days "$days" | tee "$work/queries.txt"
query_lines=$(cat "$work/queries.txt")

echo "==> lag"
if [[ -x $bin/catalog && -x $bin/feed ]]; then
  start catalog
  start feed
  wait_ready "http://127.0.0.1:$feed_port" || true
fi
"$bin/itour-bench" analytics lag --runs 200 | tee "$work/lag.txt"
lag_line=$(tail -n 1 "$work/lag.txt")

tables=$(psql_db -c "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'analytics' AND c.relkind = 'r'")
cat <<SUMMARY

==> analytics benchmark ($events events over $days days; $(nproc) cores; Postgres fsync on)
ingest end to end: $ingest_rate events/s   (goal >= 20000)
postgres COPY:     $copy_rate rows/s into an unlogged table
ratio:             $(awk -v a="$ingest_rate" -v b="$copy_rate" 'BEGIN { printf "%.2fx", a / b }') of COPY   (goal >= 0.3x)
$(grep "over all" <<<"$query_lines")   (goal p95 < 100 ms)
$lag_line   (goal p95 < 2000 ms)
analytics tables: $tables
SUMMARY
