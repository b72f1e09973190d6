"""Drafts and publishing: an edit to a published tour or to a stop of one stays off the phones' feed until
someone presses Publish changes; publishing is refused for a tour without stops and asks before a far stop."""
import json
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from selenium.webdriver.common.by import By

from adminsite import feed_tours, eventually, site  # noqa: F401 (fixture)
from conftest import ADMIN_SITE_TIME_ZONE


def feed_tour(suite, tour_id: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{suite.feed_url}/v1/tours/{tour_id}", timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def draft_banner(site) -> bool:
    return bool(site.browser.find_elements(By.CSS_SELECTOR, ".notice.drafts"))


def feed_description(suite, poi_id: str) -> str | None:
    with urllib.request.urlopen(f"{suite.feed_url}/v1/pois/{poi_id}", timeout=5) as response:
        return json.load(response).get("description")


def test_a_draft_stays_off_the_feed_until_published(site):
    name = f"Open Day {uuid.uuid4().hex[:6]}"
    tour = site.create_tour(name, purpose="Meet the departments.")
    poi = site.add_poi(tour, "Draft Hall", "34.2261", "-77.8767", description="Lectures here.")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    assert "Published" in site.text
    assert eventually(lambda: (feed_tour(site.suite, tour) or {}).get("name") == name)

    # Half-finished edits: the tour's name and its stop's description.
    site.fill("Tour's Name", name + " (new)")
    site.click_button("Save")
    assert "Saved." in site.text
    assert draft_banner(site)
    site.open(f"/pois/{poi}?tour={tour}")
    site.fill("Description", "Lectures and labs here.")
    site.click_button("Save")
    assert "Saved." in site.text
    assert draft_banner(site)
    assert site.value("Description") == "Lectures and labs here.", "the editor keeps seeing the draft"

    # A later published change reaches the feed, so by the time it has, the drafts would have too.
    other = site.create_tour(f"Marker {uuid.uuid4().hex[:6]}")
    site.add_poi(other, "Marker stop", "34.2262", "-77.8768")
    site.open(f"/tours/{other}")
    site.click_button("Publish")
    assert eventually(lambda: feed_tour(site.suite, other) is not None)
    assert feed_tour(site.suite, tour)["name"] == name, "the feed shows the published version"
    assert feed_description(site.suite, poi) == "Lectures here."

    site.open(f"/tours/{tour}")
    assert "1 stop" in site.text and draft_banner(site)
    site.click_button("Publish changes")
    assert not draft_banner(site)
    assert eventually(lambda: (feed_tour(site.suite, tour) or {}).get("name") == name + " (new)")
    assert eventually(lambda: feed_description(site.suite, poi) == "Lectures and labs here.")


def test_discarding_a_draft_brings_the_published_version_back_into_the_form(site):
    name = f"Discard {uuid.uuid4().hex[:6]}"
    tour = site.create_tour(name)
    site.add_poi(tour, "Discard Hall", "34.2261", "-77.8767")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    site.fill("Tour's Name", "A name nobody should see")
    site.click_button("Save")
    assert site.value("Tour's Name") == "A name nobody should see"
    site.click_button("Discard changes to the tour")
    assert not draft_banner(site)
    assert site.value("Tour's Name") == name
    assert all(t["name"] != "A name nobody should see" for t in feed_tours(site.suite))


def test_publishing_is_refused_without_stops_and_asks_before_a_far_stop(site):
    tour = site.create_tour(f"Empty {uuid.uuid4().hex[:6]}")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    assert "Not published." in site.text and "at least one stop" in site.text
    assert "Draft" in site.text

    site.add_poi(tour, "Near A", "34.2261", "-77.8767")
    site.add_poi(tour, "Near B", "34.2265", "-77.8771")
    # The minus sign left out: 12 000 km away.
    far = site.add_poi(tour, "Forgot the minus", "34.2270", "77.8770")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    assert "Not published." in site.text and "Forgot the minus is" in site.text, site.text
    assert feed_tour(site.suite, tour) is None
    site.click_button("Publish anyway")
    assert "Published" in site.text
    assert eventually(lambda: feed_tour(site.suite, tour) is not None)
    assert far.upper() in [stop["id"].upper() for stop in feed_tour(site.suite, tour)["stops"]]


def type_local_time(site, seconds_ahead: int) -> str:
    """Types into When the site's wall-clock time `seconds_ahead` from now, as staff read it off the site's clocks
    (the admin reads When in SITE_TIME_ZONE, not in the browser's zone, which is UTC here)."""
    when = datetime.now(ZoneInfo(ADMIN_SITE_TIME_ZONE)) + timedelta(seconds=seconds_ahead)
    site.browser.execute_script("arguments[0].value = arguments[1]", site.field("When"), when.strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{when:%Y-%m-%d %H:%M} {when.tzname()}"


def test_a_scheduled_publish_puts_the_tour_on_the_feed_at_its_time(site):
    name = f"Scheduled {uuid.uuid4().hex[:6]}"
    tour = site.create_tour(name)
    site.add_poi(tour, "Scheduled Hall", "34.2261", "-77.8767")
    site.open(f"/tours/{tour}")
    type_local_time(site, 6)
    site.click_button("Schedule")
    assert "Scheduled:" in site.text, site.text
    assert "Scheduled to publish at" in site.text and "admin@example.edu" in site.text
    assert feed_tour(site.suite, tour) is None, "not before its time"

    assert eventually(lambda: feed_tour(site.suite, tour) is not None, timeout=20), "published by catalog at its time"
    site.open(f"/tours/{tour}")
    assert "Scheduled to publish" not in site.text
    site.click_link("History")
    assert "schedule (set by admin@example.edu)" in site.text


def test_a_schedule_can_be_cancelled_and_a_time_in_the_past_is_refused(site):
    tour = site.create_tour(f"Cancelled {uuid.uuid4().hex[:6]}")
    site.add_poi(tour, "Cancelled Hall", "34.2261", "-77.8767")
    site.open(f"/tours/{tour}")
    type_local_time(site, -3600)
    site.click_button("Schedule")
    assert site.error_for("When") == "Choose a time in the future", site.text
    # Issue 48: the refusal is told in the schedule's own box, above When (not "below" over the tour's form).
    alerts = site.browser.find_elements(By.CSS_SELECTOR, ".error-summary")
    assert len(alerts) == 1 and "Not scheduled" in alerts[0].text, [alert.text for alert in alerts]
    assert alerts[0] in site.browser.find_elements(By.CSS_SELECTOR, "section.schedule .error-summary")
    assert alerts[0].rect["y"] < site.field("When").rect["y"]
    # Typed and shown in the site's zone (SITE_TIME_ZONE), the zone named; the hint says which zone When is in.
    assert ADMIN_SITE_TIME_ZONE in site.browser.find_element(By.CSS_SELECTOR, "section.schedule").text
    typed = type_local_time(site, 3600)
    site.click_button("Schedule")
    assert f"Scheduled to publish at {typed} (set by" in site.text, (typed, site.text)
    site.click_button("Cancel schedule")
    assert "Schedule cancelled." in site.text and "Scheduled to publish at" not in site.text


def test_the_preview_shows_the_tour_as_phones_will_once_published(site):
    """The preview applies the drafts (tour and stop) and shows each stop's page as the feed renders it, in a
    frame the admin allows only itself; the feed keeps the published version meanwhile."""
    name = f"Preview {uuid.uuid4().hex[:6]}"
    tour = site.create_tour(name, purpose="See it first.")
    first = site.add_poi(tour, "Preview Hall", "34.2261", "-77.8767", description="Lectures here.")
    site.add_poi(tour, "Preview Lawn", "34.2270", "-77.8760")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    assert eventually(lambda: (feed_tour(site.suite, tour) or {}).get("name") == name)
    site.open(f"/pois/{first}?tour={tour}")
    site.fill("Description", "Lectures and <labs> here.")
    site.click_button("Save")
    assert draft_banner(site)

    site.open(f"/tours/{tour}")
    site.click_link("Preview as phones will show it")
    assert site.heading == f"Preview: {name}"
    assert "once you publish the changes" in site.text
    assert "2 stops" in site.text
    frames = site.browser.find_elements(By.CSS_SELECTOR, "iframe.phone-page")
    assert len(frames) == 2
    site.browser.switch_to.frame(frames[0])
    try:
        assert site.browser.find_element(By.TAG_NAME, "h1").text == "Preview Hall"
        assert "Lectures and <labs> here." in site.browser.find_element(By.TAG_NAME, "body").text, "the draft, escaped"
        assert name in site.browser.find_element(By.TAG_NAME, "body").text, "listed under this tour"
    finally:
        site.browser.switch_to.default_content()

    # The frame's page is the feed's own: the same bytes the feed serves for the published version.
    session = site.http()
    framed = session.get(frames[0].get_attribute("src"), timeout=10)
    assert framed.status_code == 200 and "frame-ancestors 'self'" in framed.headers["Content-Security-Policy"]
    assert framed.headers["X-Frame-Options"] == "SAMEORIGIN"
    with urllib.request.urlopen(f"{site.suite.feed_url}/v1/pois/{first}/page", timeout=5) as response:
        feed_page = response.read().decode()
    assert feed_page == framed.text.replace("Lectures and &lt;labs&gt; here.", "Lectures here.")
    # Admin pages themselves still refuse to be framed; a POI not on the tour has no preview.
    assert session.get(f"{site.suite.admin_url}/tours/{tour}", timeout=10).headers["X-Frame-Options"] == "DENY"
    assert session.get(f"{site.suite.admin_url}/tours/{tour}/preview/stops/{uuid.uuid4()}", timeout=10).status_code == 404
    assert feed_description(site.suite, first) == "Lectures here.", "the feed still shows the published version"
