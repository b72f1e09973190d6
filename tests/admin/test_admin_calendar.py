"""The calendar in the admin (issue 18): Create New Event with a mistake refused beside its field, a weekly event with
skipped dates, Publish putting it in the feed's calendar and calendar.ics, Unpublish and Delete taking it out."""
import json
import re
import urllib.request
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from adminsite import eventually, site  # noqa: F401 (fixture)


def feed_titles(site, days: str = "from=2030-01-01&to=2030-01-31") -> list[str]:
    with urllib.request.urlopen(f"{site.suite.feed_url}/v1/calendar?{days}", timeout=5) as response:
        return [occurrence["title"] for occurrence in json.load(response)["occurrences"]]


def feed_ics(site) -> str:
    with urllib.request.urlopen(f"{site.suite.feed_url}/v1/calendar.ics", timeout=5) as response:
        return response.read().decode()


def test_an_event_is_made_refused_where_wrong_published_and_deleted(site):
    title = f"Campus visit {uuid.uuid4().hex[:6]}"
    site.open("/calendar")
    assert site.heading == "Calendar"
    site.click_link("Create New Event")
    assert site.heading == "Create New Event"
    site.fill("Title", title)
    site.fill("Starts", "2030-01-01T10:00")
    site.fill("Ends", "2030-01-01T09:00")
    Select(site.field("Time zone")).select_by_value("America/New_York")
    site.fill("Place (text)", "Admissions, Hoggard Hall")
    site.fill("Registration link", "https://uncw.edu/visit/register")
    Select(site.field("Repeats")).select_by_value("weekly")
    site.browser.find_element(By.ID, "field-byDay-TU").click()
    site.browser.find_element(By.ID, "field-byDay-TH").click()
    site.fill("Until", "2030-01-31")
    site.fill("Skipped dates", "2030-01-08T10:00")
    site.click_button("Save")
    assert site.error_for("Ends") == "Ends must not be before Starts", site.text[:1500]
    assert site.value("Title") == title, "typed values are kept"

    site.fill("Ends", "2030-01-01T11:30")
    site.click_button("Save")
    assert "Created." in site.text and site.heading == "Manage Event"
    event_id = re.search(r"[0-9a-f-]{36}", site.path).group(0)
    occurrences = site.browser.find_elements(By.CSS_SELECTOR, "ul.occurrences li")
    assert [li.text for li in occurrences][:3] == ["Tue 2030-01-01 10:00", "Thu 2030-01-03 10:00", "Thu 2030-01-10 10:00"]
    assert "Draft:" in site.text
    assert title not in feed_titles(site)

    site.click_button("Publish")
    assert "Published: the event is in the phones' calendar" in site.text
    # Tuesdays and Thursdays of January 2030 (from the 1st, a Tuesday, to the 31st) but the skipped 8th: 9 occurrences.
    assert eventually(lambda: feed_titles(site).count(title) == 9)
    assert f"UID:{event_id}@itour" in feed_ics(site)

    site.open("/calendar")
    site.click_in_row(title, "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert "Deleted." in site.text
    assert eventually(lambda: title not in feed_titles(site))
