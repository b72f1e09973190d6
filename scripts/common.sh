# Sourced by the scripts here: paths, ports and process helpers they share.
# The paths below assume the repository root as working directory.

run_dir=$PWD/.run
pid_dir=$run_dir/pids
log_dir=$run_dir/logs
services=(catalog feed analytics admin)

# Default ports (DESIGN.md, "Ports"); each overridable as NAME_PORT, e.g. FEED_PORT=9080
# (up.sh hands it to the service as HTTP_PORT).
service_port() {
  local var
  case $1 in
    feed) var=${FEED_PORT:-8080} ;;
    admin) var=${ADMIN_PORT:-8081} ;;
    catalog) var=${CATALOG_PORT:-8082} ;;
    analytics) var=${ANALYTICS_PORT:-8083} ;;
    *) echo "unknown service $1" >&2; return 1 ;;
  esac
  echo "$var"
}

# Seconds since the epoch with decimals, and a duration since a start value, for timings.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# Whether process PID is alive. Not `kill -0`: a process that exited stays a zombie until its
# parent (nobody may, promptly) reaps it, and kill -0 calls a zombie alive.
alive() {
  local state
  state=$(sed -E 's/^.*\) ([A-Za-z]).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z && $state != X ]]
}

# The pid on the first line of PIDFILE if that process is alive and its command line contains
# PATTERN; guards against a stale pid file whose pid was reused.
live_pid() {
  local pidfile=$1 pattern=$2 pid
  [[ -f $pidfile ]] && read -r pid <"$pidfile" 2>/dev/null || return 1
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern" || return 1
  echo "$pid"
}

# build_summary: the lines of `swift build` output worth showing (errors, unused-code warnings, what was
# compiled, the result line), the last 3 of them, from stdin. Succeeds when none is there: an up-to-date
# build prints none of them, and a bare `grep | tail` under pipefail then failed the script (issue 49).
# A failing build still fails the pipeline (pipefail sees swift's status); only grep's "no match" (1) is
# not a failure, its real errors (2) are.
build_summary() {
  { grep -E -- 'error|warning: unre|Compiling|Build complete|Build of product' || (($? == 1)); } | tail -n 3
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop_pid NAME PID [GRACE]: SIGTERM, wait up to GRACE seconds (15), then SIGKILL.
stop_pid() {
  local name=$1 pid=$2 grace=${3:-15} i
  kill -CONT "$pid" 2>/dev/null || true   # a paused process cannot act on TERM
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    echo "$name: killed (pid $pid did not stop within ${grace}s of SIGTERM)"
  else
    echo "$name: stopped (pid $pid)"
  fi
}

# The pid of service NAME that make up started, if it is alive. The pid file holds the pid and, on
# its second line, the binary it runs (older pid files: the release binary).
service_pid() {
  local pidfile=$pid_dir/$1.pid bin
  bin=$(sed -n 2p "$pidfile" 2>/dev/null)
  live_pid "$pidfile" "${bin:-.build/release/$1}"
}

# stop_stray_broker PORT: a tansu listening on PORT that no pid file names any more (its pid file
# was removed, or names a newer one that failed), stopped by its pid.
stop_stray_broker() {
  local port=$1 pid
  for pid in $(ss -ltnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "tansu broker --listener-url tcp://127.0.0.1:$port " \
      && stop_pid "stray broker" "$pid" 10
  done
  return 0
}

# For the benchmarks (bench-feed.sh, bench-snapshots.sh), which run in a work folder $work with free ports $pg_port and
# $broker_port.
# bench_binaries PRODUCT...: sets `bin`, where the products are: ITOUR_BIN_DIR when set, else a release build of each.
bench_binaries() {
  if [[ -n ${ITOUR_BIN_DIR:-} ]]; then bin=$ITOUR_BIN_DIR; return; fi
  printf '\n== release build (%s)\n' "$*" >&2
  local product
  for product in "$@"; do
    swift build -c release --product "$product" >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
    tail -1 "$work/build.log" >&2
  done
  bin=$(swift build -c release --show-bin-path)
}

# bench_stores start|stop: a private Postgres (durability off: a benchmark's data is thrown away; BENCH_POSTGRES_OPTS
# adds settings) and broker in $work; started, the services' settings to reach them are exported.
bench_stores() {
  if [[ $1 == stop ]]; then
    scripts/broker.sh stop "$work/broker.pid" "$broker_port" "$work/broker.log" >/dev/null
    scripts/postgres.sh stop "$work/pg" "$pg_port" >/dev/null
    return 0
  fi
  printf '\n== private Postgres :%s and broker :%s\n' "$pg_port" "$broker_port" >&2
  POSTGRES_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off ${BENCH_POSTGRES_OPTS:-}" \
    scripts/postgres.sh start "$work/pg" "$pg_port" >&2
  scripts/broker.sh start "$work/broker.pid" "$broker_port" "$work/broker.log" >&2
  export POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_DB=itour KAFKA_BROKERS=127.0.0.1:$broker_port KAFKA_TOPIC_PREFIX=bench.
}
