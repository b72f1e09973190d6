#!/usr/bin/env bash
# make down: stops what make up started, draining the memory-only broker first.
#
#   1. the writers: feed (tracking events) and admin (commands), SIGTERM (SIGKILL after 15 s);
#   2. the drain (scripts/drain.sh): catalog applies every command still in catalog.commands and
#      its relay publishes the outbox; analytics counts every event still in tracking.events.
#      Bounded by DRAIN_TIMEOUT seconds (60), progress on the way; when it gives up it says what is
#      left (e.g. "analytics: 4 896 events not yet counted"). DRAIN=0 skips it. Analytics' figure is
#      exact (scripts/backlog.py: the broker's high watermarks against analytics' stored offsets);
#      catalog's comes from its /metrics;
#   3. the readers: catalog and analytics;
#   4. the broker (everything it held is gone: it keeps nothing on disk), then Postgres.
# Data stays in .run/pg; make clean removes it. Exit 0 when all stopped and drained; 1 when
# something could not be stopped or the drain gave up (the events it names are lost).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

pg_port=${POSTGRES_PORT:-5433}
broker_port=${BROKER_PORT:-9092}
status=0
t0=$(now)

# stop_group NAME...: SIGTERM all at once (their 15 s grace periods overlap), then wait for each.
stop_group() {
  local pids=() names=() name pid i
  for name in "$@"; do
    if pid=$(service_pid "$name"); then
      kill -CONT "$pid" 2>/dev/null || true
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid") names+=("$name")
    else
      echo "$name: not running"
      rm -f "$pid_dir/$name.pid"
    fi
  done
  for i in "${!pids[@]}"; do
    stop_pid "${names[$i]}" "${pids[$i]}" 15
    rm -f "$pid_dir/${names[$i]}.pid"
  done
}

echo "==> writers (feed, admin)"
stop_group feed admin

if [[ ${DRAIN:-1} == 0 ]]; then
  echo "==> drain: skipped (DRAIN=0)"
elif ! live_pid "$run_dir/broker.pid" tansu >/dev/null; then
  echo "==> drain: the broker is not running; nothing to drain"
else
  args=()
  for name in catalog analytics; do
    if service_pid "$name" >/dev/null; then
      args+=("--$name" "http://127.0.0.1:$(service_port "$name")")
    else
      echo "drain: $name is not running: what the broker holds for it is lost when the broker stops"
    fi
  done
  echo "==> drain (up to ${DRAIN_TIMEOUT:-60}s)"
  if ((${#args[@]})); then
    # Exact figures for analytics when the venv is there: the broker's watermarks against the offsets
    # analytics stored in Postgres (scripts/backlog.py); else its lag gauge on /metrics.
    [[ -x .venv/bin/python ]] && export DRAIN_BROKERS=127.0.0.1:$broker_port DRAIN_PG_PORT=$pg_port \
      DRAIN_PG_DB=${POSTGRES_DB:-itour} DRAIN_TOPIC_PREFIX=${KAFKA_TOPIC_PREFIX:-}
    # backlog.py's psql logs in as itour: make up's cluster asks for its password (scripts/postgres.sh).
    [[ -r $run_dir/secrets/postgres-password ]] && PGPASSWORD=$(<"$run_dir/secrets/postgres-password") && export PGPASSWORD
    scripts/drain.sh "${args[@]}" | grep -v '^drain: result '
    if ((PIPESTATUS[0] != 0)); then
      status=1
      echo "make down: the drain gave up; the broker is stopped anyway (it is memory-only: what it still held is lost)" >&2
    fi
  fi
fi

echo "==> readers (catalog, analytics)"
stop_group catalog analytics

echo "==> broker and postgres"
scripts/broker.sh stop "$run_dir/broker.pid" "$broker_port" "$log_dir/broker.log" || status=1
stop_stray_broker "$broker_port"
scripts/postgres.sh stop "$run_dir/pg" "$pg_port" || status=1
echo "make down: $( ((status == 0)) && echo done || echo "done, with the warnings above") in $(since "$t0")"
exit $status
