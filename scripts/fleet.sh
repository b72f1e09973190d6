#!/usr/bin/env bash
# make fleet: two of every service against one Postgres and one broker, under steady load (events through
# both feeds, a save every half second through both admins, feed reads), while analytics is killed -9 and
# each service is restarted one replica at a time, FLEET_ROUNDS times (default 3), and a catalog is stopped
# for good; plus the same category saved through two catalogs at once. The quick form (one round) runs in
# make test. Prints a table (events acknowledged and counted, failed saves, the longest save per step, feed
# reads by status); figures as JSON in .run/fleet-result.json. Exits nonzero on any violation.
# Runs on make test's private Postgres and broker (ports FLEET_PG_PORT=5484, FLEET_BROKER_PORT=9144).
set -uo pipefail
cd "$(dirname "$0")/.."
export FLEET_ROUNDS=${FLEET_ROUNDS:-3} CONTAINERS=0
export ITOUR_TEST_POSTGRES_PORT=${FLEET_PG_PORT:-5484} ITOUR_TEST_BROKER_PORT=${FLEET_BROKER_PORT:-9144}
PYTEST_ARGS="-k test_fleet -s" exec scripts/test.sh --filter 'no swift tests: fleet only'
