#!/bin/bash
# First start: initdb with POSTGRES_USER as the superuser and POSTGRES_PASSWORD (scram-sha-256 for
# every TCP client), then POSTGRES_DB, then the scripts in /docker-entrypoint-initdb.d/*.sh as the
# official image runs them (docker-compose.yml mounts deploy/postgres/initdb there: the services' own
# role, not a superuser). Later starts use the existing data directory.
set -euo pipefail
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
  if [[ $db != postgres ]]; then
    # From stdin, not -c: psql interpolates :"db" (quoted as an identifier) only there.
    echo 'CREATE DATABASE :"db";' | psql -X -q -h /var/run/postgresql -U "$user" -d postgres \
      -v ON_ERROR_STOP=1 -v db="$db"
  fi
  export POSTGRES_USER=$user POSTGRES_DB=$db PGHOST=/var/run/postgresql
  for script in /docker-entrypoint-initdb.d/*.sh; do
    [[ -e $script ]] || continue
    echo "postgres: running $script"
    bash "$script"
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres: initialised $PGDATA (user $user, database $db)"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql
