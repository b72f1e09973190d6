#!/usr/bin/env bash
# make faults: the fault run (tests/faults/fault_run.py) on a Postgres and broker of its own.
#
#   scripts/faults.sh [run|hostile|all]     (default run)
#
# run: the fault run below. hostile: the hostile-input suite (pytest tests/faults/test_hostile.py,
# PYTEST_ARGS passed on, HOSTILE_SELECT as its -k) on the same private Postgres and broker. all: both, one after the other.
#
# Starts a private Postgres (.run/faults-pg, port FAULTS_PG_PORT=5464) and tansu broker (port
# FAULTS_BROKER_PORT=9114), then the four services (ITOUR_BIN_DIR, default .build/debug) on a fresh
# database, and drives a workload of tracking events and content edits while it kills each service
# with SIGKILL and restarts it, restarts Postgres, pauses the broker (SIGSTOP/SIGCONT) and overloads
# the feed; then (issue 14) restarts the whole stack as make down && make up does it (drain included),
# kills the broker with SIGKILL and brings it back empty, and deletes and re-creates tracking.events and
# catalog.events. Prints a table; exits nonzero on any lost or double-counted event (events acknowledged
# before a broker loss and not yet counted are reported apart), lost or duplicated content edit, service
# not ready again, feed read failing during the Postgres/broker outages, or a restart/broker-loss check
# failing (no 202, no counting, an edit not on the feed within 5 s, topics with the wrong partitions).
# Always stops its Postgres and broker. Figures as JSON in FAULTS_RESULT (.run/faults-result.json).
# Knobs: FAULTS_MAX_EVENTS (16000), FAULTS_MAX_EDITS (120), FAULTS_BATCH (20), FAULTS_BROKER_PAUSE (6),
# FAULTS_SCENARIOS (kill,postgres,pause,overload,restart,broker-loss,topic-reset), FAULTS_RECOVERY_TIMEOUT
# (60), FAULTS_DRAIN_LOAD_SECONDS (3 s of posting when the restart stops the writers), DRAIN_TIMEOUT (60).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

pg_dir=$run_dir/faults-pg
pg_port=${FAULTS_PG_PORT:-5464}
broker_port=${FAULTS_BROKER_PORT:-9114}
broker_pid=$run_dir/faults-broker.pid
broker_log=$log_dir/faults-broker.log

export ITOUR_TEST_POSTGRES_HOST=127.0.0.1
export ITOUR_TEST_POSTGRES_PORT=$pg_port
export ITOUR_TEST_POSTGRES_USER=itour
export ITOUR_TEST_POSTGRES_DATABASE=itour
export ITOUR_TEST_KAFKA_BROKERS=127.0.0.1:$broker_port
export ITOUR_BIN_DIR=${ITOUR_BIN_DIR:-$PWD/.build/debug}
export LD_LIBRARY_PATH=$PWD/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FAULTS_PG_DIR=$pg_dir FAULTS_BROKER_PIDFILE=$broker_pid FAULTS_BROKER_LOG=$broker_log
export FAULTS_RESULT=${FAULTS_RESULT:-$run_dir/faults-result.json}

for bin in catalog feed analytics admin; do
  [[ -x $ITOUR_BIN_DIR/$bin ]] || { echo "faults.sh: $ITOUR_BIN_DIR/$bin missing (swift build)" >&2; exit 1; }
done
# A copy of the binaries, so a build running meanwhile cannot swap one under a restart mid-run.
if [[ ${FAULTS_SNAPSHOT:-1} == 1 ]]; then
  snap=$run_dir/faults-bin
  mkdir -p "$snap"
  for bin in catalog feed analytics admin; do
    # A binary the linker is still writing is neither stable nor equal to its copy: wait and retry.
    for attempt in $(seq 1 60); do
      if (($(date +%s) - $(stat -c %Y "$ITOUR_BIN_DIR/$bin") >= 5)) && cp -p "$ITOUR_BIN_DIR/$bin" "$snap/$bin.tmp" \
          && cmp -s "$ITOUR_BIN_DIR/$bin" "$snap/$bin.tmp"; then
        mv -f "$snap/$bin.tmp" "$snap/$bin"
        break
      fi
      ((attempt == 60)) && { echo "faults.sh: $ITOUR_BIN_DIR/$bin keeps changing (a build is running?)" >&2; exit 1; }
      sleep 3
    done
  done
  echo "==> faults: binaries from $ITOUR_BIN_DIR ($(date -r "$ITOUR_BIN_DIR/feed" +%H:%M)..), copied to $snap"
  export ITOUR_BIN_DIR=$snap
fi
[[ -x .venv/bin/python ]] || { echo "faults.sh: .venv missing (scripts/install.sh)" >&2; exit 1; }

# A tansu that broker.sh lost track of (its pid file names another pid) but that listens on this run's
# own port is stopped by its pid (common.sh), so this or the next run can start one.

child=
cleanup() {
  [[ -n $child ]] && kill -TERM -- "-$child" 2>/dev/null
  echo "==> faults: stopping its postgres and broker"
  kill -CONT "$(cat "$broker_pid" 2>/dev/null)" 2>/dev/null || true   # never leave it paused
  scripts/broker.sh stop "$broker_pid" "$broker_port" "$broker_log" || true
  stop_stray_broker "$broker_port"
  scripts/postgres.sh stop "$pg_dir" "$pg_port" || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$log_dir"
t0=$(now)
echo "==> faults: postgres on $pg_port, broker on $broker_port"
POSTGRES_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  scripts/postgres.sh start "$pg_dir" "$pg_port" || exit 1
# Right after a previous run's broker stopped, the port can still be held for a moment: retry.
for attempt in 1 2 3 4 5; do
  scripts/broker.sh start "$broker_pid" "$broker_port" "$broker_log" && break
  ((attempt == 5)) && exit 1
  sleep 2
  stop_stray_broker "$broker_port"
done

mode=${1:-run}
# step COMMAND...: in its own process group, so an interrupt reaches the services it started.
step() {
  setsid "$@" &
  child=$!
  wait "$child"
  local rc=$?
  child=
  return $rc
}
rc=0
case $mode in
  run | all) step .venv/bin/python -u tests/faults/fault_run.py || rc=$? ;;&
  hostile | all)
    # shellcheck disable=SC2086 # PYTEST_ARGS is a list of words on purpose
    step .venv/bin/python -m pytest tests/faults/test_hostile.py -q -p no:cacheprovider -rfE \
      ${HOSTILE_SELECT:+-k "$HOSTILE_SELECT"} ${PYTEST_ARGS:-} || rc=$? ;;
  run) ;;
  *) echo "usage: $0 [run|hostile|all]" >&2; exit 2 ;;
esac
echo "==> faults: $( ((rc == 0)) && echo passed || echo "FAILED (exit $rc)") in $(since "$t0")"
exit $rc
