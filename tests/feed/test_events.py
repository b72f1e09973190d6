"""POST /v1/events (DESIGN.md "Tracking events") against a feed binary of its own: its own topic prefix
(so these events never reach the shared suite's analytics) and a per-device limit of 20 a minute."""
from __future__ import annotations

import json
import os
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from conftest import http_status, start_suite
from test_feed_api import expect_problem, request

LIMIT = 20
REQUIRED = {
    "device.registered": {"platform": "iOS", "osVersion": "17.4", "model": "iPhone15,2", "appVersion": "2.0.1"},
    "tour.started": {"tourId": str(uuid.uuid4())},
    "tour.completed": {"tourId": str(uuid.uuid4()), "durationSeconds": 3600},
    "poi.viewed": {"poiId": str(uuid.uuid4()), "via": "nearby"},
    "poi.arrived": {"poiId": str(uuid.uuid4())},
    "poi.left": {"poiId": str(uuid.uuid4()), "dwellSeconds": 95.5},
    "media.played": {"poiId": str(uuid.uuid4()), "url": "https://example.edu/a.mp3", "mediaType": "audio"},
    "search.performed": {"query": "library", "resultCount": 0},
}


def stamp(delta=timedelta()):
    return (datetime.now(timezone.utc) + delta).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(kind="poi.arrived", device="phone-1", **fields):
    base = {"id": str(uuid.uuid4()), "type": kind, "deviceId": device, "occurredAt": stamp()}
    base.update(REQUIRED[kind] if kind in REQUIRED else {})
    base.update(fields)
    return base


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    previous = os.environ.get("FEED_EVENTS_PER_MINUTE_PER_DEVICE")
    os.environ["FEED_EVENTS_PER_MINUTE_PER_DEVICE"] = str(LIMIT)
    try:
        own = start_suite(tmp_path_factory.mktemp("feed-events"), services=("feed",), demo=False, wait=False)
    finally:
        if previous is None:
            os.environ.pop("FEED_EVENTS_PER_MINUTE_PER_DEVICE")
        else:
            os.environ["FEED_EVENTS_PER_MINUTE_PER_DEVICE"] = previous
    deadline = time.monotonic() + 60
    # Listening means start-up (topics) is done; the projection never loads without catalog, which POST does not need.
    while http_status(own.feed_url + "/health") != 200:
        assert time.monotonic() < deadline, "feed did not start"
        time.sleep(0.2)
    yield own
    own.stop("feed")


def post(feed, body, content_type="application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return request(feed.feed_url + "/v1/events", method="POST", headers={"Content-Type": content_type}, body=data)


def consume(feed, count, timeout=30):
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": feed.env["KAFKA_BROKERS"], "group.id": "py-" + uuid.uuid4().hex,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([feed.env["KAFKA_TOPIC_PREFIX"] + "tracking.events"])
    messages = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                messages.append(message)
    finally:
        consumer.close()
    return messages


def test_good_events_reach_the_broker_keyed_by_device_before_the_202(feed):
    good = [event("poi.viewed", device="phone-a"), event("tour.started", device="phone-b", touristId="t-1")]
    batch = [good[0], event("poi.left", device="phone-a", dwellSeconds=None), 7, good[1],
             event("poi.arrived", device="phone-a", occurredAt=stamp(timedelta(days=-31)))]
    answer = post(feed, {"events": batch})
    assert answer.status == 202, answer.body
    assert answer.json() == {"accepted": 2, "rejected": [
        {"index": 1, "reason": "missing field dwellSeconds for poi.left"},
        {"index": 2, "reason": "an event must be a JSON object"},
        {"index": 4, "reason": "occurredAt is more than 30 days old"},
    ]}
    messages = consume(feed, 2)
    by_id = {json.loads(m.value())["id"].lower(): m for m in messages}
    for sent in good:
        message = by_id[sent["id"]]
        assert message.key().decode() == sent["deviceId"]
        envelope = json.loads(message.value())
        assert envelope["type"] == sent["type"] and envelope["source"] == "feed" and envelope["schemaVersion"] == 1
        assert envelope["data"]["deviceId"] == sent["deviceId"] and envelope["data"]["id"].lower() == sent["id"]


@pytest.mark.parametrize("kind", sorted(REQUIRED))
def test_every_type_is_accepted_when_complete_and_rejected_per_missing_field(feed, kind):
    device = "types-" + kind
    fields = list(REQUIRED[kind])
    batch = [event(kind, device=device)] + [{k: v for k, v in event(kind, device=device).items() if k != f} for f in fields]
    answer = post(feed, {"events": batch})
    assert answer.status == 202
    assert answer.json()["accepted"] == 1
    assert [r["reason"] for r in answer.json()["rejected"]] == [f"missing field {f} for {kind}" for f in fields]


@pytest.mark.parametrize("fields,reason", [
    ({"type": "poi.flown"}, 'unknown type "poi.flown"'),
    ({"occurredAt": stamp(timedelta(hours=2))}, "occurredAt is more than 5 minutes in the future"),  # computed at collection: leave room
    ({"occurredAt": "last tuesday"}, "occurredAt must be an RFC 3339 date-time"),
    ({"id": "123"}, "id must be a UUID"),
    ({"deviceId": ""}, "deviceId must be 1 to 128 bytes (UTF-8)"),
    # One character to a person, 8 001 bytes to Postgres (issue 43): limits are in bytes.
    ({"deviceId": "R" + "\u0301" * 4000}, "deviceId must be 1 to 128 bytes (UTF-8)"),
    ({"touristId": "T" + "\u0301" * 4000}, "touristId must be 1 to 128 bytes (UTF-8)"),
    ({"deviceId": "é" * 65}, "deviceId must be 1 to 128 bytes (UTF-8)"),
    ({"poiId": None}, "missing field poiId for poi.arrived"),
])
def test_rejections_name_their_reason(feed, fields, reason):
    answer = post(feed, {"events": [event("poi.arrived", device="reasons", **fields)]})
    assert answer.status == 202
    assert answer.json()["accepted"] == 0
    assert answer.json()["rejected"][0]["reason"].startswith(reason)


@pytest.mark.parametrize("body", [b"{", b"[]", b'{"events": {}}', b'{"other": []}', b"", b"null", b'"events"'])
def test_malformed_bodies_are_400(feed, body):
    expect_problem(post(feed, body), 400)


def test_batch_limits(feed):
    expect_problem(post(feed, {"events": [{}] * 501}), 400)
    assert post(feed, {"events": [{}] * 500}).status == 202
    expect_problem(post(feed, b'{"events": ["' + b"x" * (1 << 20) + b'"]}'), 413)
    expect_problem(post(feed, {"events": []}, content_type="text/plain"), 415)


def test_a_device_over_its_rate_gets_429_with_retry_after(feed):
    assert post(feed, {"events": [event(device="greedy") for _ in range(15)]}).json()["accepted"] == 15
    answer = post(feed, {"events": [event(device="greedy") for _ in range(10)]})
    expect_problem(answer, 429)
    assert int(answer.headers["Retry-After"]) >= 1
    assert post(feed, {"events": [event(device="modest")]}).status == 202
    expect_problem(post(feed, {"events": [event(device="burst") for _ in range(LIMIT + 1)]}), 429)


def test_a_search_query_is_limited_in_bytes(feed):
    """4 000 combining marks are one character: refused by their bytes; 200 four-byte characters still fit."""
    def search(query):
        return event("search.performed", device="bytes", query=query, resultCount=0)
    answer = post(feed, {"events": [search("\u0301" * 4000), search("\U0001F600" * 200)]})
    assert answer.status == 202
    assert answer.json()["accepted"] == 1
    assert [r["reason"] for r in answer.json()["rejected"]] == ["query must be 1 to 800 bytes (UTF-8)"]
