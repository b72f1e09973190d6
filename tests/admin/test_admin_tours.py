"""Tours Administration and Manage Tour: create, edit, delete with confirmation, stops, map, publish, conflicts."""
import json
import math
import re
import uuid

import requests
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from adminsite import eventually, feed_tours, site  # noqa: F401 (fixture)


def unique(name: str) -> str:
    return f"{name} {uuid.uuid4().hex[:6]}"


def test_create_edit_and_delete_a_tour_with_confirmation(site):
    name = unique("Night Walk")
    tour = site.create_tour(name, purpose="See the campus after dark.")
    assert "Created." in site.text
    assert site.value("Tour's Name") == name
    assert site.value("Tour's Purpose") == "See the campus after dark."

    site.fill("Tour's Name", name + " (edited)")
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.value("Tour's Name") == name + " (edited)"

    site.open("/tours")
    assert site.heading == "Tours Administration"
    site.click_in_row(name + " (edited)", "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_link("Cancel")
    assert name + " (edited)" in site.text, "Cancel keeps the tour"

    site.click_in_row(name + " (edited)", "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert site.heading == "Tours Administration"
    assert "Deleted." in site.text
    assert name not in site.text
    site.open(f"/tours/{tour}")
    assert site.heading == "Not found"


def test_a_refused_tour_shows_the_rule_beside_the_field_and_keeps_what_was_typed(site):
    site.open("/tours/new")
    site.fill("Tour's Name", "   ")
    site.fill("Tour's Purpose", "Purpose typed before the mistake")
    site.click_button("Save")
    assert site.heading == "Create New Tour"
    assert site.error_for("Tour's Name") == "Tour's Name is required"
    assert site.value("Tour's Purpose") == "Purpose typed before the mistake"
    site.fill("Tour's Name", "x" * 201)
    site.click_button("Save")
    assert site.error_for("Tour's Name") == "Tour's Name must be at most 200 characters"


def stop_names(site) -> list[str]:
    return [row.find_elements(By.TAG_NAME, "td")[1].text for row in site.browser.find_elements(By.CSS_SELECTOR, "table.stops tbody tr")]


def test_stops_are_listed_in_walking_order_can_be_reordered_and_are_mapped(site):
    tour = site.create_tour(unique("Reorder"))
    for name, latitude, longitude in [("First stop", "34.2261", "-77.8767"), ("Second stop", "34.2277", "-77.8759"),
                                      ("Third stop", "34.2275", "-77.8736")]:
        site.add_poi(tour, name, latitude, longitude)
    site.open(f"/tours/{tour}")
    assert stop_names(site) == ["First stop", "Second stop", "Third stop"]
    # The map (Leaflet, no tiles here): one numbered pin per stop in walking order, the route through them, and
    # every name beside its pin without two labels overlapping.
    markers = site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas .map-stop")
    assert [m.text for m in markers] == ["1", "2", "3"]
    assert [m.get_attribute("title") for m in markers] == ["1. First stop", "2. Second stop", "3. Third stop"]
    assert len(site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas path.map-route")) == 1
    labels = site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas .map-label")
    assert sorted(label.text for label in labels) == ["First stop", "Second stop", "Third stop"]
    rects = [label.rect for label in labels]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                    or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]), f"labels overlap: {a} {b}"

    site.click_labelled("Move down: First stop")
    assert "Stops saved." in site.text
    assert stop_names(site) == ["Second stop", "First stop", "Third stop"]
    site.click_labelled("Move up: Third stop")
    assert stop_names(site) == ["Second stop", "Third stop", "First stop"]
    site.click_labelled("Remove from tour: Third stop")
    assert stop_names(site) == ["Second stop", "First stop"]
    # Taken out of the tour, the POI still exists: add it back as the last stop.
    site.fill("Add an existing POI as the last stop", "Third stop")
    site.click_button("Add stop")
    assert stop_names(site) == ["Second stop", "First stop", "Third stop"]


def test_publish_puts_the_tour_on_the_feed(site):
    name = unique("Publish me")
    tour = site.create_tour(name)
    site.add_poi(tour, "Publish stop", "34.2262", "-77.8718")
    site.open(f"/tours/{tour}")
    assert "Draft" in site.text
    assert all(t["name"] != name for t in feed_tours(site.suite)), "a draft is not on the feed"
    site.click_button("Publish")
    assert "Published" in site.text
    shown = eventually(lambda: [t for t in feed_tours(site.suite) if t["name"] == name], timeout=5)
    assert shown and shown[0]["stopCount"] == 1
    site.click_button("Unpublish")
    assert eventually(lambda: all(t["name"] != name for t in feed_tours(site.suite)), timeout=5)


def test_an_edit_that_lost_a_race_keeps_both_changes_and_marks_the_field_changed_on_both_sides(site):
    tour = site.create_tour(unique("Race"), purpose="Original purpose")
    # Another request by someone signed in as the same user saves a new name and purpose first.
    session = site.http()
    token = site.csrf_token()
    version = site.browser.find_element(By.CSS_SELECTOR, "form.tour-form input[name=version]").get_attribute("value")
    response = session.post(f"{site.base}/tours/{tour}", data={"csrf_token": token, "version": version, "name": "Their newer name",
                                                               "summary": "", "purpose": "Their purpose"})
    assert response.status_code == 200 and "Saved." in response.text
    # This page still shows the old version; the edit made on it must not overwrite theirs silently.
    site.fill("Tour's Purpose", "My purpose, typed on the old page")
    site.click_button("Save")
    conflict = site.browser.find_element(By.CSS_SELECTOR, ".conflict").text
    assert "changed by you, in another tab or window" in conflict
    assert "Taken into the form from the newer version, since you had not changed them: Tour's Name" in conflict
    assert "Changed on both sides" in conflict and "Tour's Purpose" in conflict
    assert site.value("Tour's Name") == "Their newer name", "their change to a field I left alone is taken"
    assert site.value("Tour's Purpose") == "My purpose, typed on the old page", "what I typed is kept"
    assert "Their purpose" in site.error_for("Tour's Purpose")
    # Saving again, knowingly, keeps both changes.
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.value("Tour's Name") == "Their newer name"
    assert site.value("Tour's Purpose") == "My purpose, typed on the old page"



def test_a_tours_qr_codes_to_print_hold_the_feeds_links(site):
    """Issue 19, item 6: the tour's code and one per stop, each read back by zbar as its feed link with ?src=qr."""
    import urllib.request

    from qrcodes import decode_svg

    feed = site.suite.feed_url
    with urllib.request.urlopen(f"{feed}/v1/tours", timeout=5) as response:
        tour_id = next(t["id"] for t in json.load(response)["tours"] if t["name"] == "Students Tour (Beta)")
    with urllib.request.urlopen(f"{feed}/v1/tours/{tour_id}", timeout=5) as response:
        stops = json.load(response)["stops"]
    site.open(f"/tours/{tour_id.lower()}")
    site.click_link("QR codes to print")
    assert site.heading == "QR Codes: Students Tour (Beta)"
    cards = site.browser.find_elements(By.CSS_SELECTOR, ".qr-card")
    assert len(cards) == len(stops) + 1
    assert f"1. {stops[0]['name']}" in cards[1].text and "stop 1" in cards[1].text
    svgs = [card.find_element(By.TAG_NAME, "svg").get_attribute("outerHTML") for card in cards]
    assert decode_svg(svgs[0]) == f"{feed}/v1/tours/{tour_id.upper()}?src=qr"
    assert decode_svg(svgs[-1]) == f"{feed}/v1/pois/{stops[-1]['id'].upper()}/page?src=qr"
    with urllib.request.urlopen(decode_svg(svgs[1]), timeout=5) as response:
        assert stops[0]["name"] in response.read().decode(), "a stop's code opens its page on the feed"


def test_a_tours_cover_duration_colour_and_route_drawn_on_the_map_reach_the_feed(site):
    """Issue 47: the route is drawn by clicking on the tour's map, kept by Save, drawn in the tour's colour, and the feed
    answers it as GeoJSON with the walking distance along it."""
    name = unique("Route walk")
    tour = site.create_tour(name)
    site.add_poi(tour, "Route start", "34.2261", "-77.8767")
    site.add_poi(tour, "Route end", "34.2277", "-77.8736")
    site.open(f"/tours/{tour}")
    # Refused as typed: minutes that are not a number, a route that is not GeoJSON, a cover without its alt text.
    site.fill("Estimated duration (minutes)", "about an hour")
    site.fill("Route", "[[1, 2]")
    site.click_button("Save")
    assert "Estimated duration must be whole minutes" in site.error_for("Estimated duration (minutes)")
    assert "Route must be GeoJSON" in site.error_for("Route")
    site.fill("Estimated duration (minutes)", "35")
    site.fill("Route", "")
    site.fill("Cover picture", "https://uncw.edu/cover.jpg")
    site.fill("Colour", "#C0392B")
    site.click_button("Save")
    assert site.error_for("Cover picture shows") == "Say what the cover picture shows, for visitors who cannot see it"
    site.fill("Cover picture shows", "The clock tower at dusk")
    site.click_button("Save")
    assert "Saved." in site.text, site.text
    assert site.value("Colour") == "#c0392b", "stored lower-case"

    # Drawing: three clicks on the map with "Draw the route" ticked make a LineString of three points.
    assert site.value("Route") == ""
    site.browser.find_element(By.ID, "draw-route").click()
    canvas = site.browser.find_element(By.CSS_SELECTOR, ".map-box[data-map=tour] .map-canvas")
    for dx, dy in [(-120, 60), (0, -40), (120, -60)]:
        ActionChains(site.browser).move_to_element_with_offset(canvas, dx, dy).click().perform()
    drawn = eventually(lambda: site.value("Route"), timeout=5)
    line = json.loads(drawn)
    assert line["type"] == "LineString" and len(line["coordinates"]) == 3, drawn
    site.browser.find_element(By.ID, "undo-route-point").click()
    assert len(json.loads(site.value("Route"))["coordinates"]) == 2
    ActionChains(site.browser).move_to_element_with_offset(canvas, 120, -60).click().perform()
    drawn = site.value("Route")
    site.click_button("Save")
    assert "Saved." in site.text, site.text
    assert json.loads(site.value("Route")) == json.loads(drawn)
    # The saved route is on the map in the tour's colour; the straight lines between stops are not.
    path = site.browser.find_element(By.CSS_SELECTOR, ".map-canvas path.map-route-line")
    assert path.get_attribute("stroke") == "#c0392b"
    assert not site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas path.map-route")

    site.click_button("Publish")
    assert "Published" in site.text, site.text
    detail_url = f"{site.suite.feed_url}/v1/tours/{tour}"
    detail = eventually(lambda: (lambda r: r.json() if r.status_code == 200 else None)(requests.get(detail_url, timeout=5)), timeout=10)
    assert detail["route"] == json.loads(drawn)
    assert detail["color"] == "#c0392b" and detail["estimatedMinutes"] == 35
    assert detail["coverImage"] == "https://uncw.edu/cover.jpg" and detail["coverImageAlt"] == "The clock tower at dusk"
    # The walking distance is along the drawn route (great-circle legs, as the feed measures), not between the stops.

    def metres(a, b):
        (lon1, lat1), (lon2, lat2) = a, b
        p1, p2 = math.radians(lat1), math.radians(lat2)
        h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
        return 2 * 6371008.8 * math.asin(math.sqrt(h))
    coordinates = detail["route"]["coordinates"]
    along = sum(metres(a, b) for a, b in zip(coordinates, coordinates[1:]))
    assert abs(detail["walkingDistanceMeters"] - along) < 0.5, (detail["walkingDistanceMeters"], along)
    listed = [t for t in feed_tours(site.suite) if t["id"].lower() == tour.lower()]
    assert listed and listed[0]["color"] == "#c0392b" and "route" not in listed[0]
    # History shows a route by its size, not its GeoJSON.
    site.open(f"/tours/{tour}/history")
    assert "3 points, " in site.text and "LineString" not in site.text, site.text
