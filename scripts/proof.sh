#!/usr/bin/env bash
# make proof: the fault run, the hostile-input suite and (when present) the benchmarks' quick modes, then
# ONE table of the figures (issue 7). Exits nonzero on any lost or double-counted event, lost or
# duplicated content edit, 5xx or dropped connection on hostile input, or a failing step.
#
#   scripts/proof.sh
#
# Steps (each on a private Postgres and broker that it stops again; see scripts/faults.sh):
#   1. scripts/faults.sh run       -> .run/faults-result.json
#   2. scripts/faults.sh hostile   -> .run/hostile-result.json (HOSTILE_EXAMPLES, default 40 here)
#   3. scripts/bench-feed.sh / scripts/bench-analytics.sh if they exist, in a quick mode
#      (PROOF_BENCH_EVENTS events for analytics, default 20000; binaries from ITOUR_BIN_DIR, else
#      .build/release when built, else .build/debug, which the table then says). PROOF_BENCH=0 skips.
# Logs of every step in .run/logs/proof-*.log.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
mkdir -p "$log_dir"
t0=$(now)
export FAULTS_RESULT=$run_dir/faults-result.json HOSTILE_RESULT=$run_dir/hostile-result.json
export HOSTILE_EXAMPLES=${HOSTILE_EXAMPLES:-40}
rm -f "$FAULTS_RESULT" "$HOSTILE_RESULT"
declare -A rc

step() {
  local name=$1 log=$log_dir/proof-$1.log t
  shift
  t=$(now)
  echo "==> proof: $name (log $log)"
  "$@" 2>&1 | tee "$log" | grep --line-buffered -E '^\[faults|^==>|passed|failed|FAILED|ERROR|ratio|events/s|p95' 
  rc[$name]=${PIPESTATUS[0]}
  echo "<== proof: $name: exit ${rc[$name]}, $(since "$t")"
}

step faults scripts/faults.sh run
step hostile scripts/faults.sh hostile

bench_bin=${ITOUR_BIN_DIR:-}
if [[ -z $bench_bin ]]; then
  if [[ -x .build/release/analytics && -x .build/release/itour-bench ]]; then bench_bin=$PWD/.build/release; else bench_bin=$PWD/.build/debug; fi
fi
for bench in feed analytics; do
  if [[ ${PROOF_BENCH:-1} == 0 ]]; then
    echo "skipped (PROOF_BENCH=0)" >"$log_dir/proof-bench-$bench.log"
  elif [[ -x scripts/bench-$bench.sh ]]; then
    events=${PROOF_BENCH_EVENTS:-20000}
    # The feed's quick mode: a smaller city and one short round of each measurement.
    step "bench-$bench" env ITOUR_BIN_DIR="$bench_bin" POIS="${PROOF_FEED_POIS:-10000}" TOURS="${PROOF_FEED_TOURS:-100}" \
      DURATION="${PROOF_FEED_DURATION:-5}" ROUNDS=1 scripts/bench-$bench.sh "$events"
  else
    echo "not run: scripts/bench-$bench.sh does not exist yet" >"$log_dir/proof-bench-$bench.log"
  fi
done

PROOF_RC_BENCH_FEED=${rc[bench-feed]:-} PROOF_RC_BENCH_ANALYTICS=${rc[bench-analytics]:-} PROOF_RC_FAULTS=${rc[faults]} PROOF_RC_HOSTILE=${rc[hostile]} PROOF_BENCH_BIN=$bench_bin PROOF_TIME=$(since "$t0") \
  .venv/bin/python - "$log_dir" <<'PY'
import json, os, re, sys
from pathlib import Path

log_dir = Path(sys.argv[1])
def load(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None

faults, hostile = load(os.environ["FAULTS_RESULT"]), load(os.environ["HOSTILE_RESULT"])
rows, bad = [], []
def row(label, value, violation=False):
    rows.append((label, value, violation))
    if violation:
        bad.append(label)

if faults:
    names = [f["name"] for f in faults["faults"]]
    row("workload: events sent (posts)", f"{faults.get('events_acked', 0) + faults.get('events_unacked_at_end', 0)} events in {faults.get('event_posts')} batches")
    row("workload: content edits", f"{faults.get('edit_attempts')} imports ({faults.get('edit_failed_attempts')} failed and retried)")
    row("faults injected", f"{len(names)}: " + "; ".join(names))
    not_ready = [f["name"] for f in faults["faults"] if not f.get("all_ready")]
    row("services ready again after each fault", "yes" if not not_ready else f"NO after {not_ready}", bool(not_ready))
    row("feed reads failed during PG/broker outage", faults.get("feed_read_failures_during_outages"), bool(faults.get("feed_read_failures_during_outages")))
    row("events acknowledged (202)", faults.get("events_acked"))
    row("events counted (reports)", faults.get("events_counted"))
    row("events lost", faults.get("events_lost"), faults.get("events_lost") != 0)
    row("events double-counted", faults.get("events_double_counted"), faults.get("events_double_counted") != 0)
    row("content edits acked / applied", f"{faults.get('edits_acked')} / {faults.get('edits_applied')}")
    row("content edits lost", faults.get("edits_lost"), faults.get("edits_lost") != 0)
    row("content edits duplicated", faults.get("edits_duplicated"), faults.get("edits_duplicated") != 0)
    # Restarts and broker loss (issue 14): one row per scenario with its figures and its own violations.
    restart_names = []
    for f in faults["faults"]:
        if "kind" not in f:
            continue
        restart_names.append(f["name"])
        def s(v):
            return "none in time" if v is None else f"{v} s"
        parts = []
        if f["kind"] == "restart_stack":
            parts.append(f"drain {s(f.get('drain_s'))} from analytics lag {f.get('drain_start_analytics_lag')} / outbox "
                         f"{f.get('drain_start_outbox')} (writers stopped under load: {f.get('load_acked')} events acknowledged in the seconds before)"
                         + ("" if f.get("drained") else " GAVE UP"))
        parts.append(f"first 202 {s(f.get('first_202_s'))} after " + ("the topics were re-created" if f["kind"] == "topic_reset" else "the broker was back"))
        parts.append(f"analytics counting again after {s(f.get('counting_again_s'))}")
        parts.append(f"an edit on the feed {s(f.get('edit_visible_s'))} after it was acked")
        if "acked_before_not_counted" in f:
            parts.append(f"{f['acked_before_not_counted']} acked before it and not yet counted (may be lost)")
        if f.get("services_exited"):
            parts.append(f"EXITED: {', '.join(f['services_exited'])}")
        mine = [v for v in faults.get("violations", []) if v.startswith(f["name"] + ":")]
        row(f"fault: {f['name']}", "; ".join(parts) + ("\n" + "\n".join(m[len(f["name"]) + 2:] for m in mine) if mine else ""), bool(mine))
    if restart_names:
        row("events lost with the broker (allowed)",
            f"{faults.get('events_lost_with_broker')} {faults.get('events_lost_with_broker_by_fault') or ''}")
    other = [v for v in faults.get("violations", []) if not re.search(r"not counted|more than once|content edits|not ready|during the", v)
             and not any(v.startswith(n + ":") for n in restart_names)]
    if other:
        row("other fault-run violations", "; ".join(other), True)
else:
    row("fault run", f"NO RESULT (exit {os.environ['PROOF_RC_FAULTS']}; see {log_dir}/proof-faults.log)", True)

if hostile:
    t = hostile["totals"]
    row("bad inputs tried", t["tried"])
    row("bad inputs refused (4xx / rejected)", t["refused"])
    row("odd-but-harmless inputs served (2xx/3xx)", t["accepted"])
    row("bad inputs answered 5xx", t["5xx"], t["5xx"] != 0)
    row("bad inputs: connection dropped", t["dropped"], t["dropped"] != 0)
    row("bad inputs: other unexpected status", t["other"], t["other"] != 0)
    inj = hostile["categories"].get("admin-injection", {})
    if inj:
        row("admin fields given script/SQL payloads", f"{inj['tried']} posts: {inj.get('statuses')}; none shown unescaped; "
            f"{inj.get('served_verbatim_by_feed', '?')} stored payloads served by the feed as plain JSON strings")
    cats = ", ".join(f"{k} {v['tried']}" for k, v in sorted(hostile["categories"].items()))
    row("  by category (tried)", cats)
else:
    row("hostile suite", f"NO RESULT (exit {os.environ['PROOF_RC_HOSTILE']}; see {log_dir}/proof-hostile.log)", True)
if os.environ["PROOF_RC_HOSTILE"] != "0":
    failed = []
    text = (log_dir / "proof-hostile.log").read_text(errors="replace") if (log_dir / "proof-hostile.log").exists() else ""
    failed = re.findall(r"^FAILED (\S+)", text, re.M)
    row("hostile tests failed", ", ".join(f.split("::")[-1] for f in failed) or f"exit {os.environ['PROOF_RC_HOSTILE']}", True)

for bench in ("feed", "analytics"):
    text = (log_dir / f"proof-bench-{bench}.log").read_text(errors="replace") if (log_dir / f"proof-bench-{bench}.log").exists() else "not run"
    # Only the summary each script prints last (after its "=== feed" / "==> analytics benchmark" line).
    summary = re.split(r"^(?:=== feed benchmarks|==> analytics benchmark).*$", text, flags=re.M)[-1] if re.search(r"^(?:=== feed benchmarks|==> analytics benchmark)", text, re.M) else ""
    ratios = [line.strip() for line in summary.splitlines() if re.search(r"^ratio|x of |p95|in-process p99 on|feed RSS|^ingest end to end", line)]
    code = os.environ.get(f"PROOF_RC_BENCH_{bench.upper()}", "")
    if ratios:
        value = "\n".join(ratios)
    elif code not in ("", "0"):
        value = f"FAILED (exit {code}); see {log_dir}/proof-bench-{bench}.log"
    else:
        value = text.strip().splitlines()[-1] if text.strip() else "no output"
    if "debug" in os.environ["PROOF_BENCH_BIN"] and ratios:
        value += "  (debug build)"
    row(f"benchmark: {bench}", value)

width = max(len(r[0]) for r in rows)
print()
print("=" * 100)
print(f"iTour proof ({os.environ['PROOF_TIME']})")
print("-" * 100)
for label, value, violation in rows:
    value = str(value).replace("\n", "\n" + " " * (width + 2))
    print(f"{label:<{width}}  {value}{'   <-- VIOLATION' if violation else ''}")
print("-" * 100)
print("PROOF FAILED: " + ", ".join(bad) if bad else "PROOF PASSED: 0 lost, 0 double-counted, 0 5xx")
print("=" * 100)
sys.exit(1 if bad else 0)
PY
