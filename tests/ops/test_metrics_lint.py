"""Every service's /metrics by Prometheus's conventions (issue 15): Prometheus's own linter
(`promtool check metrics`) finds nothing to complain about (a HELP line on every metric, `_total` on
counters, base units), HTTP durations are in seconds from a 100 µs bucket, and requests the feed answers
beside its router count in the same series as routed ones."""
import re
import shutil
import subprocess

import pytest
import requests

from conftest import SERVICES

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def scrape(suite, name: str) -> str:
    response = requests.get(suite.url(name) + "/metrics", timeout=5)
    assert response.status_code == 200, name
    return response.text


def samples(text: str) -> list[tuple[str, str, float]]:
    """(name, labels as written, value) of every sample line."""
    found = []
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            found.append((match[1], match[2] or "", float(match[3])))
    return found


def total(text: str, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    return sum(value for sample, written, value in samples(text) if sample == name and all(w in written for w in wanted))


def exercise(suite) -> None:
    """Requests that make every kind of series exist: routed answers, a 404 on each service, and the
    feed's pipeline answers (stored GETs, a 304, a batch of events)."""
    for name in SERVICES:
        assert requests.get(suite.url(name) + "/health", timeout=5).status_code == 200
        assert requests.get(suite.url(name) + "/no/such/page", timeout=5).status_code == 404
    tours = requests.get(suite.feed_url + "/v1/tours", timeout=5)
    assert tours.status_code == 200
    assert requests.get(suite.feed_url + "/v1/tours", headers={"If-None-Match": tours.headers["ETag"]}, timeout=5).status_code == 304
    assert requests.post(suite.feed_url + "/v1/events", json={"events": []}, timeout=5).status_code == 202


def test_promtool_finds_nothing_to_complain_about_on_any_service(suite):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing (Debian's prometheus package; scripts/install.sh installs it)")
    exercise(suite)
    complaints = {}
    for name in SERVICES:
        text = scrape(suite, name)
        lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
        output = (lint.stdout + lint.stderr).strip()
        if lint.returncode != 0 or output:
            complaints[name] = output or f"exit {lint.returncode}"
    assert not complaints, "promtool check metrics:\n" + "\n".join(f"{name}:\n{text}" for name, text in complaints.items())


def test_request_metrics_are_seconds_and_totals_with_buckets_from_100_microseconds(suite):
    exercise(suite)
    for name in SERVICES:
        text = scrape(suite, name)
        assert "# TYPE http_server_request_duration_seconds histogram" in text, name
        assert "# TYPE hb_requests_total counter" in text, name
        assert "# TYPE hb_request_errors_total counter" in text, name
        assert f'itour_build_info{{service="{name}",version="' in text, name
        buckets = sorted({float(re.search(r'le="([^"]+)"', labels)[1])
                          for sample, labels, _ in samples(text) if sample == "http_server_request_duration_seconds_bucket"})
        assert buckets[0] <= 0.0001, f"{name}: the lowest duration bucket is {buckets[0]} s"
        assert total(text, "hb_requests_total", http_route="/health", http_request_method="GET", http_response_status_code="200") >= 1, name
        assert total(text, "hb_requests_total", http_response_status_code="404") >= 1, name
        # Nothing is left under the old names.
        for old in ("http_server_request_duration_bucket", "hb_requests{", "hb_request_errors{"):
            assert old not in text, f"{name}: {old}"


def test_requests_the_feed_answers_beside_its_router_count_like_routed_ones(suite):
    before = scrape(suite, "feed")
    for _ in range(3):
        assert requests.get(suite.feed_url + "/v1/tours", timeout=5).status_code == 200
    after = scrape(suite, "feed")
    route = {"http_route": "/v1/tours", "http_request_method": "GET", "http_response_status_code": "200"}
    stored = total(after, "itour_feed_stored_responses_total") - total(before, "itour_feed_stored_responses_total")
    assert stored >= 3, "the GETs were not answered from the feed's stored responses"
    assert total(after, "hb_requests_total", **route) - total(before, "hb_requests_total", **route) >= 3
    assert (total(after, "http_server_request_duration_seconds_count", **route)
            - total(before, "http_server_request_duration_seconds_count", **route)) >= 3


def test_a_batch_of_events_answered_with_a_problem_counts_as_a_failed_request(suite):
    before = scrape(suite, "feed")
    response = requests.post(suite.feed_url + "/v1/events", data=b"not json", headers={"Content-Type": "application/json"}, timeout=5)
    assert response.status_code == 400
    after = scrape(suite, "feed")
    route = {"http_route": "/v1/events", "http_request_method": "POST"}
    assert (total(after, "hb_requests_total", **route, http_response_status_code="400")
            - total(before, "hb_requests_total", **route, http_response_status_code="400")) == 1
    assert total(after, "hb_request_errors_total", **route, error_type="400") - total(before, "hb_request_errors_total", **route, error_type="400") == 1
