#!/usr/bin/env bash
# Waits until the readers have taken in what the (memory-only) broker holds, before it is stopped.
#
#   scripts/drain.sh [--analytics URL] [--catalog URL]
#
# Run it after the writers stopped (feed: tracking events; admin and `catalog import`: commands).
# Drained when, on two samples DRAIN_INTERVAL apart, from the services' GET /metrics:
#   analytics: itour_consumer_lag{consumer="analytics"} is 0 on every partition of tracking.events
#              and itour_analytics_events_counted_total + _duplicate_total did not move (the batch
#              read last is stored);
#   catalog:   itour_consumer_lag{consumer="catalog-commands"} is 0 (every command applied) and
#              itour_outbox_backlog is 0 (the relay published every outbox row).
# With DRAIN_BROKERS (host:port) and DRAIN_PG_PORT set (DRAIN_PG_DB, itour; DRAIN_TOPIC_PREFIX), the
# analytics figure is exact instead: the broker's high watermarks, asked of the broker, against the
# offsets analytics stored with its aggregates (scripts/backlog.py); drained when nothing is waiting.
# That mode also sees stored offsets beyond the end of a log that moved under analytics: events in such a
# partition never drain; an empty one holds nothing back (analytics reads it from its start when events come).
# A service not named is not waited for. Bounded by DRAIN_TIMEOUT seconds (60); prints progress
# every DRAIN_PROGRESS seconds (5) and, when it gives up, what is left. Last line, for scripts:
#   drain: result drained=1|0 seconds=S analytics_lag=N commands_lag=N outbox=N first_analytics_lag=N first_outbox=N
# Exit 0 drained, 1 gave up, 2 usage.
#
# The lag is what librdkafka reports (position to the partition's high watermark): 0 also when the
# stored offsets point beyond the end of a log that moved (a broker that restarted empty); nothing
# here can tell that case apart without a figure the services do not expose yet.
set -uo pipefail

analytics= catalog=
while (($#)); do
  case $1 in
    --analytics) analytics=${2:?}; shift 2 ;;
    --catalog) catalog=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--analytics URL] [--catalog URL]" >&2; exit 2 ;;
  esac
done
timeout=${DRAIN_TIMEOUT:-60}
interval=${DRAIN_INTERVAL:-0.5}
progress_every=${DRAIN_PROGRESS:-5}

# metric TEXT NAME [LABEL_MATCH]: the sum of NAME's samples whose labels contain LABEL_MATCH;
# "none" when there is no such sample.
metric() {
  awk -v name="$2" -v match_="${3:-}" '
    $1 == name || index($1, name "{") == 1 {
      if (match_ != "" && index($1, match_) == 0) next
      sum += $NF; n++
    }
    END { if (n) printf "%d\n", sum; else print "none" }' <<<"$1"
}

# fmt N: 4896 -> "4 896" (the thousands apart, as the reports do).
fmt() { [[ $1 =~ ^[0-9]+$ ]] && printf '%s' "$1" | rev | sed -E 's/([0-9]{3})/\1 /g; s/ $//' | rev || printf '%s' "$1"; }

start=$(date +%s.%N)
elapsed() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
deadline=$(awk -v a="$start" -v t="$timeout" 'BEGIN { printf "%.3f", a + t }')

exact=0
[[ -n ${DRAIN_BROKERS:-} && -n ${DRAIN_PG_PORT:-} && -n $analytics ]] && exact=1
root=$(cd "$(dirname "$0")/.." && pwd)
a_lag=n/a a_counted=n/a c_lag=n/a outbox=n/a beyond=0 moved=
first_a_lag= first_outbox=
prev_counted= stable=0 last_progress=-1000
sample() {
  local text
  a_lag=n/a a_counted=n/a c_lag=n/a outbox=n/a
  if ((exact)); then
    local line
    line=$("$root/.venv/bin/python" "$root/scripts/backlog.py" --brokers "$DRAIN_BROKERS" --pg-port "$DRAIN_PG_PORT" \
      --pg-db "${DRAIN_PG_DB:-itour}" --prefix "${DRAIN_TOPIC_PREFIX:-}" 2>/dev/null)
    a_lag=$(sed -nE 's/.*backlog=([0-9]+).*/\1/p' <<<"$line")
    beyond=$(sed -nE 's/.*beyond=([0-9]+).*/\1/p' <<<"$line")
    moved=$(sed -nE 's/.*detail=(\S+).*/\1/p' <<<"$line")
    [[ -n $a_lag ]] || a_lag=unreadable
    [[ -n $beyond ]] || beyond=0
    [[ $moved == - || $moved == *missing ]] && moved=
    a_counted=exact
  elif [[ -n $analytics ]]; then
    if text=$(curl -fsS -m 5 "$analytics/metrics" 2>/dev/null); then
      a_lag=$(metric "$text" itour_consumer_lag 'consumer="analytics"')
      local counted dup
      counted=$(metric "$text" itour_analytics_events_counted_total)
      dup=$(metric "$text" itour_analytics_events_duplicate_total)
      a_counted=$(( ${counted/none/0} + ${dup/none/0} ))
    else
      a_lag=unreachable
    fi
  fi
  if [[ -n $catalog ]]; then
    if text=$(curl -fsS -m 5 "$catalog/metrics" 2>/dev/null); then
      c_lag=$(metric "$text" itour_consumer_lag 'consumer="catalog-commands"')
      outbox=$(metric "$text" itour_outbox_backlog)
    else
      c_lag=unreachable outbox=unreachable
    fi
  fi
  [[ -z $first_a_lag ]] && first_a_lag=$a_lag
  [[ -z $first_outbox ]] && first_outbox=$outbox
}

# What is left, in words.
left() {
  local parts=()
  if [[ -n $analytics ]]; then
    case $a_lag in
      0) ;;
      none) parts+=("analytics: no partition of tracking.events assigned (not yet in its consumer group); what it has not counted is unknown") ;;
      unreachable) parts+=("analytics: GET $analytics/metrics does not answer; what it has not counted is lost with the broker") ;;
      unreadable) parts+=("analytics: its backlog could not be read (broker or Postgres did not answer scripts/backlog.py)") ;;
      *) parts+=("analytics: $(fmt "$a_lag") events not yet counted") ;;
    esac
    if [[ -n $moved && $beyond != 0 ]]; then
      parts+=("analytics: $(fmt "$beyond") events in partitions whose stored offset lies beyond the end of the log ($moved): it waits there and will never count them")
    fi
  fi
  if [[ -n $catalog ]]; then
    case $c_lag in
      0) ;;
      none) parts+=("catalog: no partition of catalog.commands assigned; commands not yet applied unknown") ;;
      unreachable) parts+=("catalog: GET $catalog/metrics does not answer; commands not yet applied are lost with the broker") ;;
      *) parts+=("catalog: $(fmt "$c_lag") commands not yet applied") ;;
    esac
    case $outbox in
      0 | unreachable) ;;
      none) parts+=("catalog: outbox backlog not reported") ;;
      *) parts+=("catalog: $(fmt "$outbox") outbox rows not yet published (kept in Postgres; published after the next start)") ;;
    esac
  fi
  ((${#parts[@]})) || parts=("analytics: still storing the batch it read last")
  local out=${parts[0]} part
  for part in "${parts[@]:1}"; do out+=" | $part"; done
  echo "$out"
}

summary() {
  echo "drain: result drained=$1 seconds=$(elapsed) analytics_lag=$a_lag commands_lag=$c_lag outbox=$outbox" \
    "first_analytics_lag=$first_a_lag first_outbox=$first_outbox"
}

if [[ -z $analytics && -z $catalog ]]; then
  echo "drain: nothing to wait for (neither analytics nor catalog is running)"
  summary 1
  exit 1
fi

while :; do
  sample
  now_s=$(elapsed)
  done_now=1
  # A stored offset beyond the end of an empty new log holds nothing back: analytics reads that log from its start
  # when anything arrives (issue 50). Only events in such partitions wait.
  [[ -n $analytics && ($a_lag != 0 || $beyond != 0) ]] && done_now=0
  [[ -n $catalog && ($c_lag != 0 || $outbox != 0) ]] && done_now=0
  if ((done_now)) && [[ -z $analytics || $a_counted == "$prev_counted" ]]; then
    stable=$((stable + 1))
  elif ((done_now)); then
    stable=1   # lag 0, but a batch was still being stored: one more look
  else
    stable=0
  fi
  prev_counted=$a_counted
  if ((stable >= 2)); then
    echo "drain: done in ${now_s}s (tracking.events counted, catalog.commands applied, outbox published)"
    summary 1
    exit 0
  fi
  if awk -v n="$now_s" -v l="$last_progress" -v p="$progress_every" 'BEGIN { exit !(n - l >= p) }'; then
    last_progress=$now_s
    echo "drain: ${now_s}s: analytics $( ((exact)) && echo "not yet counted" || echo lag) $(fmt "$a_lag")${moved:+ (stored offsets beyond the log end: $moved)}," \
      "catalog.commands lag $(fmt "$c_lag"), outbox $(fmt "$outbox")"
  fi
  if awk -v d="$deadline" -v n="$(date +%s.%N)" 'BEGIN { exit !(n >= d) }'; then
    echo "drain: gave up after ${timeout}s; left: $(left)" >&2
    summary 0
    exit 1
  fi
  sleep "$interval"
done
