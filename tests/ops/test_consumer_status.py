"""Status people can trust (issue 14): analytics made unable to count (its ids table locked by another
session, as a stuck migration or a long report query would) while phones keep sending events. With the
default settings: within about 30 s analytics' /ready stays 200 but says "degraded" with the reason, the
System Status page shows it degraded with the reason in Notes and does not say "4 of 4 services ready",
and after a minute the Reports page warns that counting is behind, saying up to when events are counted.
Then the lock goes and everything is counted and healthy again."""
import json
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "admin"))
from adminsite import AdminSite  # noqa: E402
from conftest import REPORTS_TOKEN, start_suite  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "faults"))
from restarts import run_drain  # noqa: E402


@pytest.fixture(scope="module")
def own_suite(tmp_path_factory):
    suite = start_suite(tmp_path_factory.mktemp("consumer-status"))
    yield suite
    for name in list(suite.processes):
        suite.stop(name)


def ready(suite, name):
    try:
        with urllib.request.urlopen(suite.url(name) + "/ready", timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def freshness(suite):
    response = requests.get(suite.analytics_url + "/v1/reports/freshness", headers={"Authorization": f"Bearer {REPORTS_TOKEN}"},
                            timeout=5)
    assert response.status_code == 200, response.text
    return response.json()


def post(suite, count):
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    # A tour the suite has (the feed rejects ids the catalog does not have), from a few hundred devices (one address
    # brings at most FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT).
    tour = requests.get(suite.feed_url + "/v1/tours", timeout=5).json()["tours"][0]["id"]
    events = [{"id": str(uuid.uuid4()), "type": "tour.started", "deviceId": f"status-{index % 300}", "occurredAt": now,
               "tourId": tour} for index in range(count)]
    response = requests.post(suite.feed_url + "/v1/events", json={"events": events}, timeout=15)
    assert response.status_code == 202 and response.json()["accepted"] == count, response.text


def wait_for(condition, timeout, interval=0.5, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def element_text(browser, css):
    found = browser.find_elements(By.CSS_SELECTOR, css)
    return found[0].text if found else None


def page_says_nothing_waiting(site, browser) -> bool:
    site.open("/reports")
    return "nothing waiting" in (element_text(browser, "#report-freshness") or "")


def test_a_stuck_consumer_is_degraded_on_ready_status_and_reports(own_suite, browser):
    site = AdminSite(own_suite, browser)
    site.login()
    post(own_suite, 10)
    wait_for(lambda: freshness(own_suite)["waiting"] == 0, 30, what="the first events counted")
    # The page reads analytics' freshness a moment after the API did: shown within seconds, not at once.
    wait_for(lambda: page_says_nothing_waiting(site, browser), 15, what="the reports page saying nothing is waiting")
    assert "Events counted up to" in element_text(browser, "#report-freshness")
    assert element_text(browser, "#report-behind") is None

    env = {"PGPASSWORD": "", "PATH": "/usr/bin:/bin"}
    lock = subprocess.Popen(["psql", "-h", "127.0.0.1", "-p", own_suite.env["POSTGRES_PORT"], "-U", "itour", "-d", own_suite.env["POSTGRES_DB"],
                             "-v", "ON_ERROR_STOP=1", "-qtA"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        lock.stdin.write("BEGIN;\nLOCK TABLE analytics.processed_events IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n")
        lock.stdin.flush()
        assert lock.stdout.readline().strip() == "locked"
        locked_at = time.monotonic()

        # Phones keep sending; analytics reads but cannot count.
        def degraded():
            post(own_suite, 20)
            status, body = ready(own_suite, "analytics")
            return (status, body) if body.get("degraded", {}).get("consumer analytics") else None
        status, body = wait_for(degraded, 60, interval=2, what="analytics degraded on /ready")
        assert status == 200, "degraded is still ready: Kubernetes must not restart a pod that is merely stuck behind a lock"
        assert body["ready"] is True and body["status"] == "degraded"
        assert body["checks"]["consumer analytics"] is True
        reason = body["degraded"]["consumer analytics"]
        assert "messages waiting" in reason and "not fewer than" in reason, reason
        assert time.monotonic() - locked_at >= 25, "degraded only after the lag stood still for about 30 s"

        site.open("/status")
        row = 'tr[data-service="analytics"]'
        wait_for(lambda: element_text(browser, f"{row} td.state") == "degraded", 10, what="System Status shows analytics degraded")
        notes = element_text(browser, f"{row} td.notes")
        assert "consumer analytics degraded" in notes and "messages waiting" in notes, notes
        summary = element_text(browser, "p.summary")
        assert "4 of 4 services ready" not in summary, summary
        assert "3 of 4 services ready, 1 degraded (analytics)" in summary, summary
        assert element_text(browser, 'tr[data-service="feed"] td.state') == "ready"
        cells = browser.find_elements(By.CSS_SELECTOR, f"{row} td")
        assert float(cells[4].text) >= 20, f"consumer lag shown: {cells[4].text}"
        for name in ("catalog", "feed", "analytics", "admin"):
            uptime = browser.find_elements(By.CSS_SELECTOR, f'tr[data-service="{name}"] td')[2].text
            seconds = int(uptime.split()[0]) * (60 if "min" in uptime else 1) if "h" not in uptime else 3600
            assert seconds >= 30, f"{name} has run for over half a minute; uptime shown: {uptime}"

        # More than a minute behind: the Reports page warns and says up to when events are counted.
        post(own_suite, 20)
        behind = wait_for(lambda: (lambda f: f if f["behindSeconds"] > 60 else None)(freshness(own_suite)), 60, interval=1,
                          what="counting a minute behind")
        assert behind["waiting"] >= 20 and behind["countedUpTo"] is not None
        site.open("/reports")
        waiting_text = f"{behind['waiting']:,} waiting"
        assert "Events counted up to " + behind["countedUpTo"][11:19] + " UTC" in element_text(browser, "#report-freshness")
        assert waiting_text in element_text(browser, "#report-freshness")
        warning = element_text(browser, "#report-behind")
        assert warning is not None and "Counting is" in warning and "behind" in warning and waiting_text in warning, warning

        # make down's drain sees the same stall (issue 50: a real one is still reported): it gives up, saying how many
        # events analytics has not counted, and exits 1.
        drain = run_drain(own_suite, own_suite.env["KAFKA_BROKERS"], timeout="6")
        assert drain.returncode == 1, drain.stdout[-500:] + drain.stderr[-500:]
        gave_up = [line for line in drain.stderr.splitlines() if "gave up" in line]
        assert gave_up and "analytics:" in gave_up[-1] and "events not yet counted" in gave_up[-1], drain.stderr[-500:]
    finally:
        lock.stdin.write("ROLLBACK;\n")
        lock.stdin.close()
        lock.wait(timeout=10)

    wait_for(lambda: freshness(own_suite)["waiting"] == 0, 60, what="everything counted after the lock went")
    wait_for(lambda: not ready(own_suite, "analytics")[1].get("degraded"), 10, what="analytics healthy again")
    assert ready(own_suite, "analytics")[1]["status"] == "ready"
    wait_for(lambda: page_says_nothing_waiting(site, browser), 15, what="the reports page saying nothing is waiting again")
    assert element_text(browser, "#report-behind") is None
