"""The admin's System Status page (issue 6) and the metrics every service exposes, on an own suite, since
these tests stop a service."""
import signal
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "admin"))
from adminsite import AdminSite  # noqa: E402
from conftest import SERVICES, start_suite  # noqa: E402


@pytest.fixture(scope="module")
def own_suite(tmp_path_factory):
    suite = start_suite(tmp_path_factory.mktemp("status"))
    yield suite
    for name in list(suite.processes):
        suite.stop(name)


def row_state(site: AdminSite, service: str) -> str:
    return site.read_text(By.CSS_SELECTOR, f'tr[data-service="{service}"] td.state')


def test_status_page_shows_every_service_ready_and_a_stopped_one_down_within_5_seconds(own_suite, browser):
    site = AdminSite(own_suite, browser)
    site.login()
    site.open("/status")
    assert site.heading == "System Status"
    for name in SERVICES:
        assert row_state(site, name) == "ready", name
    text = site.text
    assert "Requests/s" in text and "Consumer lag" in text and "Outbox backlog" in text

    own_suite.stop("analytics", signal.SIGKILL)
    stopped = time.monotonic()
    seen_down = None
    while time.monotonic() - stopped < 8:
        # The page reloads itself every 2 s; read what the browser shows, without reloading it.
        if row_state(site, "analytics") == "down":
            seen_down = time.monotonic() - stopped
            break
        time.sleep(0.2)
    assert seen_down is not None and seen_down <= 5, f"analytics shown down after {seen_down}"
    assert row_state(site, "feed") == "ready"

    own_suite.start("analytics")
    own_suite.wait_ready(("analytics",))


def test_status_page_is_for_owners_only(own_suite):
    response = requests.get(own_suite.admin_url + "/status", allow_redirects=False, timeout=5)
    assert response.status_code in (302, 303, 401), "not signed in: sent to log in"


def metrics(suite, name: str) -> str:
    with urllib.request.urlopen(suite.url(name) + "/metrics", timeout=5) as response:
        return response.read().decode()


def test_every_service_exposes_build_request_and_consumer_figures(own_suite):
    for name in SERVICES:
        requests.get(own_suite.url(name) + "/health", timeout=5)
        text = metrics(own_suite, name)
        assert f'itour_build_info{{service="{name}"' in text, name
        assert "http_server_request_duration_seconds_bucket" in text, name
        assert 'http_route="/health"' in text, name
    assert "itour_consumer_lag" in metrics(own_suite, "catalog")
    assert "itour_outbox_backlog" in metrics(own_suite, "catalog")
    assert "itour_consumer_lag" in metrics(own_suite, "admin")
    feed = metrics(own_suite, "feed")
    assert "itour_consumer_lag" in feed and "itour_feed_projection_entities" in feed
