#!/usr/bin/env bash
# The development/test Kafka broker: tansu, memory-only (PLATFORM.md), in the background.
#
#   scripts/broker.sh start|stop|status PIDFILE PORT LOGFILE
#
# start waits until 127.0.0.1:PORT accepts connections; stop sends SIGTERM to the pid in
# PIDFILE (KILL after 10 s). Idempotent. A restart loses every topic and offset.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status PIDFILE PORT LOGFILE" >&2; exit 2; }
(($# >= 3)) || usage
root=$(cd "$(dirname "$0")/.." && pwd)
cmd=$1 pidfile=$2 port=$3 log=${4:-$root/.run/logs/broker-$3.log}
tansu=${TANSU:-$root/.local/bin/tansu}

source "$root/scripts/common.sh"   # live_pid, port_open, stop_pid

start() {
  local pid
  if pid=$(live_pid "$pidfile" tansu); then
    echo "broker: already running (pid $pid, 127.0.0.1:$port)"
    return 0
  fi
  [[ -x $tansu ]] || { echo "broker.sh: $tansu not found (run scripts/install.sh)" >&2; exit 1; }
  if port_open "$port"; then
    echo "broker.sh: port $port is already taken by another process (ss -ltnp | grep :$port)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$pidfile")" "$(dirname "$log")"
  # setsid: the broker outlives this script and a Ctrl-C in the terminal that started it.
  setsid "$tansu" broker \
    --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine memory://tansu/ \
    </dev/null >>"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$pidfile"
  for _ in $(seq 1 300); do
    if port_open "$port"; then
      echo "broker: started (pid $pid, 127.0.0.1:$port, log $log)"
      return 0
    fi
    # alive, not live_pid: until the child has exec'd tansu its command line is still this script's.
    if ! alive "$pid"; then
      rm -f "$pidfile"
      echo "broker.sh: tansu exited at start-up; last lines of $log:" >&2
      tail -n 20 "$log" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
  echo "broker.sh: tansu (pid $pid) did not open port $port within 30 s; see $log" >&2
  kill "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  exit 1
}

stop() {
  local pid
  if ! pid=$(live_pid "$pidfile" tansu); then
    rm -f "$pidfile"
    echo "broker: not running ($pidfile)"
    return 0
  fi
  stop_pid broker "$pid" 10
  rm -f "$pidfile"
}

status() {
  local pid
  if pid=$(live_pid "$pidfile" tansu); then
    echo "broker: running (pid $pid, 127.0.0.1:$port)"
  else
    echo "broker: not running"
    return 3
  fi
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
