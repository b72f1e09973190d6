"""`/health`'s uptimeSeconds counts from the process's start (issue 14), not from the first /health call."""
import json
import time
import urllib.request

from conftest import start_suite


def test_uptime_counts_from_process_start_not_from_the_first_health_call(tmp_path):
    started = time.monotonic()
    suite = start_suite(tmp_path, services=("catalog",), demo=False)
    try:
        # start_suite waited on /ready only: nobody has asked catalog's /health yet.
        while time.monotonic() - started < 4:
            time.sleep(0.2)
        with urllib.request.urlopen(suite.catalog_url + "/health", timeout=5) as response:
            first = json.load(response)
        alive_for = time.monotonic() - started
        assert first["uptimeSeconds"] >= int(alive_for) - 2, (first, alive_for)
        assert first["uptimeSeconds"] <= alive_for + 1, (first, alive_for)
    finally:
        suite.stop("catalog")
