#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for development and tests.
#
#   scripts/postgres.sh start|stop|status DIR PORT
#   POSTGRES_SECRETS_DIR=SECRETS scripts/postgres.sh start DIR PORT     (passwords; what make up runs)
#
# Layout: DIR/data (the cluster), DIR/postgres.log (server log), DIR/.s.PGSQL.PORT (socket).
# (As root with DIR out of the postgres user's reach, DIR becomes a link into /var/tmp.)
# The cluster listens on 127.0.0.1:PORT and its socket in DIR only. Idempotent: start on a running
# cluster and stop on a stopped one succeed without doing anything.
#
# Two ways to let clients in:
# - trust (no POSTGRES_SECRETS_DIR; make test's, the benches' and the fault runs' throwaway clusters,
#   whose clients, the Swift tests among them, have no password to give): superuser `itour`, database
#   `itour`, no password asked of anyone who reaches 127.0.0.1:PORT or the socket.
# - passwords (POSTGRES_SECRETS_DIR set; make up's cluster): scram-sha-256 for every connection, TCP and
#   socket alike. Superuser `itour_admin` (administration only) and the services' role `itour` (LOGIN,
#   not a superuser, no CREATEROLE or CREATEDB), owner of database `itour`, where it creates its schemas.
#   Their passwords are made once (openssl rand -hex 24) into SECRETS/postgres-admin-password and
#   SECRETS/postgres-password (mode 0600, SECRETS 0700) and reused on every later start; the files
#   are the truth: a changed postgres-password is set on the role at the next start.
#   A cluster made with trust before (an older .run/pg) is closed on its first start in this mode,
#   its data kept: the bootstrap superuser `itour` becomes `itour_admin`, a new role `itour` (not a
#   superuser) takes over database itour and everything in it that the old one owned, pg_hba.conf
#   asks for passwords, and the server reloads. Clients still connected keep their sessions (as the
#   renamed superuser) until they reconnect: restart them.
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

admin_role=itour_admin app_role=itour
secrets_dir=${POSTGRES_SECRETS_DIR:-}
if [[ -n $secrets_dir ]]; then
  mkdir -p "$secrets_dir"
  secrets_dir=$(cd "$secrets_dir" && pwd)
fi
admin_secret=$secrets_dir/postgres-admin-password app_secret=$secrets_dir/postgres-password

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
  if [[ -n $secrets_dir ]]; then
    make_secret "$admin_secret"
    make_secret "$app_secret"
  fi
  if [[ ! -f $data/PG_VERSION ]]; then
    rm -rf "$data"
    local auth=(-A trust -U itour) pwfile=
    if [[ -n $secrets_dir ]]; then
      # initdb reads the superuser's password from a file it can open: a copy the cluster's owner reads, removed after.
      pwfile=$dir/.initdb-password
      (umask 077 && cp "$admin_secret" "$pwfile")
      [[ $(id -u) -eq 0 ]] && chown postgres:postgres "$pwfile"
      auth=(-A scram-sha-256 -U "$admin_role" "--pwfile=$pwfile")
    fi
    as_owner "$bin/initdb" -D "$data" "${auth[@]}" -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
      || { rm -f "$pwfile"; echo "postgres.sh: initdb failed, see $dir/initdb.log" >&2; cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
    [[ -n $secrets_dir ]] && write_hba
  elif [[ -z $secrets_dir ]] && ! hba_trusts; then
    echo "postgres.sh: the cluster in $dir asks for passwords; set POSTGRES_SECRETS_DIR to the directory of its password files" >&2
    exit 1
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
  if [[ -n $secrets_dir ]]; then
    hba_trusts && close_trust_cluster
    ensure_roles
    return
  fi
  local psql=("$bin/psql" -X -q -h "$dir" -p "$port" -U itour -d postgres -v ON_ERROR_STOP=1 -tA)
  local exists
  exists=$(as_owner "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'itour'")
  if [[ -z $exists ]]; then
    as_owner "${psql[@]}" -c "CREATE DATABASE itour OWNER itour"
    echo "postgres: created database itour"
  fi
}

# ---- password mode -----------------------------------------------------------------------------

# make_secret FILE: a new random password in FILE (mode 0600, its directory 0700) unless FILE has one.
make_secret() {
  local file=$1 value
  chmod 0700 "$(dirname "$file")"
  if [[ -s $file ]]; then
    chmod 0600 "$file"
  else
    value=$(openssl rand -hex 24 2>/dev/null || python3 -c 'import secrets; print(secrets.token_hex(24))')
    (umask 077 && printf '%s\n' "$value" >"$file")
    echo "postgres: made a password in $file"
  fi
  secret_of "$file" >/dev/null
}

# secret_of FILE: the password on FILE's first line; refuses an empty one.
secret_of() {
  local value
  IFS= read -r value <"$1" || true
  [[ -n $value ]] || { echo "postgres.sh: $1 holds no password (its first line is empty)" >&2; exit 1; }
  printf '%s' "$value"
}

# SQL string literal (standard_conforming_strings is on: only quotes are doubled).
sql_literal() { printf "'%s'" "${1//\'/\'\'}"; }

# Whether pg_hba.conf lets anyone in without a password.
hba_trusts() { grep -Eq '^[[:space:]]*(local|host)[^#]*[[:space:]]trust([[:space:]]|$)' "$data/pg_hba.conf"; }

write_hba() {
  local tmp=$data/pg_hba.conf.new
  cat >"$tmp" <<'EOF'
# Written by scripts/postgres.sh (passwords): scram-sha-256 for every connection, socket and TCP alike;
# the server listens on 127.0.0.1 and its socket directory only.
# TYPE  DATABASE     USER  ADDRESS       METHOD
local   all          all                 scram-sha-256
host    all          all   127.0.0.1/32  scram-sha-256
host    all          all   ::1/128       scram-sha-256
local   replication  all                 scram-sha-256
host    replication  all   127.0.0.1/32  scram-sha-256
host    replication  all   ::1/128       scram-sha-256
EOF
  [[ $(id -u) -eq 0 ]] && chown postgres:postgres "$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$data/pg_hba.conf"
}

# psql_as ROLE PASSWORD DB ARGS...: psql over TCP with that password (in the environment, not the
# command line; never a prompt). SQL that holds a password goes on stdin.
psql_as() {
  local role=$1 password=$2 db=$3
  shift 3
  PGPASSWORD=$password PGCONNECT_TIMEOUT=10 "$bin/psql" -X -q -w -h 127.0.0.1 -p "$port" -U "$role" -d "$db" \
    -v ON_ERROR_STOP=1 -tA "$@"
}

# Every start: role itour as promised (LOGIN, not a superuser) with the password of its file, and database
# itour owned by it. As itour_admin, with its password.
ensure_roles() {
  local admin app exists
  admin=$(secret_of "$admin_secret") app=$(secret_of "$app_secret")
  if ! psql_as "$admin_role" "$admin" postgres -c "SELECT 1" >/dev/null 2>"$dir/auth-check.log"; then
    echo "postgres.sh: $admin_role cannot log in to the cluster in $dir with the password in $admin_secret:" >&2
    cat "$dir/auth-check.log" >&2
    echo "(a cluster whose password files were lost: restore them, or make clean to start afresh)" >&2
    exit 1
  fi
  psql_as "$admin_role" "$admin" postgres <<EOF
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$app_role') THEN CREATE ROLE $app_role LOGIN; END IF;
END \$\$;
ALTER ROLE $app_role WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
EOF
  if ! psql_as "$app_role" "$app" postgres -c "SELECT 1" >/dev/null 2>&1; then
    psql_as "$admin_role" "$admin" postgres <<<"ALTER ROLE $app_role PASSWORD $(sql_literal "$app");"
    echo "postgres: role $app_role's password set from $app_secret"
    psql_as "$app_role" "$app" postgres -c "SELECT 1" >/dev/null
  fi
  exists=$(psql_as "$admin_role" "$admin" postgres -c "SELECT 1 FROM pg_database WHERE datname = 'itour'")
  if [[ -z $exists ]]; then
    psql_as "$admin_role" "$admin" postgres -c "CREATE DATABASE itour OWNER $app_role"
    echo "postgres: created database itour (owner $app_role)"
  fi
}

# A cluster made with trust (an older .run/pg), closed in place, its data kept. Each step can run again
# if one before it was interrupted: the trust lines go last.
close_trust_cluster() {
  local admin app boot sock=("$bin/psql" -X -q -h "$dir" -p "$port" -v ON_ERROR_STOP=1 -tA) su moved
  admin=$(secret_of "$admin_secret") app=$(secret_of "$app_secret")
  echo "postgres: the cluster in $dir lets every local user in without a password (trust): closing it"
  # The superuser to work as: itour_admin if an interrupted run made it already, else the bootstrap itour.
  su=$admin_role
  as_owner "${sock[@]}" -U "$su" -d postgres -c "SELECT 1" >/dev/null 2>&1 || su=itour
  boot=$(as_owner "${sock[@]}" -U "$su" -d postgres -c "SELECT rolname FROM pg_roles WHERE oid = 10")
  if [[ $boot != "$admin_role" ]]; then
    # The bootstrap superuser (it owns the system catalogs, so it must stay a superuser) becomes itour_admin;
    # a session cannot rename its own role, so a transient superuser does it.
    if [[ -n $(as_owner "${sock[@]}" -U "$su" -d postgres -c "SELECT 1 FROM pg_roles WHERE rolname = '$admin_role'") ]]; then
      echo "postgres.sh: role $admin_role exists beside the bootstrap superuser $boot; rename or drop it first" >&2
      exit 1
    fi
    as_owner "${sock[@]}" -U "$su" -d postgres -c "SET client_min_messages = warning" \
      -c "DROP ROLE IF EXISTS itour_closing" -c "CREATE ROLE itour_closing SUPERUSER LOGIN"
    as_owner "${sock[@]}" -U itour_closing -d postgres -c "ALTER ROLE \"$boot\" RENAME TO $admin_role"
    as_owner "${sock[@]}" -U "$admin_role" -d postgres -c "DROP ROLE itour_closing"
    echo "postgres: the bootstrap superuser $boot is now $admin_role"
  fi
  as_owner "${sock[@]}" -U "$admin_role" -d postgres <<EOF
ALTER ROLE $admin_role PASSWORD $(sql_literal "$admin");
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$app_role') THEN CREATE ROLE $app_role LOGIN; END IF;
END \$\$;
ALTER ROLE $app_role WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD $(sql_literal "$app");
EOF
  if [[ -n $(as_owner "${sock[@]}" -U "$admin_role" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'itour'") ]]; then
    as_owner "${sock[@]}" -U "$admin_role" -d postgres -c "ALTER DATABASE itour OWNER TO $app_role"
    # What the old superuser owned in database itour (the services' schemas, tables, their indexes and
    # sequences, views, types, functions) goes to itour; the system catalogs and extensions' members stay.
    # REASSIGN OWNED cannot do this: it refuses to touch the bootstrap superuser's objects.
    moved=$(as_owner "${sock[@]}" -U "$admin_role" -d itour <<EOF
SET lock_timeout = '60s';
CREATE TEMP TABLE moved (n int);
DO \$\$
DECLARE
  boot oid := 10;
  r record;
  n int := 0;
BEGIN
  FOR r IN SELECT s.nspname FROM pg_namespace s
           WHERE s.nspowner = boot AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\_%'
  LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO $app_role', r.nspname); n := n + 1;
  END LOOP;
  FOR r IN SELECT c.oid::regclass AS name, c.relkind FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
           WHERE c.relowner = boot AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\_%'
             AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                             AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
  LOOP
    -- A table takes its indexes and the sequences of its columns along.
    EXECUTE format('ALTER %s %s OWNER TO $app_role',
                   CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                  WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, r.name);
    n := n + 1;
  END LOOP;
  FOR r IN SELECT t.oid::regtype AS name FROM pg_type t JOIN pg_namespace s ON s.oid = t.typnamespace
           WHERE t.typowner = boot AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\_%'
             AND (t.typtype IN ('e', 'd', 'r')
                  OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER TYPE %s OWNER TO $app_role', r.name); n := n + 1;
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
           WHERE p.proowner = boot AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\_%'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO $app_role', r.name); n := n + 1;
  END LOOP;
  INSERT INTO moved VALUES (n);
END
\$\$;
SELECT n FROM moved;
EOF
)
    echo "postgres: database itour and its $moved schemas, tables, views, types and functions now belong to $app_role"
  fi
  write_hba
  as_owner "$bin/pg_ctl" -D "$data" reload >/dev/null
  sleep 0.5   # the postmaster reads pg_hba.conf on SIGHUP, not within pg_ctl
  if psql_as "$app_role" "" postgres -c "SELECT 1" >/dev/null 2>&1; then
    echo "postgres.sh: $dir still lets $app_role in without a password after the reload; see $data/pg_hba.conf" >&2
    exit 1
  fi
  echo "postgres: $dir now asks every connection for a password (scram-sha-256): $app_role (not a superuser) in" \
    "$app_secret, $admin_role (superuser, for administration) in $admin_secret"
  echo "postgres: clients connected before keep their sessions as the superuser until they reconnect: restart them (make down && make up)"
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
