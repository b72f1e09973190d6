"""What one client can make the feed spend (issue 14): a client address's allowance of events whatever device
ids it sends, the 500-event cap checked while reading, connections closed when idle or half-sent, and a
pipeline that stops reading for a client that does not read its answers. Against a feed binary of its own with
small limits (FEED_EVENTS_PER_MINUTE_PER_CLIENT=30, HTTP_IDLE_TIMEOUT_SECONDS=1)."""
from __future__ import annotations

import os
import socket
import time
import uuid

import pytest

from conftest import http_status, start_suite
from test_events import event, post
from test_feed_api import expect_problem

SETTINGS = {"FEED_EVENTS_PER_MINUTE_PER_CLIENT": "30", "FEED_EVENTS_PER_MINUTE_PER_DEVICE": "0", "HTTP_IDLE_TIMEOUT_SECONDS": "1"}


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    previous = {name: os.environ.get(name) for name in SETTINGS}
    os.environ.update(SETTINGS)
    try:
        own = start_suite(tmp_path_factory.mktemp("feed-limits"), services=("feed",), demo=False, wait=False)
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    deadline = time.monotonic() + 60
    while http_status(own.feed_url + "/health") != 200:
        assert time.monotonic() < deadline, "feed did not start"
        time.sleep(0.2)
    yield own
    own.stop("feed")


def connect(feed) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(feed.ports["feed"])), timeout=10)


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes the connection within `seconds` (what it sends first is dropped)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_fresh_device_ids_do_not_escape_the_client_address_allowance(feed):
    # Each batch from new devices (the per-device limit is off here): the address's 30 a minute still hold.
    assert post(feed, {"events": [event(device=f"fresh-{uuid.uuid4()}") for _ in range(20)]}).status == 202
    answer = post(feed, {"events": [event(device=f"fresh-{uuid.uuid4()}") for _ in range(20)]})
    expect_problem(answer, 429)
    assert int(answer.headers["Retry-After"]) >= 1
    assert "client address" in answer.json()["detail"]


def test_the_cap_is_the_answer_whatever_follows_the_501st_element(feed):
    junk = b",".join([b"1"] * 501)
    answer = post(feed, b'{"events": [' + junk + b', {"id": ]]] not json')
    expect_problem(answer, 400)
    assert "at most 500 events" in answer.json()["detail"]


def test_half_a_request_line_or_silence_is_closed_after_the_idle_timeout(feed):
    half, silent = connect(feed), connect(feed)
    half.sendall(b"GET /v1/tou")
    started = time.monotonic()
    assert closed_within(half, 10), "half a request line kept open"
    assert closed_within(silent, 10), "a silent connection kept open"
    assert 0.5 < time.monotonic() - started < 8


def test_a_client_that_never_reads_stops_the_pipeline_reading(feed):
    sock = connect(feed)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    sock.setblocking(False)
    request = b"GET /openapi.json HTTP/1.1\r\nHost: feed\r\nX-Pad: " + b"p" * 4000 + b"\r\n\r\n"
    data = request * 4000
    sent, last = 0, time.monotonic()
    while sent < len(data) and time.monotonic() - last < 3:
        try:
            count = sock.send(data[sent:sent + 1 << 20])
        except BlockingIOError:
            time.sleep(0.02)
            continue
        except (ConnectionResetError, BrokenPipeError):
            break  # closed by the idle timeout (1 s here) once nothing was read for it
        sent += count
        last = time.monotonic()
    sock.close()
    assert sent < len(data) // 2, f"the feed read {sent} of {len(data)} bytes from a client that reads none of its answers"
