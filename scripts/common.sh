# Sourced by up.sh, down.sh and test.sh: paths, ports and process helpers shared by them.
# Expects to run from the repository root.

run_dir=$PWD/.run
pid_dir=$run_dir/pids
log_dir=$run_dir/logs
services=(catalog feed analytics admin)

# Default ports (DESIGN.md, "Ports"); each overridable as NAME_PORT, e.g. FEED_PORT=9080.
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

# The pid in PIDFILE if that process is alive (not a zombie) and its command line contains
# PATTERN; guards against a stale pid file whose pid was reused.
live_pid() {
  local pidfile=$1 pattern=$2 pid state
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z && $state != X ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern" || return 1
  echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop_pid NAME PID [GRACE]: SIGTERM, wait up to GRACE seconds (15), then SIGKILL.
stop_pid() {
  local name=$1 pid=$2 grace=${3:-15} i
  kill -CONT "$pid" 2>/dev/null || true   # a paused process cannot act on TERM
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    [[ -d /proc/$pid ]] && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || break
    sleep 0.1
  done
  if [[ -d /proc/$pid ]] && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; then
    kill -KILL "$pid" 2>/dev/null || true
    echo "$name: killed (pid $pid did not stop within ${grace}s of SIGTERM)"
  else
    echo "$name: stopped (pid $pid)"
  fi
}
