"""Featured items in the admin (issue 18, item 5): Add Featured Item without an image description refused beside the
field, a calendar event featured and published onto the feed's /v1/featured with its own title, Delete taking it off."""
import json
import re
import urllib.request
import uuid

from selenium.webdriver.support.ui import Select

from adminsite import eventually, site  # noqa: F401 (fixture)


def feed_featured(site) -> list[dict]:
    with urllib.request.urlopen(f"{site.suite.feed_url}/v1/featured", timeout=5) as response:
        return json.load(response)["featured"]


def test_a_featured_item_is_added_refused_where_wrong_published_and_deleted(site):
    title = f"Come to Open Day {uuid.uuid4().hex[:6]}"
    site.open("/featured")
    assert site.heading == "Featured"
    site.click_link("Add Featured Item")
    assert site.heading == "Add Featured Item"
    Select(site.field("Features")).select_by_visible_text("Event: Spring Open Day")
    site.fill("Title", title)
    site.fill("Image link", "https://images.example.edu/open-day-2.jpg")
    site.fill("Image description", "   ")
    site.click_button("Save")
    assert site.error_for("Image description") == "Image description is required", site.text[:1500]
    assert site.value("Title") == title, "typed values are kept"

    site.fill("Image description", "Families at the welcome tent")
    site.click_button("Save")
    assert "Created." in site.text and site.heading == "Edit Featured Item"
    assert re.search(r"/featured/[0-9a-f-]{36}", site.path)
    assert title not in [item["title"] for item in feed_featured(site)]

    site.click_button("Publish")
    assert "Published: the item is on the phones' home screen." in site.text
    assert eventually(lambda: title in [item["title"] for item in feed_featured(site)])
    item = next(item for item in feed_featured(site) if item["title"] == title)
    assert item["kind"] == "event" and item["imageAlt"] == "Families at the welcome tent"

    site.open("/featured")
    site.click_in_row(title, "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert "Deleted." in site.text
    assert eventually(lambda: title not in [item["title"] for item in feed_featured(site)])
