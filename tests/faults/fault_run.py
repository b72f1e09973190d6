"""The fault run (scripts/faults.sh, `make faults`): a steady workload with a known truth while faults are
injected one after another, then the truth compared with what analytics counted and the feed serves.

Needs a Postgres and a broker of its own (ITOUR_TEST_POSTGRES_PORT, ITOUR_TEST_KAFKA_BROKERS) plus
FAULTS_PG_DIR (the cluster directory, for the Postgres restart) and FAULTS_BROKER_PIDFILE (for the
broker pause); starts the four services through tests/conftest.py's start_suite.

Workload: tracking events in batches with unique ids to POST /v1/events; a batch without a 202 is sent
again with the same ids until it gets one (the id is the dedupe key). Content edits: `catalog import FILE`
of a new published tour + POI with unique legacy ids; a failed import is run again with the same file.

Then the restarts and broker losses of tests/faults/restarts.py (issue 14): the whole stack restarted as
`make down && make up` does it (with the drain), the broker killed with SIGKILL and back empty, and
tracking.events + catalog.events deleted and re-created. FAULTS_SCENARIOS picks the faults (comma list of
kill, postgres, pause, overload, restart, broker-loss, topic-reset; default all).

Writes the figures as JSON to FAULTS_RESULT (default .run/faults-result.json) and exits 1 on a violation.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workload import (COUNTED_TYPES, DAILY_FIELDS, ROOT, EventFactory, get_json, import_file,  # noqa: E402
                      post_events, report, request)
from conftest import SERVICES, start_suite  # noqa: E402
import restarts  # noqa: E402

BATCH = int(os.environ.get("FAULTS_BATCH", "20"))
EVENT_INTERVAL = float(os.environ.get("FAULTS_EVENT_INTERVAL", "0.5"))
MAX_EVENTS = int(os.environ.get("FAULTS_MAX_EVENTS", "16000"))
EDIT_INTERVAL = float(os.environ.get("FAULTS_EDIT_INTERVAL", "1"))
MAX_EDITS = int(os.environ.get("FAULTS_MAX_EDITS", "120"))
SETTLE = float(os.environ.get("FAULTS_SETTLE", "6"))
PAUSE_SECONDS = float(os.environ.get("FAULTS_BROKER_PAUSE", "6"))
OVERLOAD_SECONDS = int(os.environ.get("FAULTS_OVERLOAD_SECONDS", "10"))
RESULT = Path(os.environ.get("FAULTS_RESULT", ROOT / ".run" / "faults-result.json"))
ALL_SCENARIOS = ("kill", "postgres", "pause", "overload", "restart", "broker-loss", "topic-reset")
SCENARIOS = [x.strip() for x in os.environ.get("FAULTS_SCENARIOS", ",".join(ALL_SCENARIOS)).split(",") if x.strip()]
READY_TIMEOUT = float(os.environ.get("FAULTS_READY_TIMEOUT", "120"))
IMPORT_TIMEOUT = 90      # seconds one `catalog import` may take before it counts as failed (and is retried)
COUNT_WAIT = 180         # seconds compare_events waits for analytics to catch up
EDITS_WAIT = 60          # seconds compare_edits waits for acknowledged edits to reach the feed
T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[faults {time.monotonic() - T0:6.1f}s] {message}", flush=True)


class Truth:
    """What the workload knows: every event sent, which were acknowledged; every edit and its outcome."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked: dict[str, dict] = {}          # id -> event, a 202 that did not reject it
        self.ack_at: dict[str, float] = {}        # id -> monotonic time its 202 arrived
        self.extra_sent = 0                       # events sent beyond MAX_EVENTS (bursts and markers of restarts.py)
        self.edit_acked_at: dict[int, float] = {}
        self.marks: list[tuple[float, str]] = []  # (monotonic time, "restart stack: back" ...), for diagnostics
        self.rejected: dict[str, str] = {}        # id -> reason given inside a 202 (should stay empty)
        self.pending: list[list[dict]] = []       # batches to send again (same ids)
        self.sent_events = 0
        self.refusals = Counter()                 # non-202 answers, by status (0 = no answer)
        self.posts = 0
        self.edits_acked: set[int] = set()
        self.edits_pending: list[int] = []
        self.edit_attempts = 0
        self.edit_failures = 0
        self.next_edit = 0
        self.errors: list[str] = []

    def record(self, batch: list[dict], status: int, body: dict) -> bool:
        at = time.monotonic()
        with self.lock:
            self.posts += 1
            if status == 202:
                rejected = {r.get("index"): r.get("reason", "") for r in body.get("rejected", [])}
                for index, event in enumerate(batch):
                    if index in rejected:
                        self.rejected[event["id"]] = rejected[index]
                    else:
                        self.acked[event["id"]] = event
                        self.ack_at.setdefault(event["id"], at)
                return True
            self.refusals[status] += 1
            self.pending.append(batch)
            return False


class Probe(threading.Thread):
    """GET /v1/tours on the feed every 100 ms; failures counted per phase."""

    def __init__(self, feed_url: str):
        super().__init__(daemon=True)
        self.feed_url = feed_url
        self.phase = "steady"
        self.ok = Counter()
        self.failed = Counter()
        self.stop_flag = threading.Event()
        self.seen: dict[str, float] = {}          # tour name -> when it was first on /v1/tours

    def run(self):
        while not self.stop_flag.is_set():
            phase = self.phase
            status, _, body = request("GET", self.feed_url + "/v1/tours", timeout=3)
            (self.ok if status == 200 else self.failed)[phase] += 1
            if status == 200:
                at = time.monotonic()
                try:
                    for tour in json.loads(body).get("tours", []):
                        self.seen.setdefault(tour.get("name", ""), at)
                except ValueError:
                    pass
            time.sleep(0.1)


def event_loop(suite, truth: Truth, factory: EventFactory, stop: threading.Event):
    try:
        _event_loop(suite, truth, factory, stop)
    except Exception as error:  # noqa: BLE001 (a dead workload thread must not pass silently)
        truth.errors.append(f"event workload died: {error!r}")
        log(f"event workload died: {error!r}")


def _event_loop(suite, truth: Truth, factory: EventFactory, stop: threading.Event):
    while not stop.is_set():
        with truth.lock:
            retry = truth.pending.pop(0) if truth.pending else None
            room = MAX_EVENTS + truth.extra_sent - truth.sent_events
        if retry is not None:
            batch = retry
        elif room > 0:
            batch = factory.batch(min(BATCH, room))
            with truth.lock:
                truth.sent_events += len(batch)
        else:
            stop.wait(EVENT_INTERVAL)
            continue
        status, body = post_events(suite.feed_url, batch)
        truth.record(batch, status, body)
        stop.wait(EVENT_INTERVAL if status == 202 else 1.0)


def run_edit(suite, work_dir: Path, number: int, truth: Truth) -> bool:
    path = work_dir / f"edit-{number:04d}.json"
    if not path.exists():
        path.write_text(json.dumps(import_file(number)))
    with truth.lock:
        truth.edit_attempts += 1
    try:
        result = suite.run_tool("catalog", "import", str(path), timeout=IMPORT_TIMEOUT)
        ok = result.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    with truth.lock:
        if ok:
            truth.edits_acked.add(number)
            truth.edit_acked_at[number] = time.monotonic()
        else:
            truth.edit_failures += 1
            truth.edits_pending.append(number)
    return ok


def edit_loop(suite, truth: Truth, work_dir: Path, stop: threading.Event):
    try:
        _edit_loop(suite, truth, work_dir, stop)
    except Exception as error:  # noqa: BLE001
        truth.errors.append(f"edit workload died: {error!r}")
        log(f"edit workload died: {error!r}")


def _edit_loop(suite, truth: Truth, work_dir: Path, stop: threading.Event):
    while not stop.is_set():
        with truth.lock:
            if truth.edits_pending:
                number = truth.edits_pending.pop(0)
            elif truth.next_edit < MAX_EDITS:
                number = truth.next_edit
                truth.next_edit += 1
            else:
                number = None
        if number is not None:
            run_edit(suite, work_dir, number, truth)
        stop.wait(EDIT_INTERVAL)


def wait_all_ready(suite, timeout: float = 120) -> float:
    started = time.monotonic()
    suite.wait_ready(SERVICES, timeout=timeout)
    return time.monotonic() - started


def overload(suite, truth: Truth, factory: EventFactory) -> dict:
    """wrk on GET /v1/tours (if installed) and 48 threads posting event batches at once, for a few seconds."""
    figures = {}
    wrk = shutil.which("wrk")
    proc = None
    if wrk:
        proc = subprocess.Popen([wrk, "-t2", "-c256", f"-d{OVERLOAD_SECONDS}s", "--timeout", "5s", suite.feed_url + "/v1/tours"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + OVERLOAD_SECONDS
    statuses = Counter()

    def hammer():
        while time.monotonic() < deadline:
            batch = factory.batch(10)
            with truth.lock:
                truth.sent_events += len(batch)
            status, body = post_events(suite.feed_url, batch, timeout=10)
            truth.record(batch, status, body)
            statuses[status] += 1

    with concurrent.futures.ThreadPoolExecutor(48) as pool:
        for future in [pool.submit(hammer) for _ in range(48)]:
            future.result()
    if proc:
        output = proc.communicate(timeout=OVERLOAD_SECONDS + 30)[0]
        figures["wrk"] = " | ".join(line.strip() for line in output.splitlines()
                                    if "Requests/sec" in line or "Non-2xx" in line or "Socket errors" in line or "requests in" in line)
    figures["event_posts"] = dict(statuses)
    return figures


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="faults-", dir=ROOT / ".run"))
    pg_dir, pg_port = os.environ["FAULTS_PG_DIR"], os.environ["ITOUR_TEST_POSTGRES_PORT"]
    broker_pidfile = Path(os.environ["FAULTS_BROKER_PIDFILE"])
    log(f"starting the four services from {os.environ.get('ITOUR_BIN_DIR', ROOT / '.build/debug')} (logs in {tmp}/logs)")
    suite = start_suite(tmp)
    log(f"suite ready: {suite.ports}, database {suite.env['POSTGRES_DB']}")
    result = {"faults": [], "checks": {}, "violations": [], "not_run": []}
    probe = Probe(suite.feed_url)
    try:
        # load-demo returns once catalog applied it; the feed learns it from catalog.events a moment later.
        deadline = time.monotonic() + 90
        while not (tours := get_json(suite.feed_url + "/v1/tours")["tours"]):
            if time.monotonic() > deadline:
                raise RuntimeError("the demo tour never reached the feed")
            time.sleep(0.5)
        tour_ids = [t["id"] for t in tours]
        poi_ids = sorted({s["id"] for t in tours for s in get_json(f"{suite.feed_url}/v1/tours/{t['id']}")["stops"]})
        log(f"demo content: {len(tour_ids)} tours, {len(poi_ids)} POIs")
        factory = EventFactory(tour_ids, poi_ids)
        truth = Truth()
        stop = threading.Event()
        work_dir = tmp / "edits"
        work_dir.mkdir()
        threads = [threading.Thread(target=event_loop, args=(suite, truth, factory, stop), daemon=True),
                   threading.Thread(target=edit_loop, args=(suite, truth, work_dir, stop), daemon=True)]
        probe.start()
        for thread in threads:
            thread.start()

        def progress(label: str):
            with truth.lock:
                log(f"{label}: events sent {truth.sent_events}, acked {len(truth.acked)}, awaiting retry "
                    f"{sum(map(len, truth.pending))}; edits acked {len(truth.edits_acked)}, failed attempts {truth.edit_failures}; "
                    f"probe failures {dict(probe.failed)}")

        def fault(name: str, action):
            log(f"fault: {name}")
            probe.phase = name
            started = time.monotonic()
            truth.marks.append((started, f"{name}: started"))
            detail = action() or {}
            probe.phase = "recovering:" + name
            try:
                ready = wait_all_ready(suite)
                detail["ready_after_s"] = round(time.monotonic() - started, 1)
                detail["all_ready"] = True
            except RuntimeError as error:
                detail["all_ready"] = False
                detail["error"] = str(error)
                result["violations"].append(f"{name}: services not ready again: {error}")
                # Try to bring back whatever died so the run can go on.
                for svc in SERVICES:
                    process = suite.processes.get(svc)
                    if process is None or process.poll() is not None:
                        suite.start(svc)
            detail["name"] = name
            result["faults"].append(detail)
            probe.phase = "steady"
            time.sleep(SETTLE)
            progress(f"after {name}")

        time.sleep(SETTLE)
        progress("steady")

        for svc in SERVICES if "kill" in SCENARIOS else ():
            def kill_restart(svc=svc):
                suite.stop(svc, signal.SIGKILL)
                time.sleep(1)
                suite.start(svc)
            fault(f"kill -9 {svc}", kill_restart)

        def postgres_restart():
            subprocess.run([str(ROOT / "scripts/postgres.sh"), "stop", pg_dir, pg_port], check=True, capture_output=True)
            time.sleep(4)
            subprocess.run([str(ROOT / "scripts/postgres.sh"), "start", pg_dir, pg_port], check=True, capture_output=True)
        if "postgres" in SCENARIOS:
            fault("restart postgres", postgres_restart)

        def broker_pause():
            pid = int(broker_pidfile.read_text().split()[0])
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(PAUSE_SECONDS)
            finally:
                os.kill(pid, signal.SIGCONT)
            return {"paused_s": PAUSE_SECONDS}
        if "pause" in SCENARIOS:
            fault("pause broker", broker_pause)

        if "overload" in SCENARIOS:
            fault("overload feed", lambda: overload(suite, truth, factory))

        # Restarts and broker loss (restarts.py). No service is restarted by hand: one that is not ready
        # again is a violation (and is started again only so the run can go on).
        broker = restarts.Broker(broker_pidfile, int(suite.env["KAFKA_BROKERS"].rsplit(":", 1)[1]),
                                 Path(os.environ.get("FAULTS_BROKER_LOG", ROOT / ".run" / "logs" / "faults-broker.log")))
        scenarios = restarts.Restarts(suite, broker, truth, factory, work_dir, log, probe.seen)

        def scenario(label: str, which: str):
            log(f"fault: {label}")
            probe.phase = label
            detail = scenarios.run(which, label)
            back = detail["_back"]
            probe.phase = "recovering:" + label
            try:
                suite.wait_ready(SERVICES, timeout=READY_TIMEOUT)
                detail["ready_at"] = time.monotonic()
                detail["ready_after_s"] = round(time.monotonic() - back, 1)
                detail["all_ready"] = True
            except RuntimeError as error:
                detail["all_ready"] = False
                detail["error"] = str(error)
                result["violations"].append(f"{label}: services not ready again within {READY_TIMEOUT:.0f} s: {error}")
            detail = scenarios.finish(label, detail)
            detail["name"] = label
            log(f"{label}: " + ", ".join(f"{k}={v}" for k, v in detail.items() if k not in ("name",)))
            for svc in SERVICES:
                process = suite.processes.get(svc)
                if process is None or process.poll() is not None:
                    log(f"{svc} is not running: started again so the run can go on (a violation)")
                    suite.start(svc)
            result["faults"].append(detail)
            probe.phase = "steady"
            time.sleep(SETTLE)
            progress(f"after {label}")

        if "restart" in SCENARIOS:
            scenario("restart stack (make down && make up)", "restart_stack")
        if "broker-loss" in SCENARIOS:
            scenario("broker kill -9, back empty", "broker_loss")
        if "topic-reset" in SCENARIOS:
            scenario("tracking.events + catalog.events deleted and re-created", "topic_reset")
        result["violations"].extend(scenarios.violations)

        # Drain: no new events or edits; everything refused is sent again until acknowledged.
        with truth.lock:
            truth.sent_events = max(truth.sent_events, MAX_EVENTS)
            truth.next_edit = max(truth.next_edit, MAX_EDITS)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with truth.lock:
                busy = bool(truth.pending or truth.edits_pending)
            if not busy:
                break
            time.sleep(1)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        probe.stop_flag.set()
        progress("workload done")
        # Anything still pending after the drain is not acknowledged: not part of the truth.
        unacked_events = sum(map(len, truth.pending))
        unacked_edits = sorted(set(truth.edits_pending))

        result.update(compare_events(suite, truth, scenarios.exposed))
        result.update(edit_latencies(result["faults"], truth, probe.seen))
        result.update(compare_edits(suite, truth))
        result["events_unacked_at_end"] = unacked_events
        result["edits_unacked_at_end"] = len(unacked_edits)
        result["event_posts"] = truth.posts
        result["event_refusals"] = {str(k): v for k, v in truth.refusals.items()}
        result["events_rejected_in_202"] = len(truth.rejected)
        result["probe_ok"] = dict(probe.ok)
        result["probe_failed"] = dict(probe.failed)
        # The feed must answer reads from memory while Postgres and the broker are out.
        outage_failures = sum(v for k, v in probe.failed.items() if k in ("restart postgres", "pause broker"))
        result["feed_read_failures_during_outages"] = outage_failures
        if outage_failures:
            result["violations"].append(f"feed GET /v1/tours failed {outage_failures} times during the Postgres/broker outages")
        result["violations"].extend(truth.errors)
        if len(truth.acked) < min(200, MAX_EVENTS):
            result["violations"].append(f"only {len(truth.acked)} events acknowledged: the workload did not run")
        if truth.rejected:
            sample = next(iter(truth.rejected.values()))
            result["violations"].append(f"{len(truth.rejected)} valid workload events rejected inside a 202 (e.g. {sample})")
    finally:
        probe.stop_flag.set()
        for name in list(suite.processes):
            suite.stop(name)
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2, sort_keys=True))
    print_table(result)
    return 1 if result["violations"] else 0


def compare_events(suite, truth: Truth, exposed: dict[str, set[str]] | None = None) -> dict:
    """Analytics' reports against the acknowledged events: per type in the summary, per day and type in
    the daily series, and id by id against the processed-events table.

    `exposed`: per broker-loss fault, the acknowledged ids analytics had not counted when the broker lost
    them (restarts.py). Those that are missing at the end are reported as lost with the broker, not as a
    violation, and are left out of the truth the reports are compared with."""
    exposed = exposed or {}
    all_acked = dict(truth.acked)
    out = {"events_acked": len(all_acked)}
    violations = []

    days_all = sorted({e["occurredAt"][:10] for e in all_acked.values()}) or [time.strftime("%Y-%m-%d", time.gmtime())]
    day_from, day_to = days_all[0], days_all[-1]
    out["report_range"] = [day_from, day_to]

    # Analytics catches up asynchronously: wait until the summary matches, or stops moving (three looks).
    summary, deadline, last, still = None, time.monotonic() + COUNT_WAIT, None, 0
    while time.monotonic() < deadline:
        try:
            summary = report(suite.analytics_url, "summary", day_from, day_to)
        except RuntimeError as error:
            log(f"summary not available yet: {error}")
            time.sleep(2)
            continue
        counted = sum(summary.get(f, 0) for f in COUNTED_TYPES.values())
        if counted == len(all_acked):
            break
        still = still + 1 if counted == last else 0
        if still >= 3:
            log(f"analytics counted {counted} of {len(all_acked)} acknowledged events and stopped moving")
            break
        log(f"analytics counted {counted} of {len(all_acked)} acknowledged events; waiting")
        last = counted
        time.sleep(3)
    if summary is None:
        out["events_counted"] = 0
        out["events_lost"] = len(all_acked)
        out["events_double_counted"] = 0
        return _merge(out, violations + ["no summary report from analytics"])

    # Id by id, straight from analytics' own table: which acknowledged ids are missing, and which of those
    # a broker loss excuses.
    missing_ids = None
    excused: set[str] = set()
    try:
        processed = restarts.processed_ids(suite)
        missing = {i for i in all_acked if i not in processed}
        unexcused, excused_by = restarts.split_missing(missing, exposed)
        excused = missing - unexcused
        missing_ids = len(unexcused)
        out["processed_ids"] = len(processed)
        out["events_lost_with_broker"] = len(excused)
        out["events_lost_with_broker_by_fault"] = excused_by
        if unexcused:
            # When they were acknowledged, relative to the faults (the last mark before each 202).
            phases = Counter()
            for i in unexcused:
                at = truth.ack_at.get(i, 0)
                phases[next((label for t, label in reversed(truth.marks) if t <= at), "before the first fault")] += 1
            out["missing_by_phase"] = dict(phases)
            violations.append(f"{len(unexcused)} acknowledged event ids not in analytics.processed_events, by when they were "
                              f"acknowledged: {dict(phases)} (e.g. {sorted(unexcused)[:2]})")
    except (subprocess.SubprocessError, OSError) as error:
        out["processed_ids"] = f"unavailable ({error})"
    out["missing_ids"] = missing_ids

    acked = [e for i, e in all_acked.items() if i not in excused]
    by_day_type = Counter((e["occurredAt"][:10], e["type"]) for e in acked)
    by_type = Counter(e["type"] for e in acked)
    devices = {e["deviceId"] for e in acked}
    days = sorted({d for d, _ in by_day_type}) or days_all
    out["events_expected"] = len(acked)

    lost = double = 0
    per_type = {}
    for kind, field in COUNTED_TYPES.items():
        got, want = int(summary.get(field, 0)), by_type.get(kind, 0)
        per_type[field] = {"acked": want, "counted": got}
        lost += max(0, want - got)
        double += max(0, got - want)
    out["per_type"] = per_type
    out["events_counted"] = sum(int(summary.get(f, 0)) for f in COUNTED_TYPES.values())
    if int(summary.get("uniqueDevices", -1)) != len(devices):
        violations.append(f"uniqueDevices {summary.get('uniqueDevices')} != {len(devices)} distinct devices acked")

    daily_lost = daily_double = 0
    try:
        daily = report(suite.analytics_url, "daily", day_from, day_to)["days"]
        rows = {row["date"]: row for row in daily}
        for day in days:
            row = rows.get(day, {})
            for kind, field in DAILY_FIELDS.items():
                got, want = int(row.get(field, 0)), by_day_type.get((day, kind), 0)
                daily_lost += max(0, want - got)
                daily_double += max(0, got - want)
        out["daily_days"] = len(days)
    except (RuntimeError, KeyError) as error:
        violations.append(f"daily report unavailable: {error}")
    out["daily_lost"], out["daily_double"] = daily_lost, daily_double

    out["events_lost"] = max(lost, daily_lost, missing_ids or 0)
    out["events_double_counted"] = max(double, daily_double)
    if out["events_lost"]:
        violations.append(f"{out['events_lost']} acknowledged events not counted")
    if out["events_double_counted"]:
        violations.append(f"{out['events_double_counted']} events counted more than once")
    return _merge(out, violations)


def edit_latencies(faults: list[dict], truth: Truth, seen: dict[str, float]) -> dict:
    """Per restart scenario: how long the workload's edits acknowledged in the minute after the services
    were ready again took to reach the feed (the scenario's own edit is checked in restarts.py)."""
    out = {}
    with truth.lock:
        acked_at = dict(truth.edit_acked_at)
    for f in faults:
        if "kind" not in f or f.get("ready_after_s") is None:
            continue
        # ready_at is not kept as a time; the scenario's own edit starts once the services are ready.
        latencies = []
        for number, at in acked_at.items():
            if number >= 900 or "ready_at" not in f:
                continue
            if f["ready_at"] <= at <= f["ready_at"] + 60:
                name = f"Fault Tour {number:04d}"
                latencies.append(round(seen[name] - at, 2) if name in seen else None)
        if latencies:
            f["workload_edits_after"] = len(latencies)
            known = [x for x in latencies if x is not None]
            f["workload_edits_max_visible_s"] = max(known) if known else None
            f["workload_edits_not_visible"] = latencies.count(None)
    for f in faults:
        f.pop("ready_at", None)
    return out


def _merge(out: dict, violations: list[str]) -> dict:
    out["_violations"] = violations
    return out


def compare_edits(suite, truth: Truth) -> dict:
    """Every acknowledged edit's tour on the feed exactly once, with its POI."""
    tours = Counter()
    deadline = time.monotonic() + EDITS_WAIT
    acked = sorted(truth.edits_acked)
    applied = duplicated = 0
    lost_numbers = []
    while True:
        listing = get_json(suite.feed_url + "/v1/tours")["tours"]
        tours = Counter(t["name"] for t in listing)
        lost_numbers = [n for n in acked if tours.get(f"Fault Tour {n:04d}", 0) == 0]
        if not lost_numbers or time.monotonic() > deadline:
            break
        time.sleep(2)
    for n in acked:
        count = tours.get(f"Fault Tour {n:04d}", 0)
        applied += 1 if count >= 1 else 0
        duplicated += max(0, count - 1)
    violations = []
    if lost_numbers:
        violations.append(f"{len(lost_numbers)} acknowledged content edits not on the feed (e.g. {lost_numbers[:5]})")
    if duplicated:
        violations.append(f"{duplicated} content edits applied more than once")
    # Each edit's POI is served as its own document too.
    poi_missing = 0
    for n in acked[:10]:
        matches = get_json(f"{suite.feed_url}/v1/search?q=Fault%20POI%20{n:04d}").get("pois", [])
        if sum(1 for p in matches if p.get("name") == f"Fault POI {n:04d}") != 1:
            poi_missing += 1
    if poi_missing:
        violations.append(f"{poi_missing} of the first 10 acknowledged edits' POIs not found exactly once by /v1/search")
    return {"edits_acked": len(acked), "edits_applied": applied, "edits_lost": len(lost_numbers),
            "edits_duplicated": duplicated, "edit_attempts": truth.edit_attempts, "edit_failed_attempts": truth.edit_failures,
            "_edit_violations": violations}


def print_table(result: dict) -> None:
    violations = result["violations"] + result.pop("_violations", []) + result.pop("_edit_violations", [])
    result["violations"] = violations
    RESULT.write_text(json.dumps(result, indent=2, sort_keys=True))
    rows = [("faults injected", len(result["faults"]))]
    for f in result["faults"]:
        extra = {k: v for k, v in f.items() if k not in ("name",)}
        rows.append(("  " + f["name"], ", ".join(f"{k}={v}" for k, v in extra.items())))
    for key in ("event_posts", "event_refusals", "events_acked", "events_lost_with_broker", "events_lost_with_broker_by_fault",
                "events_expected", "events_counted", "events_lost", "events_double_counted",
                "missing_ids", "processed_ids", "daily_days", "events_rejected_in_202", "events_unacked_at_end",
                "edits_acked", "edits_applied", "edits_lost", "edits_duplicated", "edit_attempts", "edit_failed_attempts",
                "edits_unacked_at_end", "feed_read_failures_during_outages", "probe_ok", "probe_failed", "report_range"):
        if key in result:
            rows.append((key.replace("_", " "), result[key]))
    for field, v in result.get("per_type", {}).items():
        rows.append((f"  {field}", f"acked {v['acked']}, counted {v['counted']}"))
    width = max(len(r[0]) for r in rows)
    print()
    print("=" * 78)
    print("FAULT RUN")
    print("-" * 78)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    print("-" * 78)
    if violations:
        print("VIOLATIONS:")
        for v in violations:
            print("  - " + v)
    else:
        print("no violations: 0 lost, 0 double-counted, every acknowledged edit applied once")
    print("=" * 78, flush=True)


if __name__ == "__main__":
    sys.exit(main())
