#!/usr/bin/env bash
# make test: every test against a real Postgres and a real broker.
#
#   scripts/test.sh [swift test args...]        e.g. make test ARGS='--filter FeedTests'
#
# Starts a private Postgres (.run/test-pg, port 5434) and broker (port 9094) — not make up's,
# so both can run at once — builds, runs `swift test`, then the Python tests in tests/ (if
# any), and always stops its Postgres and broker. Exits nonzero if any step failed.
#
# The tests get:
#   ITOUR_TEST_POSTGRES_HOST=127.0.0.1 ITOUR_TEST_POSTGRES_PORT=5434
#   ITOUR_TEST_POSTGRES_USER=itour ITOUR_TEST_POSTGRES_DATABASE=itour
#   ITOUR_TEST_KAFKA_BROKERS=127.0.0.1:9094
#   ITOUR_BIN_DIR=$PWD/.build/debug            (the Python tests start the services from here)
#   LD_LIBRARY_PATH=$PWD/.local/lib            (librdkafka 2.x; PLATFORM.md)
#
# With swift test args (ARGS) the Python tests are skipped unless PYTEST_ARGS is set too;
# PYTEST_ARGS alone (e.g. PYTEST_ARGS='-k admin') passes arguments to pytest.
# Last, `make containers` (scripts/containers.sh): the images built and the suite run from them;
# skipped when arguments narrow the run, when a step before failed, or with CONTAINERS=0.
#
# Flakiness (README, "Flakiness under load"; figures in docs/BENCHMARKS.md): REPEAT=N runs the Swift and Python steps
# N times over one build, and LOAD=1 keeps every core busy with spinning processes meanwhile, e.g. the suites once flaky
# under load, ten times:
#   make test REPEAT=10 LOAD=1 CONTAINERS=0 ARGS='--filter "brokerUnavailable|SnapshotMediaFeedTests"' PYTEST_ARGS='-k test_restarts'
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

test_pg_port=${ITOUR_TEST_POSTGRES_PORT:-5434}
test_broker_port=${ITOUR_TEST_BROKER_PORT:-9094}
# Other ports get their own cluster and pid file, so two runs (ports apart) can go at once.
suffix=; [[ $test_pg_port != 5434 || $test_broker_port != 9094 ]] && suffix=-$test_pg_port-$test_broker_port
test_pg_dir=$run_dir/test-pg$suffix
test_broker_pid=$run_dir/test-broker$suffix.pid

export ITOUR_TEST_POSTGRES_HOST=127.0.0.1
export ITOUR_TEST_POSTGRES_PORT=$test_pg_port
export ITOUR_TEST_POSTGRES_USER=itour
export ITOUR_TEST_POSTGRES_DATABASE=itour
export ITOUR_TEST_KAFKA_BROKERS=127.0.0.1:$test_broker_port
export ITOUR_BIN_DIR=$PWD/.build/debug
export LD_LIBRARY_PATH=$PWD/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

REPEAT=${REPEAT:-1}
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "make test: REPEAT must be 1 or more" >&2; exit 2; }
load_pids=()
t0=$(now)
failed=()
summary=()

# phase NAME COMMAND...: runs it, prints its duration, records a failure.
phase() {
  local name=$1 t rc
  shift
  echo
  echo "==> $name"
  t=$(now)
  # In its own process group, in the background: a signal to this script is then handled at
  # once (bash defers traps while a foreground child runs) and reaches every process the step
  # started (test runners, service binaries), see on_signal.
  setsid "$@" &
  child=$!
  wait "$child"
  rc=$?
  child=
  if ((rc == 0)); then
    summary+=("$(printf '%-16s ok      %s' "$name" "$(since "$t")")")
  else
    failed+=("$name")
    summary+=("$(printf '%-16s FAILED  %s (exit %d)' "$name" "$(since "$t")" "$rc")")
  fi
  echo "<== $name: $( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)"), $(since "$t")"
  return $rc
}

# LOAD=1: one spinning process per core, at the tests' own priority, while the test steps run. Each spins only while
# this script lives, so none is left behind if it is killed.
start_load() {
  [[ ${LOAD:-0} == 1 ]] || return 0
  local i
  for ((i = 0; i < $(nproc); i++)); do
    bash -c "while kill -0 $$ 2>/dev/null; do :; done" &
    load_pids+=($!)
  done
  echo; echo "==> load: ${#load_pids[@]} spinning processes (LOAD=1)"
}

stop_load() {
  if ((${#load_pids[@]})); then kill "${load_pids[@]}" 2>/dev/null; fi
  load_pids=()
}

cleanup() {
  stop_load
  echo
  echo "==> stopping test postgres and broker"
  scripts/broker.sh stop "$test_broker_pid" "$test_broker_port" "$log_dir/test-broker$suffix.log" || true
  scripts/postgres.sh stop "$test_pg_dir" "$test_pg_port" || true
}

finish() {
  local rc=$?
  cleanup
  echo
  echo "==> summary ($(since "$t0") in all)"
  printf '    %s\n' "${summary[@]}"
  if ((${#failed[@]})); then
    echo "make test: FAILED (${failed[*]})"
    exit 1
  fi
  if ((rc != 0)); then
    echo "make test: FAILED (exit $rc)"
    exit "$rc"
  fi
  echo "make test: passed"
}
on_signal() {
  local rc=$1 i
  if [[ -n ${child:-} ]]; then
    echo
    echo "==> interrupted: stopping the running step (process group $child)"
    kill -TERM -- "-$child" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 -- "-$child" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$child" 2>/dev/null || true
  fi
  exit "$rc"
}
child=
trap finish EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

mkdir -p "$log_dir"
phase install scripts/install.sh || exit 1
# The test cluster trades durability across OS crashes for speed; process crashes are still safe.
phase postgres env POSTGRES_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  scripts/postgres.sh start "$test_pg_dir" "$test_pg_port" || exit 1
phase broker scripts/broker.sh start "$test_broker_pid" "$test_broker_port" "$log_dir/test-broker$suffix.log" || exit 1

if phase build scripts/build-checked.sh; then
  # The suites whose tests hold wall-clock bounds on live connections (idle timeouts, connection caps, leases, a
  # broker's loss) run on their own after the rest: among ~300 tests at once on two cores their server threads
  # starved for seconds, and they failed together in fresh-clone CI runs while passing alone. With test arguments,
  # one run as asked.
  timing_suites="ConnectionTests|FeedHardeningTests|AdminHardeningTests|EventHTTPTests|ShutdownDrainTests|ImportLeaseTests|KafkaRecoveryTests"
  start_load
  for ((round = 1; round <= REPEAT; round++)); do
    # With REPEAT, each step's name carries its round: swift-test#3.
    tag=; ((REPEAT > 1)) && tag="#$round"
    if (($# == 0)); then
      phase "swift-test$tag" swift test --skip-build --skip "$timing_suites"
      phase "swift-timing$tag" swift test --skip-build --filter "$timing_suites"
    else
      phase "swift-test$tag" swift test --skip-build "$@"
    fi

    shopt -s nullglob globstar
    py_tests=(tests/**/test_*.py tests/**/*_test.py)
    shopt -u globstar
    if ((${#py_tests[@]} == 0)); then
      echo
      echo "==> pytest: no tests in tests/, skipped"
    elif (($# > 0)) && [[ -z ${PYTEST_ARGS:-} ]]; then
      echo
      echo "==> pytest: skipped (swift test arguments given; set PYTEST_ARGS to run it too)"
    else
      # PYTEST_ARGS is read as shell words, so quotes group: PYTEST_ARGS='-k "first_week or axe"'.
      eval "pytest_args=(${PYTEST_ARGS:-})"
      phase "pytest$tag" .venv/bin/python -m pytest tests -q ${pytest_args[@]+"${pytest_args[@]}"}
    fi
  done
  stop_load
fi

# The images, run as operators run them (compose, kube play). Skipped with test arguments, like pytest,
# or with CONTAINERS=0; `make containers` runs it alone.
if (($# > 0 || ${#failed[@]} > 0)) || [[ ${CONTAINERS:-1} == 0 ]] || [[ -n ${PYTEST_ARGS:-} ]]; then
  echo
  echo "==> containers: skipped (test arguments given, an earlier step failed, or CONTAINERS=0)"
else
  # CI's clean clone may sit on a small disk (one run failed writing the release build): the debug
  # build has served its tests, so CI drops it before the release build and the images.
  if [[ -n ${CI:-} ]]; then
    echo; echo "==> CI: removing the debug build before the containers step"
    rm -rf .build
    df -h . | sed 's/^/    /'
  fi
  phase containers scripts/containers.sh
fi
