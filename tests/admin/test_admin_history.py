"""History and revert: every change of a tour or POI with who, when and each field before and after, and a
revert to any version as a new change."""
import uuid

from selenium.webdriver.common.by import By

from adminsite import feed_tours, eventually, site  # noqa: F401 (fixture)


def history_rows(site):
    return site.browser.find_elements(By.CSS_SELECTOR, "table.history tbody tr")


def test_a_tours_history_shows_each_change_and_a_revert_brings_a_version_back_onto_the_feed(site):
    name = f"History {uuid.uuid4().hex[:6]}"
    tour = site.create_tour(name, purpose="First purpose")
    site.add_poi(tour, "History stop", "34.2261", "-77.8767")
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    site.fill("Tour's Name", name + " renamed")
    site.fill("Tour's Purpose", "Second purpose")
    site.click_button("Save")
    assert "Saved." in site.text

    site.click_link("History")
    assert site.heading == f"History of {name} renamed"
    rows = history_rows(site)
    assert [row.find_elements(By.TAG_NAME, "td")[0].text for row in rows] == ["4", "3", "2", "1"]
    newest = rows[0].text
    assert "Edited" in newest and "admin@example.edu" in newest
    assert "First purpose" in newest and "Second purpose" in newest, "each changed field before and after"
    assert "Current" in newest
    assert rows[1].find_elements(By.TAG_NAME, "strong")[0].text == "Published" and "Status" in rows[1].text
    assert "Stops changed" in rows[2].text and "1. History stop" in rows[2].text

    # Back to version 3 (published, one stop, the first name): a new version 5, shown on the feed.
    site.click_button("Revert to version 3")
    assert "Reverted" in site.text, site.text
    assert site.value("Tour's Name") == name
    assert site.value("Tour's Purpose") == "First purpose"
    assert eventually(lambda: any(t["name"] == name for t in feed_tours(site.suite)), timeout=10)
    site.click_link("History")
    rows = history_rows(site)
    assert rows[0].find_elements(By.TAG_NAME, "td")[0].text == "5" and "Reverted" in rows[0].text
    assert "Second purpose" in rows[0].text and "First purpose" in rows[0].text


def test_a_pois_history_and_revert(site):
    tour = site.create_tour(f"POI history {uuid.uuid4().hex[:6]}")
    poi = site.add_poi(tour, "Old Hall", "34.2261", "-77.8767", description="Built in 1961.")
    site.fill("Description", "Rebuilt in 2001.")
    site.click_button("Save")
    assert "Saved." in site.text
    site.click_link("History")
    rows = history_rows(site)
    assert len(rows) == 2 and "Built in 1961." in rows[0].text and "Rebuilt in 2001." in rows[0].text
    site.click_button("Revert to version 1")
    assert "Reverted" in site.text
    assert site.value("Description") == "Built in 1961."
    assert poi in site.path
