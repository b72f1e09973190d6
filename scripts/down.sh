#!/usr/bin/env bash
# make down: stops what make up started — the four services (SIGTERM, then SIGKILL after 15 s),
# the broker and Postgres. Data stays in .run/pg; make clean removes it.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

pg_port=${POSTGRES_PORT:-5433}
broker_port=${BROKER_PORT:-9092}
status=0

# SIGTERM all four at once, so their 15 s grace periods overlap.
pids=()
names=()
for name in "${services[@]}"; do
  pidfile=$pid_dir/$name.pid
  if pid=$(live_pid "$pidfile" "release/$name"); then
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    pids+=("$pid") names+=("$name")
  else
    echo "$name: not running"
    rm -f "$pidfile"
  fi
done
for i in "${!pids[@]}"; do
  stop_pid "${names[$i]}" "${pids[$i]}" 15
  rm -f "$pid_dir/${names[$i]}.pid"
done

scripts/broker.sh stop "$run_dir/broker.pid" "$broker_port" "$log_dir/broker.log" || status=1
scripts/postgres.sh stop "$run_dir/pg" "$pg_port" || status=1
exit $status
