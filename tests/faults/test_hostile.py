"""Hostile input against the real services (a `suite` of this module's own, see below): every bad request must be refused with a
4xx (or, for events, rejected inside the 202 with a reason), never answered with a 5xx, a dropped
connection or stored, unescaped markup.

Counts tried / refused / 5xx per category and writes them to HOSTILE_RESULT (default
.run/hostile-result.json) for `make proof`. HOSTILE_EXAMPLES sets schemathesis' cases per operation and
mode (default 25; make proof uses more).
"""
from __future__ import annotations

import html
import json
import os
import re
import sys
import time
import uuid
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workload import ROOT, csrf_of, iso, login  # noqa: E402
from conftest import ADMIN_EMAIL, ADMIN_PASSWORD, start_suite  # noqa: E402

EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "25"))
RESULT = Path(os.environ.get("HOSTILE_RESULT", ROOT / ".run" / "hostile-result.json"))
TIMEOUT = 15

TALLY: dict[str, dict] = defaultdict(lambda: {"tried": 0, "refused": 0, "accepted": 0, "5xx": 0, "dropped": 0, "other": 0,
                                              "statuses": {}})
FAILURES: list[str] = []


def tally(category: str, status: int, what: str, refused_ok=(400, 499), allow_success=False) -> None:
    """Counts one hostile request. refused: a 4xx. accepted: a 2xx/3xx where harmless input may pass
    (allow_success). 5xx and dropped connections are always failures."""
    row = TALLY[category]
    row["tried"] += 1
    row["statuses"][str(status)] = row["statuses"].get(str(status), 0) + 1
    if refused_ok[0] <= status <= refused_ok[1]:
        row["refused"] += 1
    elif status >= 500:
        row["5xx"] += 1
        FAILURES.append(f"{category}: {what} -> {status}")
    elif status == 0:
        row["dropped"] += 1
        FAILURES.append(f"{category}: {what} -> no answer")
    elif allow_success and 200 <= status < 400:
        row["accepted"] += 1
    else:
        row["other"] += 1
        FAILURES.append(f"{category}: {what} -> {status} (expected a 4xx)")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Overrides conftest's session suite for this module: the payloads below change content (tour names,
    users), so they get a suite of their own rather than the one other tests read the demo from."""
    running = start_suite(tmp_path_factory.mktemp("hostile"))
    yield running
    for name in list(running.processes):
        running.stop(name)


@pytest.fixture(scope="module", autouse=True)
def write_result():
    yield
    totals = {k: sum(row[k] for row in TALLY.values()) for k in ("tried", "refused", "accepted", "5xx", "dropped", "other")}
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps({"categories": TALLY, "totals": totals, "failures": FAILURES[:200]}, indent=2, sort_keys=True))
    print("\nhostile input:", json.dumps(totals))


def call(method: str, url: str, **kwargs) -> requests.Response | None:
    kwargs.setdefault("timeout", TIMEOUT)
    try:
        return requests.request(method, url, allow_redirects=False, **kwargs)
    except requests.RequestException:
        return None


def status_of(response) -> int:
    return 0 if response is None else response.status_code


def assert_no_failures(category: str):
    mine = [f for f in FAILURES if f.startswith(category + ":")]
    assert not mine, "\n".join(mine[:20])


def assert_alive(url: str):
    response = call("GET", url + "/health")
    assert response is not None and response.status_code == 200, f"{url} died"


# --- the feed: schemathesis against /openapi.json ----------------------------------------------------------

def test_schemathesis_feed_openapi(suite):
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_url(suite.feed_url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert operations, "the feed's OpenAPI document lists no operations"
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                strategy = operation.as_strategy(generation_mode=mode)
            except Exception as error:  # noqa: BLE001 (an operation the generator cannot handle is skipped, said)
                print(f"schemathesis: {operation.label} {mode.value}: no strategy ({error})")
                continue
            label = f"{operation.label} [{mode.value}]"

            @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(case=strategy)
            def run(case):
                try:
                    response = case.call(base_url=suite.feed_url, timeout=TIMEOUT)
                    status = response.status_code
                except Exception:  # noqa: BLE001 (a dropped connection is a finding, tallied)
                    status = 0
                # Positive cases may well succeed; negative ones should be refused, but a generator's
                # "negative" value can be valid after serialisation, so a 2xx counts as accepted there too.
                tally("schemathesis", status, f"{case.method} {case.formatted_path} {case.query or ''}", allow_success=True)

            try:
                run()
            except Unsatisfiable:
                pass  # e.g. no negative cases for an operation without parameters or body
    assert_alive(suite.feed_url)
    assert_no_failures("schemathesis")


# --- POST /v1/events --------------------------------------------------------------------------------------

def valid_event(**overrides) -> dict:
    event = {"id": str(uuid.uuid4()), "type": "poi.viewed", "deviceId": "hostile-device",
             "occurredAt": iso(datetime.now(timezone.utc) - timedelta(minutes=10)),
             "poiId": str(uuid.uuid4()), "via": "map"}
    event.update(overrides)
    return {k: v for k, v in event.items() if v is not ...}


def post_events_raw(suite, body: bytes, content_type="application/json", extra_headers=None):
    headers = {"Content-Type": content_type}
    headers.update(extra_headers or {})
    return call("POST", suite.feed_url + "/v1/events", data=body, headers=headers)


def tally_events(suite, category: str, body: bytes, what: str, **kwargs):
    """A bad batch is refused: a 4xx, or a 202 that accepted nothing and rejected every event with a reason."""
    response = post_events_raw(suite, body, **kwargs)
    status = status_of(response)
    if status == 202:
        answer = response.json()
        rejected = answer.get("rejected", [])
        if answer.get("accepted") == 0 and all(r.get("reason") for r in rejected):
            status = 422  # refused inside the 202, each with its reason
    tally(category, status, what)


def test_malformed_and_wrong_typed_events(suite):
    bodies = {
        "empty": b"", "not json": b"hello", "truncated": b'{"events": [', "null": b"null", "array": b"[]",
        "string": b'"events"', "number": b"42", "events number": b'{"events": 5}', "events object": b'{"events": {}}',
        "events null": b'{"events": null}', "invalid utf-8": b'{"events": ["\xff\xfe"]}', "nul byte": b'{"events": [\x00]}',
        "duplicate keys": b'{"events": [], "events": 7}', "trailing garbage": b'{"events": []} xyz',
        "bom": b'\xef\xbb\xbf{"events": 3}', "huge number": b'{"events": [1e999999]}',
        "501 events": json.dumps({"events": [valid_event() for _ in range(501)]}).encode(),
    }
    for name, body in bodies.items():
        tally_events(suite, "events-malformed", body, name)
    wrong_types = {
        "event is a string": ["poi.viewed"], "event is null": [None], "event is array": [[1, 2]],
        "id number": [valid_event(id=5)], "id not uuid": [valid_event(id="1; DROP TABLE x")], "id missing": [valid_event(id=...)],
        "type unknown": [valid_event(type="tour.hacked")], "type number": [valid_event(type=1)],
        "deviceId object": [valid_event(deviceId={"a": 1})], "deviceId missing": [valid_event(deviceId=...)],
        "occurredAt number": [valid_event(occurredAt=1700000000)], "occurredAt garbage": [valid_event(occurredAt="yesterday")],
        "poiId not uuid": [valid_event(poiId="<script>")], "poiId missing": [valid_event(poiId=...)],
        "via unknown": [valid_event(via="teleport")], "durationSeconds string": [valid_event(type="tour.completed", tourId=str(uuid.uuid4()), durationSeconds="long")],
        "dwellSeconds bool": [valid_event(type="poi.left", dwellSeconds=True)],
        "mediaType unknown": [valid_event(type="media.played", url="x", mediaType="hologram")],
    }
    for name, events in wrong_types.items():
        tally_events(suite, "events-wrong-typed", json.dumps({"events": events}).encode(), name)
    tally_events(suite, "events-wrong-typed", b'{"events": []}', "text/plain content type", content_type="text/plain")
    tally_events(suite, "events-wrong-typed", b"events=1", "form content type", content_type="application/x-www-form-urlencoded")
    assert_alive(suite.feed_url)
    assert_no_failures("events-malformed")
    assert_no_failures("events-wrong-typed")


def test_oversized_and_deeply_nested_events(suite):
    big = json.dumps({"events": [valid_event(deviceId="x" * 1000) for _ in range(1200)]}).encode()
    assert len(big) > 1 << 20
    tally_events(suite, "events-oversized", big, f"{len(big)} bytes")
    padded = b'{"events": [], "pad": "' + b"a" * (2 << 20) + b'"}'
    tally_events(suite, "events-oversized", padded, "2 MiB padding")
    # Chunked, no Content-Length: the limit must hold while the body streams in.
    response = call("POST", suite.feed_url + "/v1/events", data=iter([b'{"events": [], "p": "'] + [b"b" * 65536] * 24 + [b'"}']),
                    headers={"Content-Type": "application/json"})
    tally("events-oversized", status_of(response), "1.5 MiB chunked")
    one_event = valid_event(deviceId="y" * (1 << 20))
    tally_events(suite, "events-oversized", json.dumps({"events": [one_event]}).encode(), "one 1 MiB deviceId")
    for depth in (100, 1000, 10_000, 100_000):
        tally_events(suite, "events-nested", b'{"events": ' + b"[" * depth + b"]" * depth + b"}", f"array depth {depth}")
        tally_events(suite, "events-nested", b'{"events": [' + b'{"a":' * depth + b"1" + b"}" * depth + b"]}", f"object depth {depth}")
    assert_alive(suite.feed_url)
    for category in ("events-oversized", "events-nested"):
        assert_no_failures(category)


def test_out_of_range_event_dates(suite):
    now = datetime.now(timezone.utc)
    dates = {"31 days old": iso(now - timedelta(days=31)), "10 minutes ahead": iso(now + timedelta(minutes=10)),
             "year 1": "0001-01-01T00:00:00Z", "year 9999": "9999-12-31T23:59:59Z", "month 13": "2025-13-01T00:00:00Z",
             "feb 30": "2025-02-30T00:00:00Z", "hour 25": "2025-05-01T25:00:00Z", "no zone": "2025-05-01T10:00:00",
             "empty": "", "epoch": "1970-01-01T00:00:00Z", "huge year": "99999999-01-01T00:00:00Z"}
    for name, value in dates.items():
        tally_events(suite, "events-dates", json.dumps({"events": [valid_event(occurredAt=value)]}).encode(), name)
    assert_alive(suite.feed_url)
    assert_no_failures("events-dates")


# --- the feed's GETs: ranges, unknown ids, headers ----------------------------------------------------------

def test_out_of_range_coordinates_and_queries(suite):
    queries = ["near=91,0&radius=100", "near=-91,0&radius=100", "near=0,181&radius=100", "near=0,-181&radius=100",
               "near=NaN,NaN&radius=100", "near=inf,0&radius=100", "near=1e999,0&radius=100", "near=abc&radius=100",
               "near=34.2&radius=100", "near=34.2,-77.8,5&radius=100", "near=34.2,-77.8&radius=-1",
               "near=34.2,-77.8&radius=NaN", "near=34.2,-77.8&radius=1e400", "near=34.2,-77.8&radius=100&limit=-5",
               "near=34.2,-77.8&radius=100&limit=abc", "near=34.2,-77.8&radius=100&limit=99999999999999999999",
               "near=%00,%00&radius=1", "near=34.2,-77.8&radius=" + "9" * 400]
    for query in queries:
        tally("feed-ranges", status_of(call("GET", f"{suite.feed_url}/v1/pois?{query}")), query)
    assert_no_failures("feed-ranges")


def test_unknown_ids_are_404_problems(suite):
    missing = str(uuid.uuid4())
    for path in (f"/v1/tours/{missing}", f"/v1/pois/{missing}", f"/v1/pois/{missing}/page",
                 "/v1/legacy/tours/987654321/pois.xml", f"/v1/legacy/tours/{missing}/pois.xml"):
        response = call("GET", suite.feed_url + path)
        tally("unknown-ids", status_of(response), path)
        if response is not None and response.status_code == 404 and "/legacy/" not in path:
            assert response.headers.get("Content-Type", "").startswith("application/problem+json"), path
            assert response.json().get("detail"), path
    for path in ("/v1/tours/not-a-uuid", "/v1/pois/' OR 1=1 --", "/v1/pois/%3Cscript%3E", "/v1/tours/" + "a" * 5000,
                 "/v1/nope", "/v1/tours/../../etc/passwd", "/v1/pois/%00"):
        tally("unknown-ids", status_of(call("GET", suite.feed_url + path)), path)
    assert_no_failures("unknown-ids")


def raw_status(port: int, data: bytes, timeout: float = 5) -> int:
    """The status of the answer to raw bytes; 0 when the server closed the connection without one."""
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR) if b"99999999999" not in data else None
            answer = sock.recv(64)
    except OSError:
        return 0
    match = re.match(rb"HTTP/\d\.\d (\d{3})", answer)
    return int(match.group(1)) if match else 0


def test_header_abuse(suite):
    tours = suite.feed_url + "/v1/tours"
    etag = call("GET", tours).headers.get("ETag", '"x"')
    benign = {"If-None-Match: " + v: {"If-None-Match": v} for v in
              ['"', "W/", "*", "W/\"\"", ",,,,", etag + ", " * 500 + etag, '"' + "a" * 4000 + '"', "a\tb", "null", "\u00e9t\u00e9"]}
    benign.update({"Accept-Encoding: junk": {"Accept-Encoding": "gzip;q=nan, br;q=-1, *;q=2"},
                   "Accept: garbage": {"Accept": "%%%/%%%"}, "Range: bogus": {"Range": "bytes=999999-1"},
                   "Content-Length on GET": {"Content-Length": "5"}})
    for name, headers in benign.items():
        # Harmless however odd: a 200/304 or a 4xx, never a 5xx.
        tally("header-abuse", status_of(call("GET", tours, headers=headers)), name, allow_success=True)
    for name, headers in {"one 64 KiB header": {"X-Big": "a" * 65536},
                          "one 1 MiB header": {"X-Big": "a" * (1 << 20)},
                          "500 headers": {f"X-H{i}": "v" * 200 for i in range(500)}}.items():
        response = call("GET", tours, headers=headers)
        status = status_of(response)
        # A server may refuse an oversized head with 431/400 or by closing the connection; both refuse it.
        tally("header-abuse", 431 if status == 0 else status, name, allow_success=True)
    # Broken framing, sent raw (an HTTP library would fix it): a 4xx, or the connection closed unanswered.
    port = suite.ports["feed"]
    for name, head in {"negative Content-Length": b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}",
                       "two Content-Lengths": b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}",
                       "Content-Length and chunked": b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                       "Content-Length beyond body": b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{}",
                       "header without colon": b"GET /v1/tours HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n",
                       "bare LF and NUL": b"GET /v1/tours HTTP/1.1\nHost: x\nX: a\x00b\n\n",
                       "HTTP/9.9": b"GET /v1/tours HTTP/9.9\r\nHost: x\r\n\r\n",
                       "If-None-Match tab only": b"GET /v1/tours HTTP/1.1\r\nHost: x\r\nIf-None-Match: \t\r\nConnection: close\r\n\r\n"}.items():
        status = raw_status(port, head)
        tally("header-abuse", 400 if status == 0 else status, name, allow_success=name.startswith("If-None-Match"))
    tally("header-abuse", status_of(call("POST", suite.feed_url + "/v1/events", data=b'{"events": []}',
                                         headers={"Content-Type": "application/json; charset=\x7f" + ";" * 1000})),
          "junk content-type params", allow_success=True)
    assert_alive(suite.feed_url)
    assert_no_failures("header-abuse")


# --- the admin site ---------------------------------------------------------------------------------------

class FormParser(HTMLParser):
    """Every <form>: action, method, and its named fields with their current values."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self.current: dict | None = None
        self.select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.current = {"action": a.get("action", ""), "method": (a.get("method") or "get").lower(), "fields": {}, "kinds": {}}
            self.forms.append(self.current)
        elif self.current is not None and tag in ("input", "textarea", "select") and a.get("name"):
            kind = a.get("type", tag).lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                self.current["kinds"].setdefault(a["name"], kind)
                return
            self.current["fields"][a["name"]] = a.get("value", "")
            self.current["kinds"][a["name"]] = kind
            if tag == "select":
                self.select = a["name"]
        elif tag == "option" and self.select and self.current is not None:
            if not self.current["fields"].get(self.select) or "selected" in a:
                self.current["fields"][self.select] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "form":
            self.current = None
        elif tag == "select":
            self.select = None


def forms_of(page: str) -> list[dict]:
    parser = FormParser()
    parser.feed(page)
    return parser.forms


@pytest.fixture(scope="module")
def owner(suite):
    session, response = login(suite.admin_url, ADMIN_EMAIL, ADMIN_PASSWORD)
    assert response.status_code in (302, 303), f"admin log-in failed: {response.status_code} {response.text[:300]}"
    return session


PAYLOADS = ["<script>alert('itour-xss')</script>", "\"><img src=x onerror=alert('itour-xss')>",
            "'; DROP TABLE catalog.tours; --", "' OR '1'='1", "Robert'); DELETE FROM admin.users;--",
            "{{7*7}} ${7*7} <%= 7*7 %>", "\u202e bidi override", "<svg/onload=alert('itour-xss')>"]
MARKUP = re.compile(r"<script>alert\('itour-xss'\)|<img src=x onerror|<svg/onload")


def admin_pages(suite, session) -> dict[str, str]:
    """The admin pages with forms: fixed ones, plus the first tour's and POI's own pages."""
    pages = {}
    for path in ("/tours/new", "/pois/new", "/categories", "/users", "/account", "/tours", "/pois"):
        response = session.get(suite.admin_url + path, timeout=TIMEOUT)
        if response.status_code == 200:
            pages[path] = response.text
    for listing, pattern in (("/tours", r'href="(/tours/[0-9a-fA-F-]{36})"'), ("/pois", r'href="(/pois/[0-9a-fA-F-]{36})"')):
        match = re.search(pattern, pages.get(listing, ""))
        if match:
            for suffix in ("", "/links"):
                response = session.get(suite.admin_url + match.group(1) + suffix, timeout=TIMEOUT)
                if response.status_code == 200:
                    pages[match.group(1) + suffix] = response.text
    return pages


SKIP_ACTIONS = ("/logout", "/delete", "/password", "/role", "/import", "/status", "/editors", "/stops")


def test_injection_payloads_in_every_admin_field(suite, owner):
    """Every text field of every form an owner sees gets each payload: refused (4xx, e.g. 422) or stored,
    never a 5xx; afterwards no admin page and no feed document carries the payload as live markup."""
    pages = admin_pages(suite, owner)
    assert "/tours/new" in pages and "/pois/new" in pages, f"admin pages missing: {sorted(pages)}"
    fields_tried = set()
    for path, page in pages.items():
        for form in forms_of(page):
            action = form["action"] or path
            if form["method"] != "post" or any(s in action for s in SKIP_ACTIONS):
                continue
            text_fields = [n for n, k in form["kinds"].items()
                           if k in ("text", "textarea", "search", "url", "email", "tel", "number", "hidden", "select")
                           and n not in ("csrf_token", "version", "expectedVersion")]
            for field_name in text_fields:
                for payload in PAYLOADS:
                    data = dict(form["fields"])
                    data["csrf_token"] = csrf_of(page)
                    data[field_name] = payload
                    response = call("POST", suite.admin_url + action, data=data, cookies=owner.cookies)
                    tally("admin-injection", status_of(response), f"{action} {field_name}={payload[:20]}", allow_success=True)
                    fields_tried.add(f"{action}#{field_name}")
                    if status_of(response) in (302, 303):
                        # Saved: the form's version moved on, so fetch it again (else the next is a 409).
                        fresh = owner.get(suite.admin_url + path, timeout=TIMEOUT)
                        match = [f for f in forms_of(fresh.text) if (f["action"] or path) == action] if fresh.status_code == 200 else []
                        if match:
                            page, form = fresh.text, match[0]
    print(f"admin fields tried: {len(fields_tried)}")
    assert fields_tried, "no admin form fields found"
    # Pages: the payloads, if stored, are escaped.
    for path in ("/tours", "/pois", "/categories", "/users"):
        response = owner.get(suite.admin_url + path, timeout=TIMEOUT)
        assert not MARKUP.search(response.text), f"unescaped payload on {path}"
    for path, page in admin_pages(suite, owner).items():
        assert not MARKUP.search(page), f"unescaped payload on {path}"
    # The feed: JSON strings only (never markup outside a JSON string), and its HTML page escapes them.
    response = call("GET", suite.feed_url + "/v1/tours")
    assert response.headers["Content-Type"].startswith("application/json")
    for tour in response.json()["tours"]:
        detail = call("GET", f"{suite.feed_url}/v1/tours/{tour['id']}")
        assert detail.headers["Content-Type"].startswith("application/json")
        detail.json()
        for stop in detail.json().get("stops", []):
            page = call("GET", f"{suite.feed_url}/v1/pois/{stop['id']}/page")
            assert page is not None and page.status_code == 200
            assert not MARKUP.search(page.text), f"unescaped payload on the feed's page of POI {stop['id']}"
    # Stored payloads come back from the feed verbatim, as JSON strings (the escaping is the page's job).
    strings = []
    def walk(value):
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
    for tour in response.json()["tours"]:
        walk(call("GET", f"{suite.feed_url}/v1/tours/{tour['id']}").json())
    verbatim = sum(1 for text in strings if any(p in text for p in PAYLOADS))
    TALLY["admin-injection"]["served_verbatim_by_feed"] = verbatim
    print(f"payload strings served verbatim as JSON by the feed: {verbatim}")
    search = call("GET", suite.feed_url + "/v1/search", params={"q": "itour-xss"})
    assert status_of(search) == 200 and search.headers["Content-Type"].startswith("application/json")
    search.json()
    assert_alive(suite.admin_url)
    assert_no_failures("admin-injection")


def admin_post_routes(suite, owner) -> list[str]:
    """Every POST route of the admin (Services/Admin/Routes), with real ids where the route takes one."""
    pages = admin_pages(suite, owner)
    tour = re.search(r'/tours/([0-9a-fA-F-]{36})', pages.get("/tours", ""))
    poi = re.search(r'/pois/([0-9a-fA-F-]{36})', pages.get("/pois", ""))
    user = re.search(r'/users/([0-9a-fA-F-]{36})', pages.get("/users", ""))
    category = re.search(r'/categories/([0-9a-fA-F-]{36})', pages.get("/categories", ""))
    t = tour.group(1) if tour else str(uuid.uuid4())
    p = poi.group(1) if poi else str(uuid.uuid4())
    u = user.group(1) if user else str(uuid.uuid4())
    c = category.group(1) if category else str(uuid.uuid4())
    return ["/logout", "/account/password", "/categories", f"/categories/{c}/rename", f"/categories/{c}/delete", "/import",
            "/pois", f"/tours/{t}/pois", f"/pois/{p}", f"/pois/{p}/delete", f"/pois/{p}/links", f"/pois/{p}/links/0",
            f"/pois/{p}/links/0/delete", "/tours", f"/tours/{t}", f"/tours/{t}/status", f"/tours/{t}/stops",
            f"/tours/{t}/editors", f"/tours/{t}/delete", "/users", f"/users/{u}/role", f"/users/{u}/password",
            f"/users/{u}/delete"]


def test_csrf_less_posts_are_refused(suite, owner):
    for route in admin_post_routes(suite, owner):
        if route == "/logout":
            continue
        data = {"name": "csrf-probe", "role": "viewer", "status": "draft"}
        tally("admin-csrf", status_of(call("POST", suite.admin_url + route, data=data, cookies=owner.cookies)), f"{route} no token",
              refused_ok=(403, 403))
        tally("admin-csrf", status_of(call("POST", suite.admin_url + route, data={**data, "csrf_token": "forged" * 8},
                                           cookies=owner.cookies)), f"{route} forged token", refused_ok=(403, 403))
        page = owner.get(suite.admin_url + "/tours", timeout=TIMEOUT).text
        tally("admin-csrf", status_of(call("POST", suite.admin_url + route, data={**data, "csrf_token": csrf_of(page)},
                                           headers={"Origin": "https://evil.example"}, cookies=owner.cookies)),
              f"{route} cross-site Origin", refused_ok=(403, 403))
    # Log-in without the double-submit token.
    tally("admin-csrf", status_of(call("POST", suite.admin_url + "/login", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})),
          "/login no token", refused_ok=(403, 403))
    assert owner.get(suite.admin_url + "/tours", timeout=TIMEOUT).status_code == 200, "the owner's session was logged out"
    assert_no_failures("admin-csrf")


def make_user(suite, owner, role: str) -> tuple[str, str]:
    email, password = f"hostile-{role}-{uuid.uuid4().hex[:6]}@example.edu", "hostile-pass-" + uuid.uuid4().hex[:8]
    page = owner.get(suite.admin_url + "/users", timeout=TIMEOUT).text
    response = owner.post(suite.admin_url + "/users", data={"email": email, "role": role, "password": password,
                                                            "csrf_token": csrf_of(page)}, timeout=TIMEOUT, allow_redirects=False)
    assert response.status_code in (302, 303), f"creating a {role}: {response.status_code} {response.text[:300]}"
    return email, password


OWNER_ONLY_GETS = ("/users", "/categories", "/import")
CONTENT_GETS = ("/tours", "/pois", "/tours/new", "/pois/new")


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_cross_role_requests_are_forbidden(suite, owner, role):
    routes = admin_post_routes(suite, owner)
    email, password = make_user(suite, owner, role)
    session, response = login(suite.admin_url, email, password)
    assert response.status_code in (302, 303), f"{role} log-in failed: {response.status_code}"
    home = session.get(suite.admin_url + "/", timeout=TIMEOUT)
    token = csrf_of(home.text) or csrf_of(session.get(suite.admin_url + "/account", timeout=TIMEOUT).text)
    assert token, f"no CSRF token on the {role}'s pages"
    gets = OWNER_ONLY_GETS + (CONTENT_GETS if role == "viewer" else ())
    for path in gets:
        tally("admin-cross-role", status_of(call("GET", suite.admin_url + path, cookies=session.cookies)), f"{role} GET {path}",
              refused_ok=(403, 403))
    for route in routes:
        if route in ("/logout", "/account/password"):
            continue  # every signed-in user may log out and change their own password
        if role == "editor" and route in ("/pois", "/tours"):
            continue  # editors may create content (Access.swift); assignment checks are below
        data = {"csrf_token": token, "name": f"cross-role {role}", "role": "owner", "status": "published",
                "email": f"x-{uuid.uuid4().hex[:6]}@example.edu", "password": "x" * 12, "latitude": "34.2", "longitude": "-77.8"}
        tally("admin-cross-role", status_of(call("POST", suite.admin_url + route, data=data, cookies=session.cookies)),
              f"{role} POST {route}", refused_ok=(403, 403))
    assert_alive(suite.admin_url)
    assert_no_failures("admin-cross-role")


def test_anonymous_requests_go_to_login(suite, owner):
    for route in admin_post_routes(suite, owner):
        response = call("POST", suite.admin_url + route, data={"name": "anon"})
        tally("admin-anonymous", status_of(response), f"anonymous POST {route}", refused_ok=(400, 499))
    for path in OWNER_ONLY_GETS + CONTENT_GETS:
        response = call("GET", suite.admin_url + path)
        status = status_of(response)
        # A redirect to the log-in page refuses too.
        if status in (302, 303) and "/login" in response.headers.get("Location", ""):
            status = 401
        tally("admin-anonymous", status, f"anonymous GET {path}")
    assert_no_failures("admin-anonymous")


def test_brute_force_login_is_throttled(tmp_path):
    """On an admin of its own (the throttle counts per client address too, which would lock out the other tests)."""
    own = start_suite(tmp_path, services=("catalog", "admin"), demo=False)
    try:
        limited = 0
        for attempt in range(40):
            session, response = login(own.admin_url, ADMIN_EMAIL, f"wrong-password-{attempt}")
            status = response.status_code
            tally("brute-force", status, f"guess {attempt}", refused_ok=(400, 499))
            assert "itour_session" not in session.cookies, "a wrong password opened a session"
            limited += status == 429
        session, response = login(own.admin_url, ADMIN_EMAIL, ADMIN_PASSWORD)
        tally("brute-force", response.status_code, "right password while throttled", refused_ok=(400, 499))
        assert limited > 0, "40 wrong passwords in a row were never throttled"
        assert_alive(own.admin_url)
    finally:
        for name in list(own.processes):
            own.stop(name)
    assert_no_failures("brute-force")


def test_nul_byte_in_a_field_does_not_wedge_catalog(suite, owner):
    """A NUL character (which Postgres text cannot hold) in a name: refused, or stored some other way, and
    either way later commands still apply (the catalog must not retry a poison command forever)."""
    page = owner.get(suite.admin_url + "/tours/new", timeout=TIMEOUT).text
    form = next(f for f in forms_of(page) if f["method"] == "post" and not any(x in f["action"] for x in SKIP_ACTIONS))
    data = {**form["fields"], "csrf_token": csrf_of(page), "name": "nul \u0000 byte", "summary": "nul"}
    response = call("POST", suite.admin_url + (form["action"] or "/tours"), data=data, cookies=owner.cookies, timeout=30)
    tally("admin-nul", status_of(response), "tour name with NUL", allow_success=True)
    # A benign edit afterwards must be applied promptly.
    page = owner.get(suite.admin_url + "/tours/new", timeout=TIMEOUT).text
    name = f"After NUL {uuid.uuid4().hex[:6]}"
    data = {**form["fields"], "csrf_token": csrf_of(page), "name": name, "summary": "benign"}
    response = call("POST", suite.admin_url + (form["action"] or "/tours"), data=data, cookies=owner.cookies, timeout=30)
    applied = False
    if response is not None and response.status_code in (302, 303):
        deadline = time.monotonic() + 30
        while not (applied := name in owner.get(suite.admin_url + "/tours", timeout=TIMEOUT).text) and time.monotonic() < deadline:
            time.sleep(1)
    where = response.headers.get("Location", "") if response is not None else ""
    assert applied, (f"after a NUL byte in a tour name, the next tour ({name}) was not listed within 30 s "
                     f"(answer {status_of(response)} to {where}); is catalog stuck on the first? see catalog.log")
    assert_no_failures("admin-nul")
