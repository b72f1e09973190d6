"""Tracking events for the analytics tests, and the reports computed from them here, independently of the
service: DESIGN.md "Report semantics" read literally, by filtering and counting the raw events.

Not a conftest.py (a second one would shadow tests/conftest.py): test modules import from here.
"""
from __future__ import annotations

import json
import math
import random
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone

from conftest import REPORTS_TOKEN


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def day_of(event: dict) -> date:
    return datetime.strptime(event["occurredAt"][:10], "%Y-%m-%d").date()


def workload(seed: int, count: int, tours: list[str], pois: list[str], days: int = 6, devices: int = 40) -> list[dict]:
    """`count` valid events by `devices` devices over the last `days` UTC days (inside the feed's 30-day window)."""
    r = random.Random(seed)
    run = uuid.UUID(int=r.getrandbits(128)).hex[:8]
    device_ids = [f"py-{run}-device-{i}" for i in range(devices)]
    tourist_ids = [f"py-{run}-tourist-{i}" for i in range(devices // 2)]
    now = datetime.now(timezone.utc) - timedelta(minutes=2)
    events = []
    for _ in range(count):
        moment = now - timedelta(seconds=r.uniform(0, days * 86400 - 600))
        base = {"id": str(uuid.UUID(int=r.getrandbits(128), version=4)), "deviceId": r.choice(device_ids), "occurredAt": stamp(moment)}
        if r.random() < 0.6:
            base["touristId"] = r.choice(tourist_ids)
        tour, poi = r.choice(tours), r.choice(pois)
        maybe_tour = {"tourId": tour} if r.random() < 0.5 else {}
        kind = r.choice(["device.registered", "tour.started", "tour.completed", "poi.viewed", "poi.viewed", "poi.arrived",
                         "poi.arrived", "poi.left", "poi.left", "media.played"])
        fields = {
            "device.registered": {"platform": r.choice(["ios", "android"]), "osVersion": r.choice(["17.4", "14"]),
                                  "model": r.choice(["iPhone 15", "Pixel 8", "Galaxy S24"]), "appVersion": r.choice(["2.0.0", "2.1.0"])},
            "tour.started": {"tourId": tour},
            "tour.completed": {"tourId": tour, "durationSeconds": r.randrange(60_000, 7_200_000) / 1000},
            "poi.viewed": {"poiId": poi, "via": r.choice(["map", "list", "search", "nearby"]), **maybe_tour},
            "poi.arrived": {"poiId": poi, **maybe_tour},
            "poi.left": {"poiId": poi, "dwellSeconds": r.randrange(0, 900_000) / 1000, **maybe_tour},
            "media.played": {"poiId": poi, "url": f"https://example.edu/media/{r.randrange(5)}.mp3", "mediaType": "audio", **maybe_tour},
        }[kind]
        events.append({**base, "type": kind, **fields})
    # The app's language on most events, in either case (issue 45); drawn apart so the rest is what it was before.
    tongues = random.Random(seed + 45)
    for event in events:
        language = tongues.choice(LANGUAGE_TAGS)
        if language is not None:
            event["language"] = language
    return events


# Tags as phones may send them (none, or one in any case), and the language each counts as (DESIGN.md "Languages").
LANGUAGE_TAGS = [None, None, "en", "es", "ES", "pt-BR", "pt-br", "zh-Hant", "ZH-hANT", "en"]
CANONICAL_LANGUAGES = {"en": "en", "es": "es", "ES": "es", "pt-BR": "pt-BR", "pt-br": "pt-BR", "zh-Hant": "zh-Hant", "ZH-hANT": "zh-Hant"}


def deliveries(events: list[dict], seed: int) -> list[dict]:
    """Every event once or more, in shuffled order: what an at-least-once pipe (or a retrying phone) delivers."""
    r = random.Random(seed)
    out = []
    for event in events:
        out.append(event)
        if r.random() < 0.3:
            out.append(event)
    r.shuffle(out)
    return out


CREDITED_TYPES = {"poi.viewed", "poi.arrived", "poi.left", "media.played"}


def moment_of(event: dict) -> datetime:
    return datetime.strptime(event["occurredAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def open_tour(event: dict, marks: list[dict]) -> str | None:
    """DESIGN.md "Tour attribution", literally: the device's latest tour.started within 4 h before the event (the same
    tourist when both give one), unless that tour was completed from then until just before the event."""
    if event["type"] not in CREDITED_TYPES:
        return None
    at = moment_of(event)
    starts = [m for m in marks if m["type"] == "tour.started" and at - timedelta(hours=4) <= moment_of(m) <= at
              and ("touristId" not in event or "touristId" not in m or m["touristId"] == event["touristId"])]
    if not starts:
        return None
    latest = max(starts, key=lambda m: (moment_of(m), m["id"]))
    completed = any(m["type"] == "tour.completed" and m["tourId"] == latest["tourId"] and moment_of(latest) <= moment_of(m) < at for m in marks)
    return None if completed else latest["tourId"]


class Truth:
    def __init__(self, events: list[dict], names: dict[str, str] | None = None):
        """Each event once; a tourless event carries the tour it is credited to ("Tour attribution")."""
        seen, unique = set(), []
        for event in events:
            if event["id"] not in seen:
                seen.add(event["id"])
                unique.append(event)
        marks = defaultdict(list)
        for event in unique:
            if event["type"] in ("tour.started", "tour.completed") and "tourId" in event:
                marks[event["deviceId"]].append(event)
        self.all, self.credited = [], 0
        for event in unique:
            tour = None if "tourId" in event else open_tour(event, marks[event["deviceId"]])
            self.all.append({**event, "tourId": tour} if tour else event)
            self.credited += tour is not None
        self.names = names or {}

    def in_range(self, start: date, end: date, tour: str | None = None) -> list[dict]:
        return [e for e in self.all if start <= day_of(e) <= end and (tour is None or e.get("tourId") == tour)]

    def summary(self, start, end, tour=None) -> dict:
        events = self.in_range(start, end, tour)
        count = lambda kind: sum(1 for e in events if e["type"] == kind)  # noqa: E731
        started, completed = count("tour.started"), count("tour.completed")
        return {"toursStarted": started, "toursCompleted": completed, "completionRate": completed / started if started else 0,
                "uniqueDevices": len({e["deviceId"] for e in events}),
                "uniqueTourists": len({e["touristId"] for e in events if "touristId" in e}),
                "poiViews": count("poi.viewed"), "poiVisits": count("poi.arrived"), "mediaPlays": count("media.played")}

    def pois(self, start, end, tour=None) -> list[dict]:
        groups = defaultdict(list)
        for e in self.in_range(start, end, tour):
            if "poiId" in e:
                groups[e["poiId"]].append(e)
        rows = []
        for poi, events in groups.items():
            dwells = [e["dwellSeconds"] for e in events if e["type"] == "poi.left"]
            rows.append({"poiId": poi, "name": self.names.get(poi), "views": sum(e["type"] == "poi.viewed" for e in events),
                         "visits": sum(e["type"] == "poi.arrived" for e in events),
                         "averageDwellSeconds": sum(dwells) / len(dwells) if dwells else 0,
                         "mediaPlays": sum(e["type"] == "media.played" for e in events)})
        return sorted(rows, key=lambda row: (-row["views"], row["poiId"]))

    def tours(self, start, end, tour=None) -> list[dict]:
        groups = defaultdict(list)
        for e in self.in_range(start, end, tour):
            if "tourId" in e:
                groups[e["tourId"]].append(e)
        rows = []
        for tour_id, events in groups.items():
            starts = sum(e["type"] == "tour.started" for e in events)
            completions = sum(e["type"] == "tour.completed" for e in events)
            durations = [e["durationSeconds"] for e in events if e["type"] == "tour.completed"]
            rows.append({"tourId": tour_id, "name": self.names.get(tour_id), "starts": starts, "completions": completions,
                         "completionRate": completions / starts if starts else 0, "uniqueDevices": len({e["deviceId"] for e in events}),
                         "averageDurationSeconds": sum(durations) / len(durations) if durations else 0})
        return sorted(rows, key=lambda row: (-row["starts"], row["tourId"]))

    def devices(self, start, end, tour=None) -> dict:
        latest = {}
        for e in self.all:
            if e["type"] == "device.registered":
                held = latest.get(e["deviceId"])
                if held is None or (held["occurredAt"], held["id"]) < (e["occurredAt"], e["id"]):
                    latest[e["deviceId"]] = e
        report = {"platforms": defaultdict(int), "models": defaultdict(int), "osVersions": defaultdict(int), "appVersions": defaultdict(int)}
        for device in {e["deviceId"] for e in self.in_range(start, end, tour)}:
            registration = latest.get(device, {})
            for key, field in (("platforms", "platform"), ("models", "model"), ("osVersions", "osVersion"), ("appVersions", "appVersion")):
                report[key][registration.get(field, "unknown")] += 1
        return {key: dict(value) for key, value in report.items()}

    def languages(self, start, end, tour=None) -> list[dict]:
        """Site-wide (the tour is not looked at): tour starts and POI views per language, "unknown" without one."""
        rows = {}
        for e in self.in_range(start, end):
            if e["type"] in ("tour.started", "poi.viewed"):
                language = CANONICAL_LANGUAGES[e["language"]] if "language" in e else "unknown"
                row = rows.setdefault(language, {"language": language, "tourStarts": 0, "poiViews": 0})
                row["tourStarts" if e["type"] == "tour.started" else "poiViews"] += 1
        # Code point order for ties, as the service sorts them.
        return sorted(rows.values(), key=lambda row: (-row["tourStarts"], -row["poiViews"], row["language"].encode()))

    def daily(self, start, end, tour=None) -> list[dict]:
        rows, day = [], start
        while day <= end:
            single = self.summary(day, day, tour)
            rows.append({"date": day.isoformat(), **{k: single[k] for k in ("toursStarted", "toursCompleted", "uniqueDevices",
                                                                           "poiViews", "poiVisits", "mediaPlays")}})
            day += timedelta(days=1)
        return rows


def report(analytics_url: str, name: str, start: date, end: date, tour: str | None = None, fmt: str | None = None):
    query = f"from={start.isoformat()}&to={end.isoformat()}" + (f"&tourId={tour}" if tour else "") + (f"&format={fmt}" if fmt else "")
    request = urllib.request.Request(f"{analytics_url}/v1/reports/{name}?{query}", headers={"Authorization": f"Bearer {REPORTS_TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
        return body.decode() if fmt == "csv" else json.loads(body)


def close(a, b) -> bool:
    """Equal, with floats equal to 9 significant places (Postgres adds them in another order)."""
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b


def differences(analytics_url: str, truth: Truth, queries) -> list[str]:
    """Every report for every query, compared with the truth; a line per report that differs."""
    problems = []
    for start, end, tour in queries:
        for name, expected in (("summary", truth.summary(start, end, tour)), ("pois", truth.pois(start, end, tour)),
                               ("tours", truth.tours(start, end, tour)), ("devices", truth.devices(start, end, tour)),
                               ("daily", truth.daily(start, end, tour)), ("languages", truth.languages(start, end, tour))):
            got = report(analytics_url, name, start, end, tour)
            got = {"summary": lambda g: {k: g[k] for k in expected}, "pois": lambda g: g["pois"], "tours": lambda g: g["tours"],
                   "devices": lambda g: {k: g[k] for k in expected}, "daily": lambda g: g["days"],
                   "languages": lambda g: g["languages"]}[name](got)
            if not close(got, expected):
                problems.append(f"{name} {start}..{end} tour={tour}:\n  got      {got}\n  expected {expected}")
    return problems


def wait_until(condition, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def post_events(feed_url: str, events: list[dict], batch: int = 500) -> None:
    for index in range(0, len(events), batch):
        chunk = events[index:index + batch]
        request = urllib.request.Request(feed_url + "/v1/events", data=json.dumps({"events": chunk}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        for attempt in range(20):
            try:
                with urllib.request.urlopen(request, timeout=15) as response:
                    answer = json.load(response)
                    assert answer["accepted"] == len(chunk) and not answer["rejected"], answer
                    break
            except urllib.error.HTTPError as error:
                if error.code != 503 or attempt == 19:
                    raise
                time.sleep(0.5)
