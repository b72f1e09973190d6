"""QR codes on the feed (issue 19, item 6; DESIGN.md "QR codes"): each code, read back by zbar, is the POI's or the
tour's link with ?src=qr, and the POI's link opens its phone page."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from qrcodes import decode_svg


def get(url: str, headers: dict | None = None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.fixture(scope="module")
def demo_tour(suite):
    _, _, body = get(f"{suite.feed_url}/v1/tours")
    tour = next(t for t in json.loads(body)["tours"] if t["name"] == "Students Tour (Beta)")
    _, _, body = get(f"{suite.feed_url}/v1/tours/{tour['id']}")
    return json.loads(body)


def test_a_stops_code_opens_its_phone_page(suite, demo_tour):
    stop = demo_tour["stops"][1]
    status, headers, body = get(f"{suite.feed_url}/v1/pois/{stop['id']}/qr.svg")
    assert status == 200 and headers["Content-Type"] == "image/svg+xml"
    link = decode_svg(body.decode())
    assert link == f"{suite.feed_url}/v1/pois/{stop['id'].upper()}/page?src=qr"
    status, page_headers, page = get(link)
    assert status == 200 and page_headers["Content-Type"].startswith("text/html") and stop["name"] in page.decode()
    assert f"<title>{link}</title>" in body.decode(), "the link is the code's title, for screen readers"
    # Cached like every GET.
    assert get(f"{suite.feed_url}/v1/pois/{stop['id']}/qr.svg", {"If-None-Match": headers["ETag"]})[0] == 304


def test_a_tours_code_holds_the_tours_link(suite, demo_tour):
    status, _, body = get(f"{suite.feed_url}/v1/tours/{demo_tour['id']}/qr.svg")
    assert status == 200
    assert decode_svg(body.decode()) == f"{suite.feed_url}/v1/tours/{demo_tour['id'].upper()}?src=qr"


@pytest.mark.parametrize("path, status", [
    ("/v1/pois/00000000-0000-4000-8000-000000000000/qr.svg", 404),
    ("/v1/tours/00000000-0000-4000-8000-000000000000/qr.svg", 404),
    ("/v1/pois/not-an-id/qr.svg", 400),
])
def test_no_code_for_what_is_not_on_the_feed(suite, path, status):
    answer, headers, body = get(suite.feed_url + path)
    assert answer == status and headers["Content-Type"] == "application/problem+json"
    assert json.loads(body)["detail"]
