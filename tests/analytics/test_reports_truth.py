"""Analytics through the real binaries on a suite of their own (catalog, feed, analytics; demo content):
events POSTed to the feed with duplicates and in shuffled order, analytics killed with SIGKILL while it
counts a backlog and started again, and every report compared with a truth computed here."""
from __future__ import annotations

import json
import math
import os
import signal
import time
import urllib.request
import uuid
from datetime import date, datetime, timedelta, timezone

import pytest

from conftest import start_suite
from reports_truth import Truth, deliveries, differences, post_events, report, stamp, wait_until, workload


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    # Thousands of events from a few dozen phones: the feed's per-device limit would refuse most of them.
    # Small batches, so a kill lands in the middle of counting a backlog, not after it.
    settings = {"FEED_EVENTS_PER_MINUTE_PER_DEVICE": "0", "ANALYTICS_BATCH_SIZE": "50"}
    previous = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        running = start_suite(tmp_path_factory.mktemp("analytics-truth"), services=("catalog", "feed", "analytics"))
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    yield running
    for name in list(running.processes):
        running.stop(name)


def demo_content(feed_url: str) -> tuple[list[str], list[str], dict[str, str]]:
    """The demo tours' and their stops' ids, and every name, from the feed (once it shows them)."""
    def published():
        with urllib.request.urlopen(feed_url + "/v1/tours", timeout=5) as response:
            return json.load(response)["tours"]
    tours = wait_until(published, timeout=30)
    names = {t["id"].lower(): t["name"] for t in tours}
    pois = []
    for tour in tours:
        with urllib.request.urlopen(f"{feed_url}/v1/tours/{tour['id']}", timeout=5) as response:
            for stop in json.load(response)["stops"]:
                names[stop["id"].lower()] = stop["name"]
                pois.append(stop["id"].lower())
    return [t["id"].lower() for t in tours], sorted(set(pois)), names


def counted(suite) -> int:
    """Event ids analytics has counted, from its own table."""
    import subprocess
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", suite.env["POSTGRES_PORT"], "-U", "itour", "-d", suite.env["POSTGRES_DB"],
                          "-tAc", "SELECT count(*) FROM analytics.processed_events"], capture_output=True, text=True)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def queries(truth: Truth, tours: list[str]):
    days = sorted({datetime.strptime(e["occurredAt"][:10], "%Y-%m-%d").date() for e in truth.all})
    first, last = days[0], days[-1]
    middle = first + (last - first) / 2
    out = [(first, last, None), (first - timedelta(days=2), last + timedelta(days=1), None), (last, last, None), (first, middle, None)]
    out += [(first, last, tours[0]), (middle, last, tours[-1])]
    return out


def test_reports_equal_the_truth_after_analytics_is_killed_mid_stream(own):
    tours, pois, names = demo_content(own.feed_url)
    assert tours and pois, "the demo content has tours with stops"
    events = workload(seed=5, count=6000, tours=tours, pois=pois)
    sent = deliveries(events, seed=6)
    truth = Truth(events, names)
    assert truth.credited > 50, "tourless events credited to the tour their device had open (DESIGN.md, Tour attribution)"
    half = len(sent) // 2

    post_events(own.feed_url, sent[:half])
    # Kill it while it counts that backlog: after it has started, before it has finished.
    assert wait_until(lambda: counted(own) > 0, timeout=60, interval=0.02), "analytics never started counting"
    own.stop("analytics", signal.SIGKILL)
    first_life = counted(own)
    assert first_life < len(Truth(sent[:half]).all), "the kill came after the backlog was counted"
    print(f"killed with {first_life} of {len(Truth(sent[:half]).all)} sent event ids counted")
    post_events(own.feed_url, sent[half:])
    own.start("analytics")
    own.wait_ready(("analytics",))
    # And once more, in the middle of the rest.
    wait_until(lambda: counted(own) > first_life, timeout=60, interval=0.02)
    own.stop("analytics", signal.SIGKILL)
    own.start("analytics")
    own.wait_ready(("analytics",))

    assert wait_until(lambda: counted(own) >= len(truth.all), timeout=120), f"counted {counted(own)} of {len(truth.all)}"
    assert counted(own) == len(truth.all)
    problems = differences(own.analytics_url, truth, queries(truth, tours))
    assert not problems, "\n".join(problems[:10])

    # Everything delivered again: nothing changes.
    post_events(own.feed_url, events)
    time.sleep(3)
    assert counted(own) == len(truth.all)
    problems = differences(own.analytics_url, truth, queries(truth, tours)[:2])
    assert not problems, "\n".join(problems[:10])


def test_csv_has_the_json_rows(own):
    today = datetime.now(timezone.utc).date()
    start = today - timedelta(days=7)
    pois = report(own.analytics_url, "pois", start, today)["pois"]
    lines = report(own.analytics_url, "pois", start, today, fmt="csv").strip().split("\r\n")
    assert lines[0] == "poiId,name,views,visits,averageDwellSeconds,mediaPlays"
    assert len(lines) == len(pois) + 1
    assert [line.split(",")[0].strip('"') for line in lines[1:]] == [p["poiId"] for p in pois]
    # Rounded for people: whole seconds in the CSV, the exact mean in the JSON.
    assert [int(line.rsplit(",", 2)[1]) for line in lines[1:]] == [math.floor(p["averageDwellSeconds"] + 0.5) for p in pois]
    tours = report(own.analytics_url, "tours", start, today)["tours"]
    tour_lines = report(own.analytics_url, "tours", start, today, fmt="csv").strip().split("\r\n")[1:]
    assert [line.rsplit(",", 3)[1] for line in tour_lines] == [f"{t['completionRate']:.3f}" for t in tours]
    daily = report(own.analytics_url, "daily", start, today, fmt="csv").strip().split("\r\n")
    assert daily[0] == "date,toursStarted,toursCompleted,uniqueDevices,poiViews,poiVisits,mediaPlays"
    assert [line.split(",")[0].strip('"') for line in daily[1:]] == [(start + timedelta(days=i)).isoformat() for i in range(8)]


def test_languages_csv_has_the_json_rows_and_a_malformed_language_is_refused(own):
    today = datetime.now(timezone.utc).date()
    start = today - timedelta(days=7)
    rows = report(own.analytics_url, "languages", start, today)["languages"]
    lines = report(own.analytics_url, "languages", start, today, fmt="csv").strip().split("\r\n")
    assert lines[0] == "language,tourStarts,poiViews"
    assert lines[1:] == [f'"{r["language"]}",{r["tourStarts"]},{r["poiViews"]}' for r in rows]
    # The feed refuses a tag that is not BCP 47, naming the field; the rest of the batch is accepted.
    tours, pois, _ = demo_content(own.feed_url)
    base = {"deviceId": "py-language-device", "occurredAt": stamp(datetime.now(timezone.utc)), "type": "tour.started", "tourId": tours[0]}
    batch = [{**base, "id": str(uuid.uuid4()), "language": "es_MX"}, {**base, "id": str(uuid.uuid4()), "language": "es-MX"}]
    request = urllib.request.Request(own.feed_url + "/v1/events", data=json.dumps({"events": batch}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=15) as response:
        answer = json.load(response)
    assert answer["accepted"] == 1
    assert [r["index"] for r in answer["rejected"]] == [0]
    assert answer["rejected"][0]["reason"].startswith("language must be a BCP 47 language tag")


def test_bad_requests_are_problems(own):
    for query, status in (("from=2025-01-01", 400), ("from=2025-13-01&to=2025-12-31", 400), ("from=2025-02-02&to=2025-02-01", 400)):
        request = urllib.request.Request(f"{own.analytics_url}/v1/reports/summary?{query}",
                                         headers={"Authorization": "Bearer itour-demo-token"})
        try:
            urllib.request.urlopen(request, timeout=5)
            raise AssertionError(f"{query} was accepted")
        except urllib.error.HTTPError as error:
            assert error.code == status
            assert error.headers["Content-Type"] == "application/problem+json"
    try:
        urllib.request.urlopen(f"{own.analytics_url}/v1/reports/summary?from=2025-01-01&to=2025-01-02", timeout=5)
        raise AssertionError("no token was accepted")
    except urllib.error.HTTPError as error:
        assert error.code == 401
