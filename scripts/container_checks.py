"""The checks `make containers` runs over HTTP against the suite in containers (scripts/containers.sh):
the demo tour on the feed, an event posted and counted by the Reports API, and the admin's System
Status with four services ready at the images' version. Exits 1 with the reason on the first failure.

  .venv/bin/python scripts/container_checks.py --version 0.2.0-g... --port-base 18080
"""
from __future__ import annotations

import argparse
import html
import re
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

import requests

DEMO_TOUR = "Students Tour (Beta)"
SERVICES = ("catalog", "feed", "analytics", "admin")


def fail(message: str) -> None:
    print(f"container checks: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def until(what: str, seconds: float, probe):
    """probe() until it returns something truthy; fail naming `what` and the last value after `seconds`."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except requests.RequestException as error:
            last = error
        time.sleep(0.5)
    fail(f"{what} (after {seconds:.0f} s; last: {last!r})")


def check_feed(feed: str) -> dict:
    def demo_tour():
        tours = requests.get(f"{feed}/v1/tours", timeout=5).json()["tours"]
        return next((t for t in tours if t["name"] == DEMO_TOUR), None)

    tour = until(f"the feed lists the demo tour {DEMO_TOUR!r}", 120, demo_tour)
    detail = requests.get(f"{feed}/v1/tours/{tour['id']}", timeout=5)
    if detail.status_code != 200 or not detail.json().get("stops"):
        fail(f"GET /v1/tours/{tour['id']}: {detail.status_code} {detail.text[:200]}")
    print(f"feed: serves {DEMO_TOUR!r} with {len(detail.json()['stops'])} stops")
    return detail.json()


def check_event_counted(feed: str, analytics: str, token: str, tour: dict) -> None:
    today = datetime.now(timezone.utc).date().isoformat()
    summary_url = f"{analytics}/v1/reports/summary?from={today}&to={today}&tourId={tour['id']}"
    headers = {"Authorization": f"Bearer {token}"}

    def summary():
        response = requests.get(summary_url, headers=headers, timeout=5)
        response.raise_for_status()
        return response.json()

    before = summary()["toursStarted"]
    occurred = (datetime.now(timezone.utc) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    event = {"id": str(uuid.uuid4()), "type": "tour.started", "deviceId": f"containers-{uuid.uuid4()}",
             "occurredAt": occurred, "tourId": tour["id"]}
    posted = requests.post(f"{feed}/v1/events", json={"events": [event]}, timeout=15)
    if posted.status_code != 202:
        fail(f"POST /v1/events: {posted.status_code} {posted.text[:200]}")
    until("the Reports API counts the posted tour.started", 60, lambda: summary()["toursStarted"] == before + 1)
    print(f"analytics: the posted event is counted (toursStarted {before} -> {before + 1})")


def check_status_page(admin: str, email: str, password: str, version: str) -> None:
    session = requests.Session()
    page = session.get(f"{admin}/login", timeout=5)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    if not token:
        fail(f"GET /login: no csrf_token in the form ({page.status_code})")
    login = session.post(f"{admin}/login", data={"csrf_token": html.unescape(token.group(1)), "email": email,
                                                 "password": password, "next": "/status"}, timeout=15)
    if login.status_code != 200 or "System Status" not in login.text:
        fail(f"log-in to the admin as {email}: {login.status_code} {login.text[:300]}")

    def rows():
        text = session.get(f"{admin}/status", timeout=10).text
        found = {}
        for name in SERVICES:
            row = re.search(rf'<tr data-service="{name}">(.*?)</tr>', text, re.S)
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S) if row else []
            found[name] = (re.sub(r"<[^>]+>", "", cells[0]).strip(), cells[1].strip()) if len(cells) > 1 else None
        return found

    def all_ready():
        found = rows()
        return found if all(found[s] == ("ready", version) for s in SERVICES) else None

    last = {}

    def probe():
        nonlocal last
        last = rows()
        return all_ready()

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if probe():
            print(f"admin: System Status shows {', '.join(SERVICES)} ready at version {version}")
            return
        time.sleep(1)
    fail(f"System Status: expected every service ('ready', {version!r}); shows {last}")


def check_map_assets(admin: str) -> None:
    """The admin's image carries Leaflet, which the admin serves itself (its map)."""
    response = requests.get(f"{admin}/assets/leaflet/leaflet.js", timeout=5)
    if response.status_code != 200 or "leaflet" not in response.text[:2000].lower():
        fail(f"admin /assets/leaflet/leaflet.js: {response.status_code}")
    print("admin: serves Leaflet for its map")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--version", required=True)
    parser.add_argument("--port-base", type=int, default=18080)
    parser.add_argument("--admin-email", default="admin@example.edu")
    parser.add_argument("--admin-password", default="itour-demo")
    parser.add_argument("--reports-token", default="itour-demo-token")
    args = parser.parse_args()
    base = "http://127.0.0.1:"
    feed, admin, analytics = (f"{base}{args.port_base + i}" for i in (0, 1, 3))
    tour = check_feed(feed)
    check_event_counted(feed, analytics, args.reports_token, tour)
    check_status_page(admin, args.admin_email, args.admin_password, args.version)
    check_map_assets(admin)


if __name__ == "__main__":
    main()
