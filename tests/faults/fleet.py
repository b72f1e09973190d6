"""A second replica of each service beside a suite (tests/conftest.py start_suite): the same database, topic
prefix, secrets and settings, other ports. Operators run two or more of every service (issue 44); the fleet
tests (test_fleet.py, scripts/fleet.py) start one set of replicas this way and put both to work at once.
"""
from __future__ import annotations

import itertools
import os
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import SERVICES, Suite, free_port  # noqa: E402


def start_replicas(first: Suite, log_dir: Path, services=SERVICES, wait: bool = True) -> Suite:
    """Replicas of `services` of `first`, each on a port of its own; the URLs a service calls (the feed's, the
    catalog's, analytics') name the replica set's own services where it has them, else the first set's."""
    log_dir.mkdir(parents=True, exist_ok=True)
    ports = dict(first.ports)
    ports.update({name: free_port() for name in services})
    env = dict(first.env)
    env["ANALYTICS_URL"] = f"http://127.0.0.1:{ports['analytics']}"
    env["FEED_URL"] = f"http://127.0.0.1:{ports['feed']}"
    env["FEED_PUBLIC_URL"] = first.env["FEED_PUBLIC_URL"]
    env["CATALOG_URL"] = f"http://127.0.0.1:{ports['catalog']}"
    replicas = Suite(env=env, ports=ports, log_dir=log_dir, bin_dir=first.bin_dir)
    for name in services:
        replicas.start(name)
    if wait:
        try:
            replicas.wait_ready(services)
        except Exception:
            for name in list(replicas.processes):
                replicas.stop(name)
            raise
    return replicas


class Balancer:
    """A load balancer's view of a service's replicas, for clients of the fleet run: a request goes to the next
    replica in turn and, when it gets no answer at all (a replica stopping or stopped), to the other ones, as
    a balancer retries a refused connection. An answer, any status, is final."""

    def __init__(self, urls: list[str]):
        self.urls = urls
        self.turn = itertools.count()

    def order(self) -> list[str]:
        start = next(self.turn) % len(self.urls)
        return self.urls[start:] + self.urls[:start]


class FleetRun:
    """Steady load on two replica sets while replicas are killed, restarted one at a time and scaled in.

    Load: tracking events posted through both feeds (fault_run.event_loop, one poster per feed, a shared Truth);
    a save every SAVE_INTERVAL seconds through the admins (a new category, by the balancer: an admin being
    stopped is skipped, as a balancer would); the feed read through the balancer every 100 ms.
    Measured: events acknowledged and counted (exactly once, compare_events), saves made and failed and the
    longest, feed answers by status (a 5xx or no answer from every replica is a failure)."""

    SAVE_INTERVAL = 0.5

    def __init__(self, first: Suite, second: Suite, log=print):
        import fault_run  # noqa: PLC0415 (the fault run's workload; imported here so fleet.py alone stays light)
        from workload import EventFactory, get_json  # noqa: PLC0415
        self.fault_run = fault_run
        self.sets = [first, second]
        self.log = log
        self.truth = fault_run.Truth()
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.saves: list[tuple[float, float]] = []   # (when it began, how long it took), monotonic
        self.failed_saves: list[str] = []
        self.reads: Counter = Counter()
        self.steps: list[dict] = []
        tours = get_json(first.feed_url + "/v1/tours")["tours"]
        pois = sorted({s["id"] for t in tours for s in get_json(f"{first.feed_url}/v1/tours/{t['id']}")["stops"]})
        self.factory = EventFactory([t["id"] for t in tours], pois, devices=50, seed=44)
        self.threads = [threading.Thread(target=fault_run.event_loop, args=(suite, self.truth, self.factory, self.stop_flag), daemon=True)
                        for suite in self.sets]
        self.threads += [threading.Thread(target=self._save_loop, daemon=True), threading.Thread(target=self._read_loop, daemon=True)]

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def _save_loop(self) -> None:
        from workload import csrf_of, login  # noqa: PLC0415
        from conftest import ADMIN_EMAIL, ADMIN_PASSWORD  # noqa: PLC0415
        admins = Balancer([suite.admin_url for suite in self.sets])
        session, token, number = None, "", 0
        while not self.stop_flag.wait(self.SAVE_INTERVAL):
            number += 1
            started = time.monotonic()
            outcome = "no admin answered"
            for base in admins.order():
                try:
                    if session is None:
                        session, _ = login(base, ADMIN_EMAIL, ADMIN_PASSWORD)
                        token = ""
                    if not token:
                        token = csrf_of(session.get(base + "/categories", timeout=15).text)
                    answer = session.post(base + "/categories", data={"name": f"Fleet Save {number:05d}", "parent": "", "csrf_token": token},
                                          timeout=30, allow_redirects=False)
                except requests.RequestException:
                    continue
                outcome = "saved" if answer.status_code == 303 else f"{answer.status_code} from {base}"
                break
            with self.lock:
                if outcome == "saved":
                    self.saves.append((started, time.monotonic() - started))
                else:
                    self.failed_saves.append(f"save {number}: {outcome}")

    def _read_loop(self) -> None:
        feeds = Balancer([suite.feed_url for suite in self.sets])
        while not self.stop_flag.wait(0.1):
            status = 0
            for base in feeds.order():
                try:
                    status = requests.get(base + "/v1/tours", timeout=5).status_code
                except requests.RequestException:
                    continue
                break
            with self.lock:
                self.reads[status] += 1

    SETTLE = float(os.environ.get("FLEET_SETTLE", "3"))

    def settle(self, seconds: float | None = None) -> None:
        self.stop_flag.wait(self.SETTLE if seconds is None else seconds)

    def step(self, name: str, action) -> None:
        """Runs one fault (`action()`), then a few seconds of load; records how long it took and the longest save
        begun meanwhile (a catalog's partitions handed over, an admin's sessions moved)."""
        started = time.monotonic()
        self.log(f"fleet: {name}")
        action()
        took = time.monotonic() - started
        self.settle()
        with self.lock:
            during = [seconds for began, seconds in self.saves if began >= started]
        self.steps.append({"name": name, "seconds": round(took, 1), "longest_save_s": round(max(during), 3) if during else None})

    def restart(self, suite: Suite, name: str, sig: int = signal.SIGTERM) -> None:
        suite.stop(name, sig)
        suite.start(name)
        suite.wait_ready([name], timeout=120)

    def finish(self) -> dict:
        """Stops the load and compares: every acknowledged event counted once; the figures."""
        self.stop_flag.set()
        for thread in self.threads:
            thread.join(timeout=30)
        # Events a poster still holds (refused while a feed stopped) are not acknowledged: they are not in the truth.
        counted = self.fault_run.compare_events(self.sets[0], self.truth)
        saves = sorted(seconds for _, seconds in self.saves)
        return {
            "steps": self.steps,
            "events_acked": counted.get("events_acked"), "events_counted": counted.get("events_counted"),
            "events_lost": counted.get("events_lost"), "events_double_counted": counted.get("events_double_counted"),
            "event_post_refusals": dict(self.truth.refusals),
            "saves": len(saves), "failed_saves": self.failed_saves,
            "save_median_s": round(statistics.median(saves), 3) if saves else None,
            "save_longest_s": round(saves[-1], 3) if saves else None,
            "feed_reads": dict(self.reads),
            "violations": counted.get("_violations", []) + self.truth.errors,
        }


def print_table(result: dict) -> None:
    """The fleet run's figures, for a person."""
    print("\n" + "=" * 78 + "\nFLEET RUN (two of each service, one Postgres, one broker)\n" + "-" * 78)
    for step in result["steps"]:
        print(f"  {step['name']:<52} {step['seconds']:>6.1f} s   longest save {step['longest_save_s']} s")
    print("-" * 78)
    for key in ("events_acked", "events_counted", "events_lost", "events_double_counted", "event_post_refusals", "saves",
                "save_median_s", "save_longest_s", "feed_reads"):
        print(f"  {key.replace('_', ' '):<28} {result[key]}")
    print(f"  {'failed saves':<28} {len(result['failed_saves'])} {result['failed_saves'][:5]}")
    print(("VIOLATIONS: " + "; ".join(result["violations"])) if result["violations"] else "no violations")
    print("=" * 78, flush=True)
