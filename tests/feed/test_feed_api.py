"""The Feed API (DESIGN.md "Feed API") against the real binaries with the demo content loaded by
`catalog load-demo`: every contract point, and bad input answered with a 4xx problem+json."""
from __future__ import annotations

import gzip
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

DEMO = json.loads((Path(__file__).resolve().parents[2] / "deploy" / "demo" / "uncw-itour.json").read_text())
DEMO_POIS = {poi["legacyId"]: poi for poi in DEMO["pois"]}
DEMO_TOUR = DEMO["tours"][0]
R = 6371008.8


def haversine(a, b):
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(min(1, math.sqrt(h)))


def bearing(a, b):
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dl = math.radians(b[1] - a[1])
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(y, x)) + 360) % 360


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    @property
    def text(self):
        return self.body.decode()


def request(url, method="GET", headers=None, body=None) -> Answer:
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(req, timeout=15) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


def expect_problem(answer: Answer, status: int):
    assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.headers["Content-Type"] == "application/problem+json"
    problem = answer.json()
    assert problem["status"] == status
    assert problem["title"] and problem["detail"]


@pytest.fixture(scope="module")
def feed(suite):
    return suite.feed_url


@pytest.fixture(scope="module")
def tour(feed):
    # load-demo returns when catalog applied the commands; the feed sees the events a moment later.
    deadline = time.monotonic() + 30
    while True:
        tours = request(feed + "/v1/tours").json()["tours"]
        found = [t for t in tours if t["name"] == DEMO_TOUR["name"] and t["stopCount"] == len(DEMO_TOUR["stops"])]
        if found or time.monotonic() > deadline:
            assert found, tours
            return found[0]
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tour_detail(feed, tour):
    return request(f"{feed}/v1/tours/{tour['id']}").json()


def poi_id(tour_detail, legacy_id):
    index = DEMO_TOUR["stops"].index(legacy_id)
    return tour_detail["stops"][index]["id"]


def test_tour_list(feed, tour):
    answer = request(feed + "/v1/tours")
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/json"
    assert set(tour) >= {"id", "name", "summary", "stopCount", "updatedAt"}
    assert tour["stopCount"] == 10
    assert tour["summary"] == DEMO_TOUR["summary"]
    assert tour["updatedAt"].endswith("Z")


def test_tour_detail_stops_bbox_and_walking_distance(tour_detail):
    stops = tour_detail["stops"]
    assert [s["name"] for s in stops] == [DEMO_POIS[i]["name"] for i in DEMO_TOUR["stops"]]
    for stop, legacy in zip(stops, DEMO_TOUR["stops"]):
        assert set(stop) == {"id", "name", "summary", "latitude", "longitude", "category", "triggerRadiusMeters", "languages"}
        assert stop["languages"] == ["en", "es"], "the demo stops are in English and Spanish"
        assert stop["triggerRadiusMeters"] == 30
        assert (stop["latitude"], stop["longitude"]) == (DEMO_POIS[legacy]["latitude"], DEMO_POIS[legacy]["longitude"])
    points = [(DEMO_POIS[i]["latitude"], DEMO_POIS[i]["longitude"]) for i in DEMO_TOUR["stops"]]
    assert tour_detail["bbox"] == {
        "minLatitude": min(p[0] for p in points), "maxLatitude": max(p[0] for p in points),
        "minLongitude": min(p[1] for p in points), "maxLongitude": max(p[1] for p in points),
    }
    walk = sum(haversine(a, b) for a, b in zip(points, points[1:]))
    assert abs(tour_detail["walkingDistanceMeters"] - walk) < 0.06
    assert tour_detail["name"] == DEMO_TOUR["name"] and tour_detail["purpose"] == DEMO_TOUR["purpose"]


def test_poi_detail(feed, tour, tour_detail):
    cis = request(f"{feed}/v1/pois/{poi_id(tour_detail, 1014)}").json()
    demo = DEMO_POIS[1014]
    for field in ("name", "summary", "description", "latitude", "longitude", "buildings"):
        assert cis[field] == demo[field], field
    assert cis["links"] == demo["links"]
    assert cis["tourIds"] == [tour["id"]]
    for field in ("category", "pictures", "address", "phone", "website", "openingHours"):
        assert field in cis


def test_poi_page_is_escaped_html(feed, tour_detail):
    answer = request(f"{feed}/v1/pois/{poi_id(tour_detail, 1013)}/page")
    assert answer.status == 200
    assert answer.headers["Content-Type"].startswith("text/html")
    assert "<h1>Randall &amp; Campus Commons</h1>" in answer.text
    assert 'name="viewport"' in answer.text
    assert len(answer.body) < 8192
    cis = request(f"{feed}/v1/pois/{poi_id(tour_detail, 1014)}/page").text
    assert 'href="http://www.uncw.edu/csc"' in cis


def test_poi_page_reads_well_on_a_phone(feed, tour_detail, browser):
    browser.set_window_size(390, 844)
    browser.get(f"{feed}/v1/pois/{poi_id(tour_detail, 1014)}/page")
    assert browser.find_element("tag name", "h1").text == "CIS Building"
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    size = browser.execute_script("return parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 16


def test_nearby_nearest_first_with_distance_and_bearing(feed):
    here = (34.2261, -77.8767)
    answer = request(f"{feed}/v1/pois?near={here[0]},{here[1]}&radius=500&limit=200")
    # Other tests may add content to the shared suite: compare the demo POIs among the answers.
    demo_names = {p["name"] for p in DEMO["pois"]}
    pois = [p for p in answer.json()["pois"] if p["name"] in demo_names]
    expected = sorted((haversine(here, (p["latitude"], p["longitude"])), p["name"], p) for p in DEMO["pois"])
    expected = [e for e in expected if e[0] <= 500]
    assert len(expected) >= 4
    assert [p["name"] for p in pois] == [e[1] for e in expected]
    for item, (distance, _, demo) in zip(pois, expected):
        assert abs(item["distanceMeters"] - distance) <= 0.06
        assert abs(item["bearingDegrees"] - bearing(here, (demo["latitude"], demo["longitude"]))) <= 0.06
        assert 0 <= item["bearingDegrees"] < 360
    everything = request(f"{feed}/v1/pois?near={here[0]},{here[1]}&radius=5000&limit=200").json()["pois"]
    assert len([p for p in everything if p["name"] in demo_names]) == 10
    assert len(request(f"{feed}/v1/pois?near={here[0]},{here[1]}&radius=5000&limit=3").json()["pois"]) == 3
    assert [p["distanceMeters"] for p in everything] == sorted(p["distanceMeters"] for p in everything)
    assert request(f"{feed}/v1/pois?near=0,0&radius=1000").json() == {"language": "en", "pois": []}
    # The demo POIs have no category: a category filter leaves none.
    assert request(f"{feed}/v1/pois?near={here[0]},{here[1]}&radius=5000&category=Shop").json() == {"language": "en", "pois": []}


def test_search_folds_case_and_accents(feed, tour):
    def names(query):
        body = request(f"{feed}/v1/search?q={urllib.parse.quote(query)}").json()
        return [p["name"] for p in body["pois"]], [t["name"] for t in body["tours"]]

    pois, tours = names("RANDALL LIBRARY")
    assert "Randall & Campus Commons" in pois
    assert "Front of Campus" in names("kénan")[0]
    assert DEMO_TOUR["name"] in names("prospective")[1]
    assert DEMO_TOUR["name"] in names("BÉTA")[1]
    demo_names = {p["name"] for p in DEMO["pois"]}
    hall = [name for name in names("hall")[0] if name in demo_names]
    expected = sorted((p["name"] for p in DEMO["pois"]
                       if any("hall" in t.lower() for t in [p["name"], p.get("summary", "")] + p.get("buildings", []))), key=str.lower)
    assert hall == expected
    assert names("no such place zz9") == ([], [])


def test_legacy_xml_feeds(feed):
    answer = request(feed + "/v1/legacy/tours.xml")
    assert answer.headers["Content-Type"].startswith("application/xml")
    channel = ElementTree.fromstring(answer.body)
    assert channel.tag == "channel" and channel.find("name").text and channel.find("description") is not None
    items = channel.findall("item")
    item = next(i for i in items if i.find("title").text == DEMO_TOUR["name"])
    assert item.find("id").text == str(DEMO_TOUR["legacyId"])
    assert item.find("summary").text == DEMO_TOUR["summary"]
    pois = ElementTree.fromstring(request(f"{feed}/v1/legacy/tours/{item.find('id').text}/pois.xml").body)
    assert pois.tag == "channel" and pois.find("name") is not None and pois.find("description") is not None
    rows = [(i.find("poiID").text, i.find("title").text, i.find("summary").text, float(i.find("latitude").text), float(i.find("longitude").text))
            for i in pois.findall("item")]
    assert rows == [(str(l), DEMO_POIS[l]["name"], DEMO_POIS[l]["summary"], DEMO_POIS[l]["latitude"], DEMO_POIS[l]["longitude"])
                    for l in DEMO_TOUR["stops"]]
    expect_problem(request(feed + "/v1/legacy/tours/12345/pois.xml"), 404)


@pytest.mark.parametrize("path", ["/v1/tours", "TOUR", "POI", "POI/page", "/v1/pois?near=34.2261,-77.8767&radius=900",
                                  "/v1/search?q=hall", "/v1/legacy/tours.xml", "/v1/legacy/tours/11/pois.xml", "/openapi.json"])
def test_every_get_has_etag_cache_control_304_and_gzip(feed, tour, tour_detail, path):
    path = path.replace("TOUR", f"/v1/tours/{tour['id']}").replace("POI", f"/v1/pois/{poi_id(tour_detail, 1011)}")
    plain = request(feed + path)
    assert plain.status == 200
    etag = plain.headers["ETag"]
    assert etag and "max-age" in plain.headers["Cache-Control"]
    again = request(feed + path, headers={"If-None-Match": etag})
    assert again.status == 304 and again.body == b"" and again.headers["ETag"] == etag
    zipped = request(feed + path, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == plain.body
    assert request(feed + path, headers={"Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]}).status == 304


def test_only_published_content_is_visible(suite, feed):
    """A draft tour made through the catalog's commands stays off the feed, and so does its POI."""
    import subprocess
    import uuid
    from conftest import ROOT
    hidden = {"source": "test", "tours": [{"legacyId": 900001, "name": "Hidden draft tour", "stops": [900002], "status": "draft"}],
              "pois": [{"legacyId": 900002, "name": "Hidden draft stop", "latitude": 34.2, "longitude": -77.8}]}
    path = Path(suite.log_dir) / f"hidden-{uuid.uuid4().hex}.json"
    path.write_text(json.dumps(hidden))
    result = suite.run_tool("catalog", "import", str(path))
    assert result.returncode == 0, result.stderr
    assert "Hidden draft tour" not in request(feed + "/v1/tours").text
    assert request(feed + "/v1/search?q=hidden").json() == {"language": "en", "pois": [], "tours": [], "events": [], "people": [], "pages": []}
    assert "Hidden" not in request(feed + "/v1/legacy/tours.xml").text
    tour_id = "00000001-0000-4000-8000-000000900001"
    expect_problem(request(f"{feed}/v1/tours/{tour_id}"), 404)
    expect_problem(request(f"{feed}/v1/pois/00000002-0000-4000-8000-000000900002"), 404)


@pytest.mark.parametrize("path,status", [
    ("/v1/tours/not-a-uuid", 400), ("/v1/tours/00000000-0000-4000-8000-000000000000", 404),
    ("/v1/pois/%20", 400), ("/v1/pois/00000000-0000-4000-8000-000000000000", 404), ("/v1/pois/nope/page", 400),
    ("/v1/pois?bbox=1,2", 400), ("/v1/pois?cursor=x", 400), ("/v1/pois?openNow=1", 400), ("/v1/pois?near=91,0", 400), ("/v1/pois?near=1,2,3", 400), ("/v1/pois?near=34,-77&radius=abc", 400),
    ("/v1/pois?near=34,-77&radius=1000000", 400), ("/v1/pois?near=34,-77&limit=0", 400), ("/v1/pois?near=34,-77&limit=201", 400),
    ("/v1/pois?near=34,-77&category=", 400), ("/v1/search", 400), ("/v1/search?q=", 400), ("/v1/search?q=" + "x" * 201, 400),
    ("/v1/search?q=hall&limit=-3", 400), ("/v1/search?q=%ZZ", 400), ("/v1/legacy/tours/0/pois.xml", 404), ("/v1/nothing", 404),
    ("/v1/changes?since=x", 400), ("/v1/changes?since=", 400), ("/v1/changes?since=AAAAAAAAAA%3D", 400),
])
def test_bad_reads_get_a_problem(feed, path, status):
    expect_problem(request(feed + path), status)


def test_changes_list_the_feed_then_what_changed_since_a_cursor(feed, tour, tour_detail):
    """GET /v1/changes (DESIGN.md "Offline tours and changes"): without since, everything on the feed; with the cursor
    it gave, changes since (none here may be listed as gone), never cached."""
    start = request(feed + "/v1/changes")
    assert start.status == 200 and start.headers["Cache-Control"] == "no-store"
    body = start.json()
    assert body["reset"] is True and len(body["cursor"]) == 11
    listed = {(c["kind"], c["id"].lower()): c for c in body["changes"]}
    assert len(listed) == len(body["changes"]), "each entity once"
    assert ("tour", tour["id"].lower()) in listed
    assert all(("poi", stop["id"].lower()) in listed for stop in tour_detail["stops"])
    assert not any(c["deleted"] for c in body["changes"])
    assert {c["kind"] for c in body["changes"]} <= {"tour", "poi", "page", "event", "person", "featured", "media"}
    since = request(feed + "/v1/changes?since=" + body["cursor"]).json()
    assert since["reset"] is False and len(since["cursor"]) == 11
    # A cursor from long before this feed started: everything again.
    assert request(feed + "/v1/changes?since=AAAAAAAAAAA").json()["reset"] is True


@pytest.mark.parametrize("method,path,allow", [("DELETE", "/v1/tours", "GET"), ("POST", "/v1/search?q=x", "GET"),
                                               ("PUT", "/v1/pois/00000000-0000-4000-8000-000000000000", "GET"), ("GET", "/v1/events", "POST")])
def test_wrong_method_is_405_with_allow(feed, method, path, allow):
    answer = request(feed + path, method=method)
    expect_problem(answer, 405)
    assert answer.headers["Allow"] == allow


def test_openapi_document(feed):
    document = request(feed + "/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    for path in ("/v1/tours", "/v1/tours/{id}", "/v1/pois", "/v1/pois/{id}", "/v1/pois/{id}/page", "/v1/search",
                 "/v1/legacy/tours.xml", "/v1/legacy/tours/{id}/pois.xml", "/v1/events"):
        assert path in document["paths"], path


def test_metrics_show_projection_size(feed):
    text = request(feed + "/metrics").text
    values = {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if line.startswith("itour_feed_projection_entities")}
    assert values['itour_feed_projection_entities{kind="pois"}'] >= 10
    assert values['itour_feed_projection_entities{kind="tours"}'] >= 1


def test_the_demo_content_has_a_category_tree_places_with_hours_and_upcoming_events(feed, tour, tour_detail):
    """Issue 18's demo content: the campus buildings as published places with hours, a category tree, three events."""
    tree = {node["name"]: node for node in request(feed + "/v1/categories").json()["categories"]}
    assert {"Campus", "Visit"} <= set(tree)
    assert {child["name"] for child in tree["Visit"]["children"]} == {"Open days", "Campus visits", "Information sessions"}
    assert tree["Campus"]["poiCount"] >= 6
    cis = request(f"{feed}/v1/pois/{poi_id(tour_detail, 1014)}").json()
    assert [day["spans"] for day in cis["openingHoursTable"]][:1] == [["07:30-22:00"]] and cis["priceLevel"] == 0
    assert "lifts to every floor" in cis["accessibility"]
    march = request(feed + "/v1/calendar?from=2027-03-01&to=2027-03-31").json()["occurrences"]
    titles = [occurrence["title"] for occurrence in march]
    assert titles.count("Spring Open Day") == 1 and titles.count("Information session for families") == 1
    assert titles.count("Campus visit") == 9, "Tuesdays and Thursdays of March 2027"
    open_day = next(o for o in march if o["title"] == "Spring Open Day")
    assert open_day["startsAt"] == "2027-03-20T09:00:00-04:00" and open_day["place"]["name"] == "Historic Quad"
    assert request(feed + "/v1/calendar.ics").text.count("BEGIN:VEVENT") >= 3


def test_the_demo_content_has_five_staff_in_the_people_directory(feed, tour_detail):
    """Issue 18, item 4: the people directory on the real suite, loaded by the demo import."""
    # The suite is shared: other tests (the admin's imports) may have added people; the demo's five are there.
    answer = request(feed + "/v1/people").json()
    names = [person["name"] for person in answer["people"]]
    demo = {"Jordan Ellis", "Priya Raman", "Marcus Bell", "Dr. Elena Ruiz", "Sam Okafor"}
    assert demo <= set(names) and answer["total"] == len(names) and names == sorted(names, key=str.casefold)
    admissions = request(feed + "/v1/people?department=office%20of%20admissions").json()["people"]
    assert [p["name"] for p in admissions] == ["Jordan Ellis", "Marcus Bell", "Priya Raman"]
    ellis = next(p for p in admissions if p["name"] == "Jordan Ellis")
    assert ellis["office"] == {"name": "Fisher Student Center", "poiId": poi_id(tour_detail, 1020)}
    assert request(f"{feed}/v1/people/{ellis['id']}").json()["role"] == "Director of Admissions"
    assert [p["name"] for p in request(feed + "/v1/people?q=marine").json()["people"]] == ["Dr. Elena Ruiz"]
    assert [p["name"] for p in request(feed + "/v1/search?q=ambassador").json()["people"]] == ["Sam Okafor"]
    expect_problem(request(feed + "/v1/people?limit=501"), 400)


def test_the_demo_content_has_an_about_page_rendered_from_markdown(feed):
    """Issue 18, item 5: the demo's About page, on the real suite, as JSON and as a phone page."""
    assert "about" in [page["slug"] for page in request(feed + "/v1/pages").json()["pages"]]
    about = request(feed + "/v1/pages/about").json()
    assert about["title"] == "About iTour" and "<h1>Welcome to UNCW</h1>" in about["html"]
    assert '<a href="mailto:admissions@example.edu">' in about["html"] and "<strong>visitor lots</strong>" in about["html"]
    phone = request(feed + "/v1/pages/about/page")
    assert phone.status == 200 and phone.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in phone.headers["Content-Security-Policy"]
    assert [page["slug"] for page in request(feed + "/v1/search?q=visitor%20lots").json()["pages"]] == ["about"]
    expect_problem(request(feed + "/v1/pages/no-such-page"), 404)


def test_the_demo_content_has_featured_items_for_the_home_screen(feed):
    """Issue 18, items 5 and 8: the demo's featured tour, event, POI and page, in order, each with its image description."""
    # The suite is shared: other tests' featured items (their own images) may stand among the demo's.
    demo_images = {item["imageUrl"] for item in DEMO["featured"]}
    items = [item for item in request(feed + "/v1/featured").json()["featured"] if item["imageUrl"] in demo_images]
    assert [item["kind"] for item in items] == ["tour", "event", "poi", "page"]
    assert [item["title"] for item in items] == ["Students Tour (Beta)", "Spring Open Day: 20 March", "Historic Quad", "New here? Start with iTour"]
    assert all(item["imageUrl"].startswith("https://") and item["imageAlt"] for item in items)
    assert items[3]["slug"] == "about"
    assert request(f"{feed}/v1/calendar/{items[1]['id']}").json()["title"] == "Spring Open Day"
