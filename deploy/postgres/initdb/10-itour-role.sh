#!/bin/bash
# Runs once, on the first start of an empty data directory: the official postgres image and
# deploy/postgres/entrypoint.sh run /docker-entrypoint-initdb.d/*.sh then, with the server on its socket
# (docker-compose.yml mounts this folder there). Makes the services' role ITOUR_DB_USER with
# ITOUR_DB_PASSWORD: LOGIN and nothing more (not a superuser, no CREATEROLE, no CREATEDB), owner of
# POSTGRES_DB, where the services create their schemas. POSTGRES_USER stays the superuser, for
# administration only.
set -euo pipefail
user=${ITOUR_DB_USER:-}
admin=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$admin}
if [[ -z $user || $user == "$admin" ]]; then
  echo "10-itour-role.sh: ITOUR_DB_USER is unset or the superuser $admin: the services log in as the superuser" >&2
  exit 0
fi
: "${ITOUR_DB_PASSWORD:?set ITOUR_DB_PASSWORD, the password the services log in with}"
# The password comes from the environment (\getenv, psql 15+), never from a command line.
psql -X -q -v ON_ERROR_STOP=1 --no-password --username "$admin" --dbname postgres -v user="$user" -v db="$db" <<'SQL'
\getenv password ITOUR_DB_PASSWORD
CREATE ROLE :"user" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'password';
ALTER DATABASE :"db" OWNER TO :"user";
SQL
echo "postgres: role $user (not a superuser) owns database $db"
