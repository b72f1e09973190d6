#!/usr/bin/env bash
# make up: the whole suite on this machine, in demo mode, from a clean clone.
#
# Installs what running needs and is missing (scripts/install.sh run), starts Postgres (.run/pg, port 5433; passwords only, made once into .run/secrets:
# scripts/postgres.sh) and the broker (port 9092),
# builds the four services (debug; UP_CONFIG=release), starts catalog, feed, analytics and admin in the background
# (pid files in .run/pids, logs in .run/logs), waits until every /ready answers 200, loads the
# demo content once and prints where everything is. Idempotent: a second run starts only what
# is not running. `make down` stops it all.
#
# After any kind of stop it succeeds on its first run: pid files naming dead processes are
# replaced; a tansu or a service of ours that lost its pid file but listens on its port is adopted; a broker
# started here gets the suite's topics with their partition counts (scripts/topics.py, from
# Topics.swift) before services can auto-create them; services still running from before are left
# alone (they must reconnect to a broker that came back empty by themselves), and the wait for them
# is READY_TIMEOUT (90) seconds from the moment they are known to be running.
# The build is a debug one by default: a first release build of the four takes 16 min or more on 2 cores, a debug one
# a few, and make test builds debug too, so it starts from this one (README, "make up"). UP_CONFIG=release builds
# and runs .build/release (faster services, for load); UP_BUILD=0 skips the build; UP_BIN_DIR runs the
# binaries of another directory (with UP_BUILD=0).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

t0=$(now)
pg_dir=$run_dir/pg
pg_port=${POSTGRES_PORT:-5433}
# The cluster's passwords (scripts/postgres.sh makes them once, mode 0600): the services' role itour, the admin's.
secrets_dir=$run_dir/secrets
pg_password_file=$secrets_dir/postgres-password
broker_port=${BROKER_PORT:-9092}
ready_timeout=${READY_TIMEOUT:-90}
demo_file=deploy/demo/uncw-itour.json
demo_stamp=$run_dir/demo-loaded
admin_email=${ADMIN_EMAIL:-admin@example.edu}
admin_password=${ADMIN_PASSWORD:-itour-demo}
reports_token=${REPORTS_TOKEN:-itour-demo-token}

# The services' environment (Shared/Core/Runtime/Environment.swift reads it): the Postgres and
# broker started here, librdkafka 2.x from the wheel (Debian's 2.0.2 cannot talk to tansu;
# PLATFORM.md) and demo mode (demo credentials, DESIGN.md "Demo mode"). HTTP_PORT is set per
# service below.
export POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port
export KAFKA_BROKERS=127.0.0.1:$broker_port
export LD_LIBRARY_PATH=$PWD/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ITOUR_DEMO=1
# The demo content is UNCW's: openNow is decided in Wilmington's time.
export SITE_TIME_ZONE=${SITE_TIME_ZONE:-America/New_York}
# The demo content is in English and Spanish (DESIGN.md "Languages").
export SITE_LANGUAGE=${SITE_LANGUAGE:-en} SITE_LANGUAGES=${SITE_LANGUAGES:-en,es}
# The version /health, itour_build_info and System Status show: the release and the commit.
export ITOUR_VERSION=${ITOUR_VERSION:-$(scripts/version.sh)}

mkdir -p "$pid_dir" "$log_dir"

echo "==> dependencies (what running needs; make test installs the test tools)"
t=$(now)
scripts/install.sh run
echo "    ($(since "$t"))"

echo "==> postgres and broker"
t=$(now)
POSTGRES_SECRETS_DIR=$secrets_dir scripts/postgres.sh start "$pg_dir" "$pg_port"
# The services (and load-demo below) log in as itour, not a superuser, with its password.
POSTGRES_PASSWORD=$(<"$pg_password_file")
export POSTGRES_USER=itour POSTGRES_PASSWORD
# The key catalog checks every command against and the admin signs them with (DESIGN.md "Signed commands"):
# made once, like the passwords, so the broker on 9092 is no side door even in demo mode.
command_key_file=$secrets_dir/catalog-command-key
if [[ ! -s $command_key_file ]]; then
  (umask 077 && openssl rand -hex 32 >"$command_key_file")
fi
CATALOG_COMMAND_KEY=$(<"$command_key_file")
export CATALOG_COMMAND_KEY
# The key of the pseudonyms analytics stores for device and tourist ids (docs/PRIVACY.md): made once and kept, since a
# new key would make every device new to the reports.
id_key_file=$secrets_dir/analytics-id-key
if [[ ! -s $id_key_file ]]; then
  (umask 077 && openssl rand -hex 32 >"$id_key_file")
fi
ANALYTICS_ID_KEY=$(<"$id_key_file")
export ANALYTICS_ID_KEY
# The staff token of DELETE /v1/devices/{deviceId} (erasure; DESIGN.md "Erasure"): made once, like the key above.
erasure_token_file=$secrets_dir/erasure-token
if [[ -z ${ERASURE_TOKEN:-} && ! -s $erasure_token_file ]]; then
  (umask 077 && openssl rand -hex 32 >"$erasure_token_file")
fi
ERASURE_TOKEN=${ERASURE_TOKEN:-$(<"$erasure_token_file")}
export ERASURE_TOKEN
# A tansu on our port that no pid file names (its pid file was lost): adopt it (stopping it would
# lose what it holds; the services are talking to it).
if ! live_pid "$run_dir/broker.pid" tansu >/dev/null; then
  rm -f "$run_dir/broker.pid"
  for pid in $(ss -ltnpH "sport = :$broker_port" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "tansu broker --listener-url tcp://127.0.0.1:$broker_port "; then
      echo "$pid" >"$run_dir/broker.pid"
      echo "broker: adopted (pid $pid on port $broker_port; its pid file was missing, now written)"
    fi
  done
fi
broker_was_running=0
live_pid "$run_dir/broker.pid" tansu >/dev/null && broker_was_running=1
for attempt in 1 2 3 4 5; do
  # Right after a broker was killed its port can be held for a moment: retry.
  scripts/broker.sh start "$run_dir/broker.pid" "$broker_port" "$log_dir/broker.log" && break
  ((attempt == 5)) && { echo "up.sh: the broker did not start (see .run/logs/broker.log)" >&2; exit 1; }
  sleep 2
done
# Topics with their declared partition counts (tansu auto-creates on first produce with 4; services
# still running from before may win that race: topics.py then warns).
if ((!broker_was_running)) || [[ ${UP_TOPICS:-1} == always ]]; then
  .venv/bin/python scripts/topics.py ensure --brokers "127.0.0.1:$broker_port" --prefix "${KAFKA_TOPIC_PREFIX:-}" \
    || echo "up.sh: creating the topics failed; the services create them at start" >&2
fi
echo "    ($(since "$t"))"

config=${UP_CONFIG:-debug}
bin_dir=${UP_BIN_DIR:-$PWD/.build/$config}
if [[ ${UP_BUILD:-1} != 0 ]]; then
  # Only the four services: the benchmark and the test support are make test's and make bench's.
  t=$(now)
  for name in "${services[@]}"; do
    echo "==> swift build -c $config --product $name"
    swift build -c "$config" --product "$name"
  done
  echo "    built in $(since "$t")"
fi

echo "==> services"
t_services=$(now)
for name in "${services[@]}"; do
  bin=$bin_dir/$name
  pidfile=$pid_dir/$name.pid
  port=$(service_port "$name")
  if pid=$(service_pid "$name") || pid=$(live_pid "$pidfile" "$bin"); then
    note=""
    [[ $bin -nt $pidfile ]] && note=" — an older build; make down && make up to run the new one"
    echo "$name: already running (pid $pid, port $port)$note"
    continue
  fi
  rm -f "$pidfile"
  [[ -x $bin ]] || { echo "up.sh: $bin is missing after the build" >&2; exit 1; }
  # One of our own binaries on the port whose pid file was lost: adopt it rather than refuse.
  holder=$(ss -ltnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2) || true
  if [[ -n $holder ]] && exe=$(tr '\0' '\n' <"/proc/$holder/cmdline" 2>/dev/null | head -n 1) \
      && [[ $exe == "$PWD"/.build/*/"$name" || $exe == "$bin" ]]; then
    printf '%s\n%s\n' "$holder" "$exe" >"$pidfile"
    echo "$name: already running (pid $holder, port $port; its pid file was missing, now written)"
    continue
  fi
  # A service killed a moment ago may still hold its port for a few seconds: wait before refusing.
  for ((i = 0; i < 50; i++)); do port_open "$port" || break; sleep 0.2; done
  if port_open "$port"; then
    echo "up.sh: port $port for $name is taken by another process (ss -ltnp | grep :$port)" >&2
    exit 1
  fi
  echo "--- $(date -u +%FT%TZ) starting $name" >>"$log_dir/$name.log"
  HTTP_PORT=$port setsid "$bin" </dev/null >>"$log_dir/$name.log" 2>&1 &
  printf '%s\n%s\n' "$!" "$bin" >"$pidfile"
  echo "$name: started (pid $!, port $port, log .run/logs/$name.log)"
done

# wait_ready NAME: until GET /ready is 200, the process dies, or the timeout passes.
wait_ready() {
  local name=$1 port pidfile deadline
  port=$(service_port "$name")
  pidfile=$pid_dir/$name.pid
  deadline=$((SECONDS + ready_timeout))
  until curl -fsS -o /dev/null -m 2 "http://127.0.0.1:$port/ready" 2>/dev/null; do
    if ! service_pid "$name" >/dev/null; then
      echo "up.sh: $name exited before it was ready; last lines of .run/logs/$name.log:" >&2
      tail -n 30 "$log_dir/$name.log" >&2 || true
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      echo "up.sh: $name (port $port) not ready after ${ready_timeout}s;" \
        "GET /ready says: $(curl -sS -m 2 "http://127.0.0.1:$port/ready" 2>&1 | head -c 300)" >&2
      echo "last lines of .run/logs/$name.log:" >&2
      tail -n 30 "$log_dir/$name.log" >&2 || true
      exit 1
    fi
    sleep 0.3
  done
  echo "$name: ready"
}

# The demo content goes in once per database: the stamp names the cluster it was loaded into.
cluster_id() {
  /usr/lib/postgresql/15/bin/pg_controldata "$pg_dir/data" 2>/dev/null | awk -F': *' '/system identifier/ { print $2 }'
}

wait_ready catalog
cid=$(cluster_id)
if [[ -f $demo_stamp && -n $cid && $(<"$demo_stamp") == "$cid" ]]; then
  echo "demo content: already loaded"
else
  echo "==> catalog load-demo $demo_file"
  if "$bin_dir/catalog" load-demo "$demo_file" >"$log_dir/load-demo.log" 2>&1; then
    echo "$cid" >"$demo_stamp"
    echo "demo content: loaded"
  else
    echo "up.sh: loading the demo content failed; output (.run/logs/load-demo.log):" >&2
    tail -n 30 "$log_dir/load-demo.log" >&2 || true
    exit 1
  fi
fi
for name in feed analytics admin; do wait_ready "$name"; done

feed=$(service_port feed) admin=$(service_port admin)
catalog=$(service_port catalog) analytics=$(service_port analytics)
today=$(date -u +%F) month_ago=$(date -u -d '30 days ago' +%F)
cat <<EOF

iTour is up (all ready $(since "$t_services") after starting; $(since "$t0") in all).

  Feed (phones)      http://localhost:$feed/v1/tours
                     http://localhost:$feed/v1/pois (places)  http://localhost:$feed/v1/calendar  http://localhost:$feed/v1/calendar.ics  http://localhost:$feed/v1/people  http://localhost:$feed/v1/pages  http://localhost:$feed/v1/featured
  Admin dashboard    http://localhost:$admin/
                     sign in as $admin_email / $admin_password
  Reports            http://localhost:$analytics/v1/reports/summary?from=$month_ago&to=$today
                     curl -H 'Authorization: Bearer $reports_token' 'http://localhost:$analytics/v1/reports/summary?from=$month_ago&to=$today'
  Erasure (staff)    curl -X DELETE -H "Authorization: Bearer \$(cat ${erasure_token_file#"$PWD"/})" -d '{"requestedBy": "you", "reason": "why"}' http://localhost:$analytics/v1/devices/DEVICE-ID
  Metrics            http://localhost:$feed/metrics  http://localhost:$admin/metrics
                     http://localhost:$catalog/metrics  http://localhost:$analytics/metrics
  Postgres           postgresql://itour@127.0.0.1:$pg_port/itour   password in ${pg_password_file#"$PWD"/}
                     PGPASSWORD=\$(cat ${pg_password_file#"$PWD"/}) psql -h 127.0.0.1 -p $pg_port -U itour itour
                     superuser itour_admin: password in ${secrets_dir#"$PWD"/}/postgres-admin-password
  Broker             127.0.0.1:$broker_port (tansu, memory-only); commands signed with ${command_key_file#"$PWD"/}
  Logs               .run/logs/

make down stops everything.
EOF
