#!/usr/bin/env bash
# Feed benchmarks (issue 4), one run on this machine, printing figures, medians and ratios:
#
#   scripts/bench-feed.sh            POIS=100000 TOURS=1000 EVENTS=10000 PEOPLE=5000 DURATION=10 ROUNDS=3 CONNECTIONS=50
#
# What it does, all on private processes it starts and stops itself (never the shared ones):
#   1. release builds of catalog, feed and itour-bench; a private Postgres and tansu broker on free ports
#   2. catalog + feed, then `itour-bench generate-city` loads POIS POIs in TOURS tours, EVENTS calendar events and PEOPLE people through catalog
#      commands; feed RSS with the city loaded, and the feed's rebuild time from a snapshot (restart → /ready)
#   3. GET /v1/tours/{id} and /v1/pois/{id} over every generated id with wrk, against nginx serving the
#      feed's own response bytes from disk, and against pgbench doing the equivalent SELECT per request;
#      and the small case: the demo tour (2.5 KB, deploy/demo) alone, wrk -c SMALL_CONNECTIONS (32),
#      against nginx serving its bytes, so per-request cost shows and not only bytes; and /v1/pois/{id} again with
#      Accept-Language: es (every generated POI has a Spanish name and summary) against nginx serving the Spanish bytes
#   4. near and search: in-process p50/p99 (Server-Timing) and HTTP p50/p99 one at a time; wrk throughput
#   5. POST /v1/events, batches of 50 from many devices, with wrk; the broker's own limit from a raw
#      librdkafka producer (confluent-kafka, the same librdkafka) sending the same events as messages
# Each wrk/pgbench figure is the median of ROUNDS runs taken in turn (the feed first in odd rounds, its baseline first in
# even ones); each goal line's ratio is the median of the rounds' ratios. KEEP=1 keeps the work directory.
# BENCH_POSTGRES_OPTS adds server settings to the private Postgres, e.g. "-c log_min_duration_statement=20" with KEEP=1.
# REBUILD_UNDER runs the rebuilt feed under a tool, e.g. REBUILD_UNDER="heaptrack -o /tmp/feed" PARTS=none.
# REBUILDS (default 3) restarts the feed that many times; ready time and RSS are their medians (one under REBUILD_UNDER).
# BASELINE_FEED, a feed binary (e.g. a copy of the release feed before a change), restarts it as often, taking turns with
# the feed under test, and prints both medians and their ratio: one run's noise then falls on both.
# PARTS picks steps 3-5 (default "gets media queries events"); e.g. PARTS=events POIS=1000 TOURS=10 for a quick
# look at the events path alone.
set -euo pipefail
# Relative to where it was started from.
[[ -n ${BASELINE_FEED:-} ]] && BASELINE_FEED=$(realpath "$BASELINE_FEED")
cd "$(dirname "$0")/.."
root=$PWD
source scripts/common.sh

POIS=${POIS:-100000}
TOURS=${TOURS:-1000}
EVENTS=${EVENTS:-10000}
PEOPLE=${PEOPLE:-5000}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-50}
SMALL_CONNECTIONS=${SMALL_CONNECTIONS:-32}
# The media step's file (issue 19: a 200 KB image, feed against nginx serving the same bytes).
MEDIA_BYTES=${MEDIA_BYTES:-200000}
WRK_THREADS=${WRK_THREADS:-1}
PARTS=${PARTS:-gets media queries events}
REBUILDS=${REBUILDS:-3}
[[ $REBUILDS =~ ^[1-9][0-9]*$ ]] || { echo "bench-feed: REBUILDS must be 1 or more" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench-feed: ROUNDS must be 1 or more" >&2; exit 2; }
if [[ -n ${BASELINE_FEED:-} ]]; then
  [[ -x $BASELINE_FEED ]] || { echo "bench-feed: BASELINE_FEED $BASELINE_FEED is not an executable" >&2; exit 2; }
  [[ -z ${REBUILD_UNDER:-} ]] || { echo "bench-feed: BASELINE_FEED and REBUILD_UNDER do not go together" >&2; exit 2; }
fi
# The services' linger.ms (their default unless set), given to the raw producer too.
export KAFKA_LINGER_MS=${KAFKA_LINGER_MS:-2}
linger_ms=$KAFKA_LINGER_MS
wants() { [[ " $PARTS " == *" $1 "* ]]; }
# The middle value of the numbers on stdin (the lower of the two middle ones for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
python=$root/.venv/bin/python
export LD_LIBRARY_PATH=$root/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

for tool in wrk nginx pgbench psql curl; do
  command -v "$tool" >/dev/null || { echo "bench-feed: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d /tmp/itour-bench-feed.XXXXXX)
chmod 755 "$work"
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pg_port=$(free_port); broker_port=$(free_port); catalog_port=$(free_port); feed_port=$(free_port); nginx_port=$(free_port)
feed_url=http://127.0.0.1:$feed_port
pids=()

cleanup() {
  set +e
  for pid in "${pids[@]}"; do alive "$pid" && stop_pid bench-process "$pid" 15 >/dev/null; done
  [[ -f $work/nginx.pid ]] && kill -QUIT "$(cat "$work/nginx.pid")" 2>/dev/null
  bench_stores stop
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

log() { printf '\n== %s\n' "$*" >&2; }

bench_binaries catalog feed itour-bench

bench_stores start
export LOG_FORMAT=json LOG_LEVEL=info HTTP_HOST=127.0.0.1 FEED_URL=$feed_url
# catalog checks, and itour-bench signs, every command with it (DESIGN.md "Signed commands").
export CATALOG_COMMAND_KEY=bench-command-key-$RANDOM$RANDOM$RANDOM
# Many devices post in this benchmark; the per-device limit is not what it measures.
export FEED_EVENTS_PER_MINUTE_PER_DEVICE=0
export FEED_EVENTS_PER_MINUTE_PER_CLIENT=0 FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT=0

# Two languages loaded (issue 45): the generated city and the demo tour carry Spanish texts; requests ask in the site's.
export SITE_LANGUAGE=en SITE_LANGUAGES=en,es
start_service() { # NAME PORT: starts the release binary, records its pid in $started_pid
  HTTP_PORT=$2 "$bin/$1" >>"$work/$1.log" 2>&1 &
  started_pid=$!
  pids+=("$started_pid")
}
wait_ready() { # URL TIMEOUT_SECONDS
  local deadline=$((SECONDS + $2))
  until [[ $(curl -s -o /dev/null -w '%{http_code}' "$1/ready") == 200 ]]; do
    ((SECONDS < deadline)) || { echo "bench-feed: $1 not ready after $2 s" >&2; exit 1; }
    sleep 0.05
  done
}
rss_mib() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

start_service catalog "$catalog_port"; catalog_pid=$started_pid
wait_ready "http://127.0.0.1:$catalog_port" 120
start_service feed "$feed_port"; feed_pid=$started_pid
wait_ready "$feed_url" 120

log "generating the city: $POIS POIs in $TOURS tours through catalog import batches"
"$bin/itour-bench" generate-city --pois "$POIS" --tours "$TOURS" --events "$EVENTS" --people "$PEOPLE" | tee "$work/generate.txt"
until [[ $(curl -s "$feed_url/v1/tours" | "$python" -c 'import json,sys; print(len(json.load(sys.stdin)["tours"]))') == "$TOURS" ]]; do sleep 0.5; done
# Past the feed's giving freed memory back once publications pause (a second): its steady state.
sleep 6
rss_live=$(rss_mib "$feed_pid")

rebuild_count=$REBUILDS
[[ -n ${REBUILD_UNDER:-} ]] && rebuild_count=1
log "feed rebuild from a snapshot (restart until /ready), $rebuild_count times"
rebuilds=() rebuild_rss=() phases=() baseline_rebuilds=()
rebuild_baseline() { # ROUND: restarts the baseline feed and records its time to ready
  stop_pid feed "$feed_pid" 30 >&2
  local t0; t0=$(now)
  HTTP_PORT=$feed_port "$BASELINE_FEED" >>"$work/feed-baseline.log" 2>&1 &
  feed_pid=$!; pids+=("$feed_pid")
  wait_ready "$feed_url" 600
  baseline_rebuilds+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')")
  echo "baseline rebuild $1: ready after ${baseline_rebuilds[-1]} s" >&2
}
for ((rebuild = 1; rebuild <= rebuild_count; rebuild++)); do
  # Which goes first changes every round, so neither always follows the other.
  [[ -n ${BASELINE_FEED:-} ]] && ((rebuild % 2 == 1)) && rebuild_baseline "$rebuild"
  stop_pid feed "$feed_pid" 30 >&2
  logged=$(grep -c '"projection published"' "$work/feed.log" || true)
  t0=$(now)
  if [[ -n ${REBUILD_UNDER:-} ]]; then
    # e.g. REBUILD_UNDER="heaptrack -o /tmp/feed" PARTS=none: where the rebuilt feed's memory goes (its timings are then the tool's)
    # shellcheck disable=SC2086 # a command and its arguments
    HTTP_PORT=$feed_port $REBUILD_UNDER "$bin/feed" >>"$work/feed.log" 2>&1 &
    started_pid=$!; pids+=("$started_pid")
  else
    start_service feed "$feed_port"
  fi
  feed_pid=$started_pid
  wait_ready "$feed_url" 600
  rebuilds+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')")
  rebuild_rss+=("$(rss_mib "$feed_pid")")
  # The feed says it is ready a moment before it logs the publication's figures.
  for _ in $(seq 1 100); do (($(grep -c '"projection published"' "$work/feed.log" || true) > logged)) && break; sleep 0.05; done
  # No such line yet is no reason to stop the run (set -e with pipefail would): the phases then read nan.
  published=$({ grep '"projection published"' "$work/feed.log" || true; } | tail -1)
  phases+=("$(echo "$published" | "$python" -c 'import json,sys; d=json.loads(sys.stdin.read() or "{}"); print("%.1f+%.1f" % (float(d.get("loadSeconds", "nan")), float(d.get("renderSeconds", "nan"))))')")
  echo "rebuild $rebuild: ready after ${rebuilds[-1]} s (consume+render ${phases[-1]} s), RSS ${rebuild_rss[-1]} MiB" >&2
  [[ -n ${BASELINE_FEED:-} ]] && ((rebuild % 2 == 0)) && rebuild_baseline "$rebuild"
done
if [[ -n ${BASELINE_FEED:-} ]] && ((rebuild_count % 2 == 0)); then
  # The last round ended with the baseline: the feed under test again, as after every round without a baseline: the steps below measure it.
  stop_pid feed "$feed_pid" 30 >&2
  start_service feed "$feed_port"; feed_pid=$started_pid
  wait_ready "$feed_url" 600
fi
rebuild_seconds=$(printf '%s\n' "${rebuilds[@]}" | median)
rss_rebuilt=$(printf '%s\n' "${rebuild_rss[@]}" | median)
if [[ -n ${REBUILD_UNDER:-} ]]; then
  # The tool's report is then of the feed as just measured, before the steps below render every POI. The tool may
  # not pass SIGTERM on: the feed it runs is stopped itself.
  stop_pid feed "$(pgrep -P "$feed_pid" -f "^$bin/feed\$" || echo "$feed_pid")" 60 >&2
  stop_pid feed-tool "$feed_pid" 30 >&2
  start_service feed "$feed_port"; feed_pid=$started_pid
  wait_ready "$feed_url" 600
fi

log "the small case: the demo tour"
"$bin/catalog" load-demo "$root/deploy/demo/uncw-itour.json" >"$work/load-demo.log" 2>&1 || { cat "$work/load-demo.log" >&2; exit 1; }
small_tour=""
for _ in $(seq 1 120); do
  small_tour=$(curl -s "$feed_url/v1/tours" | "$python" -c 'import json,sys; print(next((t["id"] for t in json.load(sys.stdin)["tours"] if t["name"] == "Students Tour (Beta)"), ""))')
  [[ -n $small_tour ]] && break
  sleep 0.5
done
[[ -n $small_tour ]] || { echo "bench-feed: the demo tour did not reach the feed" >&2; exit 1; }

log "response bytes for nginx, id lists"
mkdir -p "$work/www/v1/tours" "$work/www/v1/pois" "$work/lists"
echo "/v1/tours/$small_tour" >"$work/lists/small.txt"
awk -v n="$TOURS" 'BEGIN { for (i = 0; i < n; i++) printf "/v1/tours/c17e0001-0000-4000-8000-%012d\n", i }' >"$work/lists/tours.txt"
awk -v n="$POIS" 'BEGIN { for (i = 0; i < n; i++) printf "/v1/pois/c17e0000-0000-4000-8000-%012d\n", i }' >"$work/lists/pois.txt"
"$python" - "$feed_port" "$work/www" "$work/lists/small.txt" "$work/lists/tours.txt" "$work/lists/pois.txt" <<'PY'
import http.client, os, sys
port, root = int(sys.argv[1]), sys.argv[2]
connection = http.client.HTTPConnection("127.0.0.1", port)
for name in sys.argv[3:]:
    for path in open(name).read().split():
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f"{path}: HTTP {response.status}")
        with open(root + path, "wb") as out:
            out.write(body)
PY
# The POIs' Spanish answers (issue 45: every generated POI has a Spanish name and summary), under /es for nginx.
mkdir -p "$work/www/es/v1/pois"
sed 's|^|/es|' "$work/lists/pois.txt" >"$work/lists/pois-es.txt"
"$python" - "$feed_port" "$work/www/es" "$work/lists/pois.txt" <<'PY'
import http.client, sys
port, root = int(sys.argv[1]), sys.argv[2]
connection = http.client.HTTPConnection("127.0.0.1", port)
for path in open(sys.argv[3]).read().split():
    connection.request("GET", path, headers={"Accept-Language": "es"})
    response = connection.getresponse()
    body = response.read()
    if response.status != 200 or response.getheader("Content-Language") != "es":
        sys.exit(f"{path} in Spanish: HTTP {response.status}, Content-Language {response.getheader('Content-Language')}")
    with open(root + path, "wb") as out:
        out.write(body)
PY
chmod -R a+rX "$work/www"
mkdir -p "$work/nginx-temp"
cat >"$work/nginx.conf" <<EOF
# The same bytes as the feed, from disk, as fast as nginx serves them: one worker per core like the feed's
# event loops, no logging, sendfile, keep-alive.
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 10000000;
  default_type application/json;
  client_body_temp_path $work/nginx-temp/body;
  proxy_temp_path $work/nginx-temp/proxy;
  fastcgi_temp_path $work/nginx-temp/fastcgi;
  uwsgi_temp_path $work/nginx-temp/uwsgi;
  scgi_temp_path $work/nginx-temp/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
    location / { add_header Cache-Control "public, max-age=60"; }
  }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" 2>&1 | grep -v "could not open error log" >&2 || true
sleep 0.5
curl -sf -o /dev/null "http://127.0.0.1:$nginx_port$(head -1 "$work/lists/pois.txt")" || { echo "bench-feed: nginx does not serve the files" >&2; cat "$work/nginx-error.log" >&2; exit 1; }

cat >"$work/paths.lua" <<'LUA'
-- GET a random path of the list file given after --
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end
request = function() return wrk.format("GET", paths[math.random(#paths)]) end
LUA
# The same, asking for Spanish as a phone set to Spanish does.
sed 's|wrk.format("GET", paths\[math.random(#paths)\])|wrk.format("GET", paths[math.random(#paths)], { ["Accept-Language"] = "es-ES,es;q=0.9,en;q=0.5" })|' \
  "$work/paths.lua" >"$work/paths-es.lua"
grep -q Accept-Language "$work/paths-es.lua" || { echo "bench-feed: paths-es.lua lacks its header" >&2; exit 1; }
cat >"$work/post.lua" <<'LUA'
-- POST the bodies of the file given after --, one per line, in turn from a random start
local bodies = {}
local next_body = 0
init = function(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  next_body = math.random(#bodies)
end
request = function()
  next_body = next_body % #bodies + 1
  return wrk.format("POST", "/v1/events", { ["Content-Type"] = "application/json" }, bodies[next_body])
end
LUA

# wrk_run URL LUA LIST → "req/s p50_ms p99_ms non2xx requests seconds"
wrk_run() {
  local out
  out=$(wrk -t"$WRK_THREADS" -c"${4:-$CONNECTIONS}" -d"${DURATION}s" --latency -s "$2" "$1" -- "$3" 2>&1)
  echo "$out" >>"$work/wrk.log"
  echo "$out" | awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec:/ { rps = $2 }
    /^ +50%/ { p50 = ms($2) }
    /^ +99%/ { p99 = ms($2) }
    /Non-2xx or 3xx responses:/ { bad = $5 }
    / requests in / { requests = $1; seconds = $4; sub(/s,?$/, "", seconds) }
    END { printf "%s %.3f %.3f %d %d %s\n", rps, p50, p99, bad, requests, seconds }'
}

# pg_run SCRIPT → "tps p50_ms p99_ms"
pg_run() {
  rm -f "$work"/pgbench_log.*
  pgbench -n -h 127.0.0.1 -p "$pg_port" -U itour -c "$CONNECTIONS" -j 2 -T "$DURATION" -D pois="$POIS" -D tours="$TOURS" \
    -l --log-prefix="$work/pgbench_log" -f "$1" itour >"$work/pgbench.out" 2>&1 || { cat "$work/pgbench.out" >&2; exit 1; }
  local tps
  tps=$(awk '/^tps = / { print $3 }' "$work/pgbench.out")
  cat "$work"/pgbench_log.* | awk '{ print $3 / 1000 }' | sort -n | awk -v tps="$tps" '
    { v[NR] = $1 }
    END { i = int(NR * 0.5); if (i < 1) i = 1; j = int(NR * 0.99); if (j < 1) j = 1; printf "%s %.3f %.3f\n", tps, v[i], v[j] }'
}

cat >"$work/poi.sql" <<'SQL'
\set n random(0, :pois - 1)
SELECT p.id, p.version, p.content, p.updated_at,
       ARRAY(SELECT s.tour_id FROM catalog.tour_stops s JOIN catalog.tours t ON t.id = s.tour_id
             WHERE s.poi_id = p.id AND t.status = 'published' AND t.deleted_at IS NULL ORDER BY t.name) AS tour_ids
FROM catalog.pois p
WHERE p.id = ('c17e0000-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid AND p.deleted_at IS NULL;
SQL
cat >"$work/tour.sql" <<'SQL'
\set n random(0, :tours - 1)
SELECT t.id, t.version, t.content, t.updated_at,
       (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'summary', p.content::json->>'summary',
                                          'latitude', p.latitude, 'longitude', p.longitude,
                                          'category', p.content::json->'category') ORDER BY s.position)
        FROM catalog.tour_stops s JOIN catalog.pois p ON p.id = s.poi_id WHERE s.tour_id = t.id) AS stops
FROM catalog.tours t
WHERE t.id = ('c17e0001-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid AND t.status = 'published' AND t.deleted_at IS NULL;
SQL

# column N of the rows in FILE, median
col_median() { awk -v c="$2" '{ print $c }' "$1" | median; }
# ROUND FIRST SECOND: runs the two commands of a round, FIRST first in odd rounds and SECOND first in even ones, so
# neither side always runs in the wake of the other (a broker still storing the last round's events, a warmer cache).
in_turns() { if (($1 % 2)); then "$2"; "$3"; else "$3"; "$2"; fi; }
# FILE_A COL_A FILE_B COL_B: each round's ratio a/b (line N of both files is round N, run back to back), one per line.
round_ratios() { paste <(awk -v c="$2" '{ print $c }' "$1") <(awk -v c="$4" '{ print $c }' "$3") | awk '{ if ($2 > 0) printf "%.3f\n", $1 / $2; else print "n/a" }'; }
# The goal lines' ratio: the median of the rounds' ratios. A round's pair ran under the same load on a shared machine,
# which a ratio of two medians taken apart (one side's fast round against the other's slow one) does not keep.
paired_ratio() { round_ratios "$@" | median; }

if wants gets; then
  log "GET the small tour ($(wc -c <"$work/www$(cat "$work/lists/small.txt")") bytes): feed vs nginx, $ROUNDS rounds of ${DURATION}s, -c$SMALL_CONNECTIONS"
  : >"$work/small.feed"; : >"$work/small.nginx"
  small_feed() { wrk_run "$feed_url" "$work/paths.lua" "$work/lists/small.txt" "$SMALL_CONNECTIONS" >>"$work/small.feed"; }
  small_nginx() { wrk_run "http://127.0.0.1:$nginx_port" "$work/paths.lua" "$work/lists/small.txt" "$SMALL_CONNECTIONS" >>"$work/small.nginx"; }
  for ((round = 1; round <= ROUNDS; round++)); do
    in_turns "$round" small_feed small_nginx
    echo "  round $round: feed $(cut -d' ' -f1 <"$work/small.feed" | tail -1) req/s, nginx $(cut -d' ' -f1 <"$work/small.nginx" | tail -1) req/s" >&2
  done
fi

if wants media; then
  log "GET /v1/media/{sha256} of a $MEDIA_BYTES-byte image: feed vs nginx, $ROUNDS rounds of ${DURATION}s"
  mkdir -p "$work/www/v1/media"
  media_sha=$("$bin/itour-bench" media-file --bytes "$MEDIA_BYTES" --out "$work/media.bin")
  mv "$work/media.bin" "$work/www/v1/media/$media_sha"
  chmod a+r "$work/www/v1/media/$media_sha"
  echo "/v1/media/$media_sha" >"$work/lists/media.txt"
  deadline=$((SECONDS + 60))
  until [[ $(curl -s -o /dev/null -w '%{http_code}' "$feed_url/v1/media/$media_sha") == 200 ]]; do
    ((SECONDS < deadline)) || { echo "bench-feed: the feed does not serve the media file" >&2; exit 1; }
    sleep 0.2
  done
  : >"$work/media.feed"; : >"$work/media.nginx"
  media_feed() { wrk_run "$feed_url" "$work/paths.lua" "$work/lists/media.txt" >>"$work/media.feed"; }
  media_nginx() { wrk_run "http://127.0.0.1:$nginx_port" "$work/paths.lua" "$work/lists/media.txt" >>"$work/media.nginx"; }
  for ((round = 1; round <= ROUNDS; round++)); do
    in_turns "$round" media_feed media_nginx
    echo "  round $round: feed $(cut -d' ' -f1 <"$work/media.feed" | tail -1) req/s, nginx $(cut -d' ' -f1 <"$work/media.nginx" | tail -1) req/s" >&2
  done
fi

wants gets && for kind in tours pois; do
  log "GET /v1/$kind/{id}: feed vs nginx vs Postgres, $ROUNDS rounds of ${DURATION}s"
  : >"$work/$kind.feed"; : >"$work/$kind.nginx"; : >"$work/$kind.pg"
  kind_feed() { wrk_run "$feed_url" "$work/paths.lua" "$work/lists/$kind.txt" >>"$work/$kind.feed"; }
  kind_nginx() { wrk_run "http://127.0.0.1:$nginx_port" "$work/paths.lua" "$work/lists/$kind.txt" >>"$work/$kind.nginx"; }
  for ((round = 1; round <= ROUNDS; round++)); do
    in_turns "$round" kind_feed kind_nginx
    pg_run "$work/${kind%s}.sql" >>"$work/$kind.pg"
    echo "  round $round: feed $(cut -d' ' -f1 <"$work/$kind.feed" | tail -1) req/s, nginx $(cut -d' ' -f1 <"$work/$kind.nginx" | tail -1) req/s, postgres $(cut -d' ' -f1 <"$work/$kind.pg" | tail -1) tps" >&2
  done
  for target in feed nginx; do
    bad=$(awk '{ s += $4 } END { print s + 0 }' "$work/$kind.$target")
    ((bad == 0)) || { echo "bench-feed: $bad non-2xx answers from $target on /v1/$kind" >&2; exit 1; }
  done
done

if wants gets; then
  log "GET /v1/pois/{id} in Spanish (Accept-Language: es-ES,es;q=0.9,en;q=0.5): feed vs nginx, $ROUNDS rounds of ${DURATION}s"
  : >"$work/pois-es.feed"; : >"$work/pois-es.nginx"
  spanish_feed() { wrk_run "$feed_url" "$work/paths-es.lua" "$work/lists/pois.txt" >>"$work/pois-es.feed"; }
  spanish_nginx() { wrk_run "http://127.0.0.1:$nginx_port" "$work/paths.lua" "$work/lists/pois-es.txt" >>"$work/pois-es.nginx"; }
  for ((round = 1; round <= ROUNDS; round++)); do
    in_turns "$round" spanish_feed spanish_nginx
    echo "  round $round: feed $(cut -d' ' -f1 <"$work/pois-es.feed" | tail -1) req/s, nginx $(cut -d' ' -f1 <"$work/pois-es.nginx" | tail -1) req/s" >&2
  done
  for target in feed nginx; do
    bad=$(awk '{ s += $4 } END { print s + 0 }' "$work/pois-es.$target")
    ((bad == 0)) || { echo "bench-feed: $bad non-2xx answers from $target on /v1/pois in Spanish" >&2; exit 1; }
  done
fi

if wants queries; then
log "near and search on the city, one query at a time"
"$bin/itour-bench" feed-queries --count 3000 --paths "$work/lists" | tee "$work/queries.txt"
for kind in near search; do
  : >"$work/$kind.wrk"
  for ((round = 1; round <= ROUNDS; round++)); do wrk_run "$feed_url" "$work/paths.lua" "$work/lists/$kind.txt" >>"$work/$kind.wrk"; done
done
fi

if wants events; then
log "POST /v1/events, batches of 50"
"$bin/itour-bench" feed-event-bodies --batches 4000 --batch-size 50 --pois "$POIS" --tours "$TOURS" --out "$work/bodies.txt" --envelopes "$work/envelopes.txt" >&2
: >"$work/events.wrk"; : >"$work/events.raw"
events_feed() { wrk_run "$feed_url" "$work/post.lua" "$work/bodies.txt" >>"$work/events.wrk"; }
events_raw() {
  "$python" - "127.0.0.1:$broker_port" "bench.tracking.events" "$work/envelopes.txt" "$DURATION" "$linger_ms" >>"$work/events.raw" <<'PY'
# The broker's own limit: a raw librdkafka producer with the feed's settings (acks=all, idempotent, the
# same linger.ms, no compression) sending the same events as tracking.events messages as fast as it can for DURATION
# seconds; prints acked msgs/s.
import sys, time
from confluent_kafka import Producer
brokers, topic, path, duration, linger = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
messages = [line.rstrip("\n").split("\t", 1) for line in open(path)]
messages = [(key.encode(), value.encode()) for key, value in messages]
acked = 0
def delivered(error, message):
    global acked
    if error is None:
        acked += 1
producer = Producer({"bootstrap.servers": brokers, "enable.idempotence": True, "acks": "all", "linger.ms": linger,
                     "compression.codec": "none", "queue.buffering.max.messages": 500000})
start = time.monotonic()
index = 0
while time.monotonic() - start < duration:
    for _ in range(1000):
        key, value = messages[index % len(messages)]
        index += 1
        while True:
            try:
                producer.produce(topic, value, key, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.01)
    producer.poll(0)
producer.flush(60)
print(f"{acked / (time.monotonic() - start):.0f}")
PY
}
for ((round = 1; round <= ROUNDS; round++)); do
  in_turns "$round" events_feed events_raw
  echo "  round $round: feed $(awk '{ printf "%.0f", ($5 - $4) * 50 / $6 }' <(tail -1 "$work/events.wrk")) events/s, raw producer $(tail -1 "$work/events.raw") msgs/s" >&2
done
fi

# ---- summary ----
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "n/a" }'; }
echo
echo "=== feed benchmarks: $POIS POIs in $TOURS tours; wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s, pgbench -c$CONNECTIONS; medians of $ROUNDS rounds; $(nproc) cores"
grep -h "generate-city" "$work/generate.txt" || true
echo "feed RSS with the city loaded: ${rss_live} MiB live-loaded, ${rss_rebuilt} MiB after a rebuild from snapshot"
echo "feed rebuild from a snapshot (start to /ready): median ${rebuild_seconds} s of ${#rebuilds[@]} (${rebuilds[*]} s; consume+render ${phases[*]} s)"
if ((${#baseline_rebuilds[@]} > 0)); then
  baseline_seconds=$(printf '%s\n' "${baseline_rebuilds[@]}" | median)
  echo "baseline feed ($BASELINE_FEED), taking turns: median ${baseline_seconds} s (${baseline_rebuilds[*]} s); this feed / baseline $(ratio "$rebuild_seconds" "$baseline_seconds")"
fi
if wants gets; then
  f_rps=$(col_median "$work/small.feed" 1); n_rps=$(col_median "$work/small.nginx" 1)
  printf 'GET the small tour (%s bytes, -c%s): feed %.0f req/s (p50 %s ms, p99 %s ms) | nginx same bytes %.0f req/s (p50 %s, p99 %s) | feed/nginx %s\n' \
    "$(wc -c <"$work/www$(cat "$work/lists/small.txt")")" "$SMALL_CONNECTIONS" "$f_rps" "$(col_median "$work/small.feed" 2)" \
    "$(col_median "$work/small.feed" 3)" "$n_rps" "$(col_median "$work/small.nginx" 2)" "$(col_median "$work/small.nginx" 3)" "$(ratio "$f_rps" "$n_rps")"
fi
wants gets && for kind in tours pois; do
  f_rps=$(col_median "$work/$kind.feed" 1); n_rps=$(col_median "$work/$kind.nginx" 1); p_tps=$(col_median "$work/$kind.pg" 1)
  printf 'GET /v1/%s/{id}: feed %.0f req/s (p50 %s ms, p99 %s ms) | nginx same bytes %.0f req/s (p50 %s, p99 %s) | postgres SELECT %.0f tps (p50 %s, p99 %s) | feed/nginx %s, feed/postgres %s\n' \
    "$kind" "$f_rps" "$(col_median "$work/$kind.feed" 2)" "$(col_median "$work/$kind.feed" 3)" \
    "$n_rps" "$(col_median "$work/$kind.nginx" 2)" "$(col_median "$work/$kind.nginx" 3)" \
    "$p_tps" "$(col_median "$work/$kind.pg" 2)" "$(col_median "$work/$kind.pg" 3)" \
    "$(ratio "$f_rps" "$n_rps")" "$(ratio "$f_rps" "$p_tps")"
done
if wants gets; then
  f_rps=$(col_median "$work/pois-es.feed" 1); n_rps=$(col_median "$work/pois-es.nginx" 1)
  printf 'GET /v1/pois/{id} in Spanish: feed %.0f req/s (p50 %s ms, p99 %s ms) | nginx same bytes %.0f req/s (p50 %s, p99 %s) | feed/nginx %s\n' \
    "$f_rps" "$(col_median "$work/pois-es.feed" 2)" "$(col_median "$work/pois-es.feed" 3)" \
    "$n_rps" "$(col_median "$work/pois-es.nginx" 2)" "$(col_median "$work/pois-es.nginx" 3)" "$(ratio "$f_rps" "$n_rps")"
fi
if wants media; then
  f_rps=$(col_median "$work/media.feed" 1); n_rps=$(col_median "$work/media.nginx" 1)
  printf 'GET /v1/media/{sha256} (%s bytes, -c%s): feed %.0f req/s (p50 %s ms, p99 %s ms) | nginx same bytes %.0f req/s (p50 %s, p99 %s) | feed/nginx %s\n' \
    "$MEDIA_BYTES" "$CONNECTIONS" "$f_rps" "$(col_median "$work/media.feed" 2)" "$(col_median "$work/media.feed" 3)" \
    "$n_rps" "$(col_median "$work/media.nginx" 2)" "$(col_median "$work/media.nginx" 3)" "$(ratio "$f_rps" "$n_rps")"
fi
wants queries && cat "$work/queries.txt"
wants queries && for kind in near search; do
  printf '%s over HTTP with wrk: %.0f req/s (p50 %s ms, p99 %s ms)\n' "$kind" "$(col_median "$work/$kind.wrk" 1)" \
    "$(col_median "$work/$kind.wrk" 2)" "$(col_median "$work/$kind.wrk" 3)"
done
if wants events; then
awk '{ printf "%.0f\n", ($5 - $4) * 50 / $6 }' "$work/events.wrk" >"$work/events.rate"
events=$(median <"$work/events.rate")
raw=$(median <"$work/events.raw")
printf 'POST /v1/events (batches of 50): %s accepted events/s (p50 %s ms, p99 %s ms per batch) | raw librdkafka producer %s msgs/s (linger.ms %s, uncompressed, as the feed) | feed/raw %s\n' \
  "$events" "$(col_median "$work/events.wrk" 2)" "$(col_median "$work/events.wrk" 3)" "$raw" "$linger_ms" "$(ratio "$events" "$raw")"
fi

# The goals of issue 4 in one place (make proof copies these lines into its table).
wants queries && near_p99=$(sed -n 's/^near on the city:.*in-process p50 [0-9.]* ms p99 \([0-9.]*\) ms.*/\1/p' "$work/queries.txt")
wants queries && search_p99=$(sed -n 's/^search on the city:.*in-process p50 [0-9.]* ms p99 \([0-9.]*\) ms.*/\1/p' "$work/queries.txt")
echo
{ wants gets || wants media || wants events; } && echo "ratios below: the median of the rounds' ratios (each round's pair back to back)"
wants gets && echo "ratio GET small tour: $(paired_ratio "$work/small.feed" 1 "$work/small.nginx" 1)x nginx (goal >= 0.8x)"
wants gets && for kind in tours pois; do
  echo "ratio GET /v1/$kind/{id}: $(paired_ratio "$work/$kind.feed" 1 "$work/$kind.nginx" 1)x nginx (goal >= 0.85x), $(paired_ratio "$work/$kind.feed" 1 "$work/$kind.pg" 1)x postgres (goal >= 5x)"
done
wants gets && echo "ratio GET /v1/pois/{id} in Spanish (Accept-Language): $(paired_ratio "$work/pois-es.feed" 1 "$work/pois-es.nginx" 1)x nginx (goal >= 0.85x, as in English)"
wants media && echo "ratio GET media ($MEDIA_BYTES bytes): $(paired_ratio "$work/media.feed" 1 "$work/media.nginx" 1)x nginx (goal >= 0.7x)"
wants queries && echo "in-process p99 on $POIS POIs: near ${near_p99} ms, search ${search_p99} ms (goal < 1 ms)"
wants events && echo "ratio POST /v1/events: $events events/s (goal >= 50000), $(paired_ratio "$work/events.rate" 1 "$work/events.raw" 1)x raw producer (goal >= 0.5x; rounds $(round_ratios "$work/events.rate" 1 "$work/events.raw" 1 | paste -sd ' '); ratio of the medians $(ratio "$events" "$raw"))"
echo "feed RSS ${rss_rebuilt} MiB with $POIS POIs: $(awk -v r="$rss_rebuilt" -v n="$POIS" 'BEGIN { printf "%.1f", r * 1024 / n }') KiB per POI (goal <= 3); ready ${rebuild_seconds} s after start (goal <= 5 s)"
import_rate=$(sed -n 's/^generate-city: imported [0-9]* POIs in [0-9.]* s (\([0-9]*\) POIs\/s).*/\1/p' "$work/generate.txt")
echo "import rate ${import_rate:-n/a} POIs/s (goal >= 5000)"
