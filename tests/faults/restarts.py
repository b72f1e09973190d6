"""Restarts and broker loss, for the fault run (fault_run.py) and its quick form (test_restarts.py).

Three scenarios, each injected in the middle of a workload with a known truth (fault_run.Truth):

- restart_stack: the whole stack restarted the way `make down && make up` does it: the writers (feed,
  admin) stopped, scripts/drain.sh waits until catalog and analytics took in what the broker holds,
  catalog and analytics stopped, the broker stopped and started EMPTY (memory-only), the topics created
  as up.sh creates them (scripts/topics.py ensure), the four services started. Nothing acknowledged
  before may be lost (the drain is what guarantees it).
- broker_loss: the broker killed with SIGKILL and a fresh, empty tansu started on the same port, topics
  created as `make up` would (topics.py ensure); the services are not touched.
- topic_reset: `tracking.events` and `catalog.events` deleted and re-created (declared partition counts)
  on the running suite through the AdminClient.

After broker_loss and topic_reset, events acknowledged before the fault that analytics had not counted
when it began may be lost (the broker held them only in memory): they are put in `exposed` and reported
apart, never as a violation. Every other acknowledged event must be counted exactly once.

Measured: time from the broker back (or the topics re-created) to the first 202, to analytics counting an
event acknowledged after it, and to a content edit made after it being on the feed; the drain's duration
and the backlog it started from.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "scripts"))
from workload import ROOT, EventFactory, get_json, import_file, post_events  # noqa: E402

import topics as topic_tool  # noqa: E402  (scripts/topics.py)

EDIT_VISIBLE_LIMIT = float(os.environ.get("FAULTS_EDIT_VISIBLE_LIMIT", "5"))
RECOVERY_TIMEOUT = float(os.environ.get("FAULTS_RECOVERY_TIMEOUT", "60"))
DRAIN_TIMEOUT = os.environ.get("DRAIN_TIMEOUT", "60")
EDIT_SEEN_WAIT = float(os.environ.get("FAULTS_EDIT_SEEN_WAIT", "20"))   # how long to look for an edit on the feed
# The load the restart's drain starts under: posters, batch size, seconds before the writers stop.
LOAD_THREADS = int(os.environ.get("FAULTS_DRAIN_LOAD_THREADS", "4"))
LOAD_BATCH = int(os.environ.get("FAULTS_DRAIN_LOAD_BATCH", "100"))
LOAD_SECONDS = float(os.environ.get("FAULTS_DRAIN_LOAD_SECONDS", "3"))
# Checked after broker_loss / topic_reset: these must be back with their declared partition counts.
CHECKED_TOPICS = ("tracking.events", "catalog.events", "catalog.commands", "catalog.command-results")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def port_open(port: int) -> bool:
    import socket
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Broker:
    """A tansu started through scripts/broker.sh (pid file, port, log)."""

    def __init__(self, pidfile: Path, port: int, log: Path):
        self.pidfile, self.port, self.log = Path(pidfile), int(port), Path(log)

    @property
    def brokers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def pid(self) -> int | None:
        try:
            pid = int(self.pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if alive(pid) else None

    def _script(self, command: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "scripts" / "broker.sh"), command, str(self.pidfile), str(self.port), str(self.log)],
                              capture_output=True, text=True, timeout=60)

    def start(self) -> None:
        for attempt in range(5):
            result = self._script("start")
            if result.returncode == 0:
                return
            time.sleep(1 + attempt)
        raise RuntimeError(f"broker.sh start failed: {result.stdout}{result.stderr}")

    def stop(self) -> None:
        self._script("stop")

    def kill9(self) -> None:
        pid = self.pid()
        if pid is None:
            raise RuntimeError(f"no live broker in {self.pidfile}")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while (alive(pid) or port_open(self.port)) and time.monotonic() < deadline:
            time.sleep(0.05)

    def ensure_topics(self, prefix: str) -> dict:
        """What `make up` does after starting a broker: the declared topics (scripts/topics.py ensure)."""
        done, problems = topic_tool.ensure(self.brokers, prefix)
        return {"created": sorted(n for n, what in done.items() if what == "created"), "problems": problems}

    def partition_counts(self, prefix: str) -> dict:
        return topic_tool.partition_counts(self.brokers, [prefix + n for n in CHECKED_TOPICS])


def psql(suite, sql: str, timeout: float = 60) -> list[str]:
    return subprocess.run(["psql", "-h", "127.0.0.1", "-p", suite.env["POSTGRES_PORT"], "-U", "itour", "-d",
                           suite.env["POSTGRES_DB"], "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          capture_output=True, text=True, timeout=timeout, check=True).stdout.split()


def run_drain(suite, brokers: str, timeout: str | None = None) -> subprocess.CompletedProcess:
    """scripts/drain.sh as make down runs it: analytics' backlog exact (the broker's watermarks against its stored
    offsets), catalog's commands and outbox."""
    timeout = timeout or DRAIN_TIMEOUT
    env = dict(os.environ, DRAIN_TIMEOUT=timeout, DRAIN_PROGRESS="2", DRAIN_BROKERS=brokers, DRAIN_PG_PORT=suite.env["POSTGRES_PORT"],
               DRAIN_PG_DB=suite.env["POSTGRES_DB"], DRAIN_TOPIC_PREFIX=suite.env["KAFKA_TOPIC_PREFIX"])
    return subprocess.run([str(ROOT / "scripts" / "drain.sh"), "--analytics", suite.analytics_url, "--catalog", suite.catalog_url],
                          capture_output=True, text=True, env=env, timeout=float(timeout) + 30)


def processed_ids(suite, ids: list[str] | None = None) -> set[str]:
    """Event ids analytics has counted (all, or those among `ids`)."""
    if ids is None:
        return set(psql(suite, "SELECT id FROM analytics.processed_events"))
    if not ids:
        return set()
    array = "{" + ",".join(ids) + "}"
    return set(psql(suite, f"SELECT id FROM analytics.processed_events WHERE id = ANY('{array}'::uuid[])"))


class Restarts:
    """Runs the scenarios against a suite (tests/conftest.py Suite) with a workload's truth."""

    def __init__(self, suite, broker: Broker, truth, factory: EventFactory, work_dir: Path, log, feed_seen: dict):
        self.suite, self.broker, self.truth, self.factory = suite, broker, truth, factory
        self.work_dir, self.log = work_dir, log
        self.feed_seen = feed_seen            # tour name -> monotonic time first seen on /v1/tours (the probe fills it)
        self.prefix = suite.env.get("KAFKA_TOPIC_PREFIX", "")
        self.exposed: dict[str, set[str]] = {}  # fault name -> acked ids the broker may have taken with it
        self.next_edit = 900
        self.violations: list[str] = []

    # ----- measurements -----

    def _mark(self, batch: list[dict]) -> None:
        with self.truth.lock:
            self.truth.sent_events += len(batch)
            self.truth.extra_sent += len(batch)   # beyond the workload's FAULTS_MAX_EVENTS

    def _post_one(self) -> int:
        """Posts one fresh event (part of the truth); its HTTP status (0: no answer)."""
        batch = self.factory.batch(1)
        self._mark(batch)
        status, body = post_events(self.suite.feed_url, batch, timeout=5)
        self.truth.record(batch, status, body)
        return status

    def first_202(self, since: float, timeout: float | None = None) -> float | None:
        """Posts one fresh event every 0.2 s until a 202; seconds from `since` to that 202 (None: none in time)."""
        timeout = timeout or RECOVERY_TIMEOUT
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self._post_one()
            if status == 202:
                return round(time.monotonic() - since, 2)
            time.sleep(0.2)
        return None

    def counting_again(self, since: float, timeout: float | None = None) -> float | None:
        """Seconds from `since` until analytics counted an event acknowledged after `since` (one more posted
        every 0.5 s meanwhile, so there is always one)."""
        timeout = timeout or RECOVERY_TIMEOUT
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._post_one()
            with self.truth.lock:
                after = [i for i, t in self.truth.ack_at.items() if t >= since]
            try:
                if after and processed_ids(self.suite, after[-2000:]):
                    return round(time.monotonic() - since, 2)
            except subprocess.SubprocessError:
                pass
            time.sleep(0.5)
        return None

    def edit_visible(self, timeout: float | None = None) -> dict:
        """One content edit made now (`catalog import`, retried until it exits 0): seconds until it was
        acknowledged and from then until its tour was on the feed's /v1/tours."""
        timeout = timeout or RECOVERY_TIMEOUT
        number = self.next_edit
        self.next_edit += 1
        path = self.work_dir / f"edit-{number:04d}.json"
        path.write_text(json.dumps(import_file(number)))
        started = time.monotonic()
        deadline = started + timeout
        acked_at = None
        attempts = 0
        while time.monotonic() < deadline:
            attempts += 1
            with self.truth.lock:
                self.truth.edit_attempts += 1
            try:
                ok = self.suite.run_tool("catalog", "import", str(path),
                                         timeout=max(5.0, min(deadline - time.monotonic(), 30.0))).returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            if ok:
                acked_at = time.monotonic()
                with self.truth.lock:
                    self.truth.edits_acked.add(number)
                    self.truth.edit_acked_at[number] = acked_at
                break
            with self.truth.lock:
                self.truth.edit_failures += 1
            time.sleep(0.5)
        out = {"edit": number, "edit_attempts": attempts}
        if acked_at is None:
            with self.truth.lock:
                self.truth.edits_pending.append(number)   # the edit loop keeps trying; never acked = not in the truth
            out["edit_acked_s"] = None
            out["edit_visible_s"] = None
            return out
        out["edit_acked_s"] = round(acked_at - started, 2)
        name = f"Fault Tour {number:04d}"
        seen_deadline = acked_at + EDIT_SEEN_WAIT
        while time.monotonic() < seen_deadline and name not in self.feed_seen:
            time.sleep(0.1)
        seen = self.feed_seen.get(name)
        out["edit_visible_s"] = round(seen - acked_at, 2) if seen else None
        return out

    def services_alive(self) -> list[str]:
        """Services whose process exited (nobody may restart one by hand in broker_loss / topic_reset)."""
        return [f"{name} (exit {p.returncode})" for name, p in self.suite.processes.items() if p.poll() is not None]

    def _expose(self, name: str, processed_before: set[str], until: float) -> int:
        with self.truth.lock:
            acked = [i for i, t in self.truth.ack_at.items() if t <= until]
        self.exposed[name] = {i for i in acked if i not in processed_before}
        return len(self.exposed[name])

    def _after(self, name: str, detail: dict, back: float) -> dict:
        """The checks every scenario ends with: first 202, counting again, an edit on the feed, topics."""
        detail["first_202_s"] = self.first_202(back)
        # Without a 202 nothing new can be counted: not waited for again.
        detail["counting_again_s"] = self.counting_again(back) if detail["first_202_s"] is not None else None
        detail.update(self.edit_visible())
        try:
            counts = self.broker.partition_counts(self.prefix)
            declared = topic_tool.declared_topics()
            detail["partitions"] = {n[len(self.prefix):]: c for n, c in counts.items()}
            wrong = {n: c for n, c in detail["partitions"].items() if c != declared[n]}
            if wrong:
                self.violations.append(f"{name}: topics not back with their declared partition counts: "
                                       + ", ".join(f"{n} {'missing' if c is None else c} (declared {declared[n]})" for n, c in wrong.items()))
        except Exception as error:  # noqa: BLE001
            detail["partitions"] = f"unavailable: {error}"
        back_as = "the topics were re-created" if detail["kind"] == "topic_reset" else "the broker was back"
        if detail["first_202_s"] is None:
            self.violations.append(f"{name}: no 202 from POST /v1/events within {RECOVERY_TIMEOUT:.0f} s after {back_as}")
        if detail["counting_again_s"] is None and detail["first_202_s"] is not None:
            self.violations.append(f"{name}: analytics counted no event acknowledged after {back_as} within {RECOVERY_TIMEOUT:.0f} s")
        if detail.get("edit_acked_s") is None:
            self.violations.append(f"{name}: a content edit made after the fault was not acknowledged within {RECOVERY_TIMEOUT:.0f} s")
        elif detail.get("edit_visible_s") is None or detail["edit_visible_s"] > EDIT_VISIBLE_LIMIT:
            self.violations.append(f"{name}: a content edit acknowledged after the fault was "
                                   + (f"not on the feed within {EDIT_SEEN_WAIT:.0f} s" if detail.get("edit_visible_s") is None
                                      else f"on the feed only after {detail['edit_visible_s']} s")
                                   + f" (limit {EDIT_VISIBLE_LIMIT:.0f} s)")
        return detail

    # ----- the scenarios -----

    def restart_stack(self, name: str = "restart stack (make down && make up)") -> dict:
        """Under load: LOAD_THREADS posters send batches of LOAD_BATCH as fast as the feed answers for
        LOAD_SECONDS, and the writers are stopped while they still post (as `make down` in the middle of a
        stream of events); what they got a 202 for must survive."""
        suite = self.suite
        before = len(self.truth.acked)
        stop_load = threading.Event()

        def poster():
            while not stop_load.is_set():
                b = self.factory.batch(LOAD_BATCH)
                self._mark(b)
                status, body = post_events(suite.feed_url, b, timeout=20)
                self.truth.record(b, status, body)
                if status == 0:
                    return   # the feed is gone; the workload sends the batch again later

        posters = [threading.Thread(target=poster, daemon=True) for _ in range(LOAD_THREADS)]
        for p in posters:
            p.start()
        time.sleep(LOAD_SECONDS)
        started = time.monotonic()
        for svc in ("feed", "admin"):
            suite.stop(svc)
        writers_stopped = time.monotonic()
        stop_load.set()
        for p in posters:
            p.join(timeout=30)
        detail = {"load_acked": len(self.truth.acked) - before}
        drain_started = time.monotonic()
        drain = run_drain(suite, self.broker.brokers)
        drained_at = time.monotonic()
        for line in (drain.stdout + drain.stderr).splitlines():
            if not line.startswith("drain: result"):
                self.log("  " + line)
        fields = dict(re.findall(r"(\w+)=(\S+)", (re.findall(r"^drain: result .*$", drain.stdout, re.M) or [""])[-1]))
        detail.update(drained=drain.returncode == 0, drain_s=round(drained_at - drain_started, 2),
                      drain_start_analytics_lag=fields.get("first_analytics_lag"), drain_start_outbox=fields.get("first_outbox"),
                      writers_stop_s=round(writers_stopped - started, 2))
        if drain.returncode != 0:
            left = [line for line in drain.stderr.splitlines() if "gave up" in line]
            self.violations.append(f"{name}: the drain gave up: {left[-1] if left else drain.stderr.strip()[-300:]}")
        for svc in ("catalog", "analytics"):
            suite.stop(svc)
        self.broker.stop()
        self.broker.start()
        back = time.monotonic()
        detail["topics"] = self.broker.ensure_topics(self.prefix)
        for svc in ("catalog", "feed", "analytics", "admin"):
            suite.start(svc)
        detail["broker_down_s"] = round(back - drained_at, 2)
        return detail, back

    def broker_loss(self, name: str = "broker kill -9, back empty") -> dict:
        processed_before = processed_ids(self.suite)
        started = time.monotonic()
        self.broker.kill9()
        time.sleep(float(os.environ.get("FAULTS_BROKER_DEAD", "2")))
        self.broker.start()
        back = time.monotonic()
        detail = {"broker_dead_s": round(back - started, 2), "topics": self.broker.ensure_topics(self.prefix)}
        detail["acked_before_not_counted"] = self._expose(name, processed_before, back)
        return detail, back

    def topic_reset(self, name: str = "tracking.events + catalog.events deleted and re-created") -> dict:
        processed_before = processed_ids(self.suite)
        started = time.monotonic()
        client = topic_tool.admin(self.broker.brokers)
        names = [self.prefix + "tracking.events", self.prefix + "catalog.events"]
        deleted = topic_tool.delete(self.broker.brokers, names, client)
        declared = topic_tool.declared_topics()
        created = topic_tool.create(self.broker.brokers, {n: declared[n[len(self.prefix):]] for n in names}, client)
        back = time.monotonic()
        detail = {"deleted": deleted, "created": created, "reset_s": round(back - started, 3)}
        if any(v != "deleted" for v in deleted.values()):
            self.violations.append(f"{name}: DeleteTopics failed: {deleted}")
        # A service may make a deleted topic again between our delete and create ('exists'): that is recovery,
        # as long as it has its declared partitions, which the check after the fault compares.
        if any(v not in ("created", "exists") for v in created.values()):
            self.violations.append(f"{name}: re-creating failed: {created}")
        detail["acked_before_not_counted"] = self._expose(name, processed_before, back)
        return detail, back

    def run(self, which: str, name: str, **kwargs) -> dict:
        """Runs one scenario and its checks (without waiting for /ready: the caller does)."""
        self.truth.marks.append((time.monotonic(), f"{name}: started"))
        detail, back = getattr(self, which)(name=name, **kwargs)
        self.truth.marks.append((back, f"{name}: broker or topics back"))
        detail["kind"] = which
        detail["_back"] = back
        return detail

    def finish(self, name: str, detail: dict) -> dict:
        """After the services are ready again (or were given their chance): the measurements and checks."""
        back = detail.pop("_back")
        if detail["kind"] != "restart_stack":
            exited = self.services_alive()
            if exited:
                self.violations.append(f"{name}: services exited and would need a restart by hand: {exited}")
                detail["services_exited"] = exited
        return self._after(name, detail, back)


def split_missing(missing: set[str], exposed: dict[str, set[str]]) -> tuple[set[str], dict[str, int]]:
    """(missing ids no fault excuses, {fault: missing ids it excuses})."""
    excused_by = {name: len(missing & ids) for name, ids in exposed.items()}
    excused = set().union(*exposed.values()) if exposed else set()
    return missing - excused, excused_by
