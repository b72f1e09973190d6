#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for development and tests.
#
#   scripts/postgres.sh start|stop|status DIR PORT
#
# Layout: DIR/data (the cluster), DIR/postgres.log (server log), DIR/.s.PGSQL.PORT (socket).
# (As root with DIR out of the postgres user's reach, DIR becomes a link into /var/tmp.)
# The cluster listens on 127.0.0.1:PORT only, trusts local connections, and has superuser
# `itour` and database `itour` (owned by itour). Idempotent: start on a running cluster and
# stop on a stopped one succeed without doing anything.
#
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user and
# initdb/pg_ctl run through runuser; otherwise they run as the calling user.
# Extra server settings may be passed in POSTGRES_OPTS (e.g. "-c fsync=off" for tests).
set -euo pipefail

usage() { echo "usage: $0 start|stop|status DIR PORT" >&2; exit 2; }
(($# == 3)) || usage
cmd=$1 port=$3
if [[ $cmd != start && ! -d $2 ]]; then
  echo "postgres: not running ($2)"
  [[ $cmd == status ]] && exit 3
  exit 0
fi
mkdir -p "$2"
# As root, the cluster must sit where the postgres user can reach it. A checkout under a
# private home (/root is 0700) cannot: then the cluster lives in /var/tmp and DIR links to it.
if [[ $cmd == start && $(id -u) -eq 0 && ! -L $2 ]] && ! runuser -u postgres -- test -x "$2" 2>/dev/null \
    && [[ -z $(ls -A "$2") ]]; then
  real=/var/tmp/itour-postgres-$(cd "$2" && pwd | sha1sum | cut -c1-12)
  mkdir -p "$real"
  rmdir "$2" && ln -s "$real" "$2"
fi
dir=$(cd -P "$2" && pwd)
data=$dir/data
log=$dir/postgres.log
bin=${POSTGRES_BIN:-/usr/lib/postgresql/15/bin}
[[ -x $bin/pg_ctl ]] || { echo "postgres.sh: $bin/pg_ctl not found (run scripts/install.sh)" >&2; exit 1; }

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd / && runuser -u postgres -- "$@")   # from /: the caller's directory may be closed to it
  else
    "$@"
  fi
}

source "$(dirname "$0")/common.sh"   # live_pid

# The postmaster's pid if it is alive (postmaster.pid's first line). Not `pg_ctl status`: after
# a crash the postmaster can linger as a zombie, which pg_ctl's kill -0 calls alive.
server_pid() { live_pid "$data/postmaster.pid" postgres; }
running() { server_pid >/dev/null; }

start() {
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { echo "postgres.sh: no 'postgres' user (apt-get install postgresql)" >&2; exit 1; }
    chown postgres:postgres "$dir"
    [[ -d $data ]] && chown -R postgres:postgres "$data"
    [[ -f $log ]] && chown postgres:postgres "$log"
  fi
  if [[ ! -f $data/PG_VERSION ]]; then
    rm -rf "$data"
    as_owner "$bin/initdb" -D "$data" -A trust -U itour -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
      || { echo "postgres.sh: initdb failed, see $dir/initdb.log" >&2; cat "$dir/initdb.log" >&2; exit 1; }
  fi
  if running; then
    echo "postgres: already running ($dir, port $port)"
  else
    # After a crash: lock files naming a dead (or zombie) postmaster would block the start.
    rm -f "$data/postmaster.pid" "$dir/.s.PGSQL.$port.lock"
    local attempt
    for attempt in 1 2 3; do
      # A crashed postmaster's children may hold its shared memory for a moment: retry.
      as_owner "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 ${POSTGRES_OPTS:-}" start >/dev/null && break
      if ((attempt == 3)); then
        echo "postgres.sh: could not start the cluster in $dir; last lines of $log:" >&2
        tail -n 20 "$log" >&2 || true
        exit 1
      fi
      sleep 2
    done
    echo "postgres: started ($dir, 127.0.0.1:$port)"
  fi
  local psql=("$bin/psql" -X -q -h "$dir" -p "$port" -U itour -d postgres -v ON_ERROR_STOP=1 -tA)
  local exists
  exists=$(as_owner "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'itour'")
  if [[ -z $exists ]]; then
    as_owner "${psql[@]}" -c "CREATE DATABASE itour OWNER itour"
    echo "postgres: created database itour"
  fi
}

stop() {
  local pid
  if pid=$(server_pid); then
    if ! as_owner "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      echo "postgres: killed (postmaster $pid did not stop within 30 s)"
      return 0
    fi
    echo "postgres: stopped ($dir)"
  else
    echo "postgres: not running ($dir)"
  fi
}

status() {
  if running; then
    echo "postgres: running ($dir, port $port)"
  else
    echo "postgres: not running ($dir)"
    return 3
  fi
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
