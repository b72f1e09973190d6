"""Helpers shared by the fault run, the hostile-input suite and the fleet tests: plain HTTP, tracking events,
import files, an admin session.

The standard library and `requests` (in the project's venv), so the fault run needs nothing beyond that venv.
"""
from __future__ import annotations

import http.client
import json
import random
import re
import sys
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import REPORTS_TOKEN  # noqa: E402  (after the path insert on purpose)
import requests  # noqa: E402

# The event types whose counts the summary report carries, and the summary field for each.
COUNTED_TYPES = {
    "tour.started": "toursStarted",
    "tour.completed": "toursCompleted",
    "poi.viewed": "poiViews",
    "poi.arrived": "poiVisits",
    "media.played": "mediaPlays",
}
DAILY_FIELDS = {"tour.started": "toursStarted", "tour.completed": "toursCompleted", "poi.viewed": "poiViews",
                "poi.arrived": "poiVisits", "media.played": "mediaPlays"}


def request(method: str, url: str, body: bytes | None = None, headers: dict | None = None,
            timeout: float = 10.0) -> tuple[int, dict, bytes]:
    """(status, headers, body); status 0 when the connection failed or timed out."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        try:
            payload = error.read()
        except OSError:
            payload = b""
        return error.code, dict(error.headers or {}), payload
    except (OSError, http.client.HTTPException):
        return 0, {}, b""


def get_json(url: str, headers: dict | None = None, timeout: float = 10.0):
    status, _, body = request("GET", url, headers=headers, timeout=timeout)
    if status != 200:
        raise RuntimeError(f"GET {url}: {status} {body[:300]!r}")
    return json.loads(body)


def report(analytics_url: str, name: str, day_from: str, day_to: str):
    return get_json(f"{analytics_url}/v1/reports/{name}?from={day_from}&to={day_to}",
                    headers={"Authorization": f"Bearer {REPORTS_TOKEN}"})


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class EventFactory:
    """Valid tracking events for the demo content, spread over the last few UTC days."""

    def __init__(self, tour_ids: list[str], poi_ids: list[str], devices: int = 300, days: int = 3, seed: int = 7):
        self.tour_ids = tour_ids
        self.poi_ids = poi_ids
        self.devices = [f"fault-device-{i:04d}" for i in range(devices)]
        self.days = days
        self.random = random.Random(seed)
        self.types = list(COUNTED_TYPES)

    def event(self) -> dict:
        r = self.random
        kind = r.choice(self.types)
        # At least two minutes in the past (never "in the future"), at most `days` days back.
        occurred = datetime.now(timezone.utc) - timedelta(seconds=r.uniform(120, self.days * 86400 - 3600))
        event = {"id": str(uuid.uuid4()), "type": kind, "deviceId": r.choice(self.devices), "occurredAt": iso(occurred)}
        if r.random() < 0.5:
            event["touristId"] = f"tourist-{r.randrange(100)}"
        tour, poi = r.choice(self.tour_ids), r.choice(self.poi_ids)
        if kind == "tour.started":
            event["tourId"] = tour
        elif kind == "tour.completed":
            event.update(tourId=tour, durationSeconds=r.randrange(300, 4000))
        elif kind == "poi.viewed":
            event.update(poiId=poi, tourId=tour, via=r.choice(["map", "list", "search", "nearby"]))
        elif kind == "poi.arrived":
            event.update(poiId=poi, tourId=tour)
        elif kind == "media.played":
            event.update(poiId=poi, url="http://example.edu/v.mp4", mediaType="video")
        return event

    def batch(self, size: int) -> list[dict]:
        return [self.event() for _ in range(size)]


def post_events(feed_url: str, events: list[dict], timeout: float = 15.0) -> tuple[int, dict]:
    """(status, parsed body or {}); status 0 = no answer."""
    body = json.dumps({"events": events}).encode()
    status, _, payload = request("POST", feed_url + "/v1/events", body, {"Content-Type": "application/json"}, timeout)
    try:
        parsed = json.loads(payload) if payload else {}
    except ValueError:
        parsed = {}
    return status, parsed


def import_file(number: int) -> dict:
    """One content edit: a published tour with one new POI, both with unique legacy ids, findable by name."""
    poi_legacy, tour_legacy = 7_000_000 + number, 700_000 + number
    return {
        "tours": [{"legacyId": tour_legacy, "name": f"Fault Tour {number:04d}", "summary": f"fault-run edit {number}",
                   "stops": [poi_legacy], "status": "published"}],
        "pois": [{"legacyId": poi_legacy, "name": f"Fault POI {number:04d}", "summary": f"fault-run edit {number}",
                  "latitude": 34.22 + number * 1e-5, "longitude": -77.87, "buildings": [f"Fault Hall {number}"]}],
    }


def now_monotonic() -> float:
    return time.monotonic()


def csrf_of(page: str) -> str:
    """The CSRF token of an admin page's first form, or "" when it has none."""
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page) or re.search(r'value="([^"]+)"[^>]*name="csrf_token"', page)
    return match.group(1) if match else ""


def login(base: str, email: str, password: str, timeout: float = 15.0) -> tuple[requests.Session, requests.Response]:
    """An admin session logged in as `email` (the response to the log-in form, a 303 when it worked)."""
    session = requests.Session()
    page = session.get(base + "/login", timeout=timeout).text
    response = session.post(base + "/login", data={"email": email, "password": password, "csrf_token": csrf_of(page), "next": "/"},
                            timeout=timeout, allow_redirects=False)
    return session, response
