"""The four real binaries together: the thin path and the operational endpoints of every service."""
import json
import signal
import urllib.request

from conftest import SERVICES, http_status


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def test_demo_tour_on_the_feed(suite):
    tours = get_json(suite.feed_url + "/v1/tours")["tours"]
    demo = [t for t in tours if t["name"] == "Students Tour (Beta)"]
    assert len(demo) == 1
    assert demo[0]["stopCount"] == 10


def test_every_service_is_healthy_ready_and_exposes_metrics(suite):
    for name in SERVICES:
        assert get_json(suite.url(name) + "/health")["status"] == "ok"
        ready = get_json(suite.url(name) + "/ready")
        assert ready["ready"] is True, ready
        with urllib.request.urlopen(suite.url(name) + "/metrics", timeout=5) as response:
            text = response.read().decode()
        assert "itour_build_info" in text


def test_loading_the_demo_again_changes_nothing(suite):
    before = get_json(suite.feed_url + "/v1/tours")["tours"]
    result = suite.run_tool("catalog", "load-demo", "deploy/demo/uncw-itour.json")
    assert result.returncode == 0, result.stderr
    after = get_json(suite.feed_url + "/v1/tours")["tours"]
    assert after == before


def test_sigterm_drains_and_exits_zero(tmp_path):
    from conftest import start_suite
    import time
    own = start_suite(tmp_path, services=("feed",), demo=False, wait=False)
    try:
        for _ in range(100):
            if http_status(own.feed_url + "/health") == 200:
                break
            time.sleep(0.2)
        # No catalog: the feed is up but its projection never loads, so it is alive and not ready.
        assert http_status(own.feed_url + "/health") == 200
        assert http_status(own.feed_url + "/ready") == 503
    except Exception:
        own.stop("feed")
        raise
    assert own.stop("feed", signal.SIGTERM) == 0
