"""Manage Point of Interest, Manage Multimedia Links, Preview POI, categories and places on their own."""
import json
import re
import urllib.error
import urllib.request
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from adminsite import eventually, site  # noqa: F401 (fixture)


def unique(name: str) -> str:
    return f"{name} {uuid.uuid4().hex[:6]}"


def test_add_edit_and_delete_a_poi_with_a_refused_latitude(site):
    tour = site.create_tour(unique("POI tour"))
    site.click_link("Add New POI")
    assert site.heading == "Manage Point of Interest"
    assert "Coordinates" in site.text
    site.fill("Name", "Randall Library")
    site.fill("Latitude", "95")
    site.fill("Longitude", "-77.8736")
    site.fill("Description", "Typed before the mistake")
    site.click_button("Save")
    assert site.error_for("Latitude") == "Latitude must be between -90 and 90"
    assert site.value("Name") == "Randall Library", "typed values are kept"
    assert site.value("Description") == "Typed before the mistake"
    assert site.value("Latitude") == "95"

    site.fill("Latitude", "north")
    site.click_button("Save")
    assert site.error_for("Latitude") == "Latitude must be a number between -90 and 90"

    site.fill("Latitude", "34.2275")
    site.click_button("Save")
    assert "Created." in site.text
    assert site.heading == "Manage Point of Interest"
    site.fill("Description", "The library, open late.")
    site.fill("Buildings or landmarks", "Randall Library\nLearning Commons")
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.value("Description") == "The library, open late."

    site.open(f"/tours/{tour}")
    assert "Randall Library" in site.text
    site.click_in_row("Randall Library", "Delete")
    assert "Are you sure you want to delete?" in site.text
    assert "taken out of the tours" in site.text
    site.click_button("Delete")
    assert site.heading == "Manage Tour"
    assert "Deleted." in site.text
    assert "Randall Library" not in site.browser.find_element(By.TAG_NAME, "main").text


def test_multimedia_links_add_refuse_edit_delete(site):
    tour = site.create_tour(unique("Links tour"))
    poi = site.add_poi(tour, "CIS Annex", "34.2262", "-77.8718")
    site.click_link("Manage Multimedia Links")
    assert site.heading == "Manage Point of Interest - Multimedia Links"
    site.fill("Link Name", "Department of Computer Science")
    site.fill("Media Type", "Web Page")
    site.fill("URL", "http://www.uncw.edu/csc")
    site.click_button("Save")
    assert "Links saved." in site.text
    assert "Department of Computer Science" in site.row("Department of Computer Science").text

    site.fill("Link Name", "Bad link")
    site.fill("Media Type", "Video")
    site.fill("URL", "javascript:alert(1)")
    site.click_button("Save")
    assert site.error_for("URL") == "URL must be an http or https URL"
    assert site.value("Link Name") == "Bad link"

    site.fill("URL", "http://www.youtube.com/watch?v=ayPqZKqu80k")
    site.click_button("Save")
    # Videos are listed under "Multimedia Links", pages under "Related Links", as in the original screens.
    tables = site.browser.find_elements(By.CSS_SELECTOR, "main table")
    assert "Department of Computer Science" in tables[0].text and "Bad link" in tables[1].text

    site.click_in_row("Bad link", "Edit")
    site.fill("Link Name", "Chancellor's introduction")
    site.click_button("Save")
    assert "Chancellor's introduction" in site.text and "Bad link" not in site.text

    site.click_in_row("Chancellor's introduction", "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert "Chancellor's introduction" not in site.text
    assert "Department of Computer Science" in site.text
    site.open(f"/pois/{poi}/preview")
    assert "Department of Computer Science" in site.text


def test_preview_shows_the_poi_as_the_phone_will(site):
    tour = site.create_tour(unique("Preview tour"))
    poi = site.add_poi(tour, "Preview Hall", "34.2262", "-77.8718", description="Home of the preview.")
    site.open(f"/pois/{poi}?tour={tour}")
    site.click_link("Preview POI")
    assert site.heading == "Preview POI"
    phone = site.browser.find_element(By.CSS_SELECTOR, ".phone")
    assert "Preview Hall" in phone.text
    assert "Home of the preview." in phone.text
    # The way back keeps the tour.
    site.click_link("Manage Tour")
    assert site.heading == "Manage Tour"


def test_categories_form_a_tree_that_pois_are_filed_under(site):
    top = unique("Shop")
    site.open("/categories")
    site.fill("Name", top)
    site.click_button("Save", index=-1)
    assert top in site.text
    site.fill("Name", "Fashion")
    site.fill("Parent", top)
    site.click_button("Save", index=-1)
    assert f"{top}/Fashion" in site.text
    site.fill("Name", "Bad/Name")
    site.click_button("Save", index=-1)
    assert site.error_for("Name") == 'Category name must not contain "/" (it separates the levels of a path)'

    tour = site.create_tour(unique("Shops"))
    poi = site.add_poi(tour, "Bank Fashion", "53.7965", "-1.5426")
    # One way to write a path: as the categories page and import files write it.
    site.fill("Category", f"{top}/Fashion")
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.value("Category") == f"{top}/Fashion"
    site.open("/categories")
    assert site.row(f"{top}/Fashion").find_elements(By.TAG_NAME, "td")[2].text == "1"
    # The parent's count includes its sub-categories' POIs.
    top_row = [row for row in site.browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")
               if row.find_elements(By.TAG_NAME, "td")[1].text == top]
    assert len(top_row) == 1 and top_row[0].find_elements(By.TAG_NAME, "td")[2].text == "1"
    site.open(f"/pois/{poi}")


def test_the_poi_list_searches_names_ignoring_case_and_accents_and_filters_by_category(site):
    tag = uuid.uuid4().hex[:6]
    tour = site.create_tour(unique("Search"))
    site.add_poi(tour, f"Café Nova {tag}", "34.2261", "-77.8767")
    site.add_poi(tour, f"Cafeteria West {tag}", "34.2262", "-77.8768")
    site.add_poi(tour, f"Library {tag}", "34.2263", "-77.8769")
    site.open("/pois")
    site.fill("Search by name", f"cafe {tag}")
    site.click_button("Search")
    names = [row.find_elements(By.TAG_NAME, "td")[0].text for row in site.browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")]
    assert sorted(names) == sorted([f"Café Nova {tag}", f"Cafeteria West {tag}"])
    assert "2 POIs found." in site.text
    assert site.value("Search by name") == f"cafe {tag}"
    site.fill("Search by name", f"nothing-called-this {tag}")
    site.click_button("Search")
    assert "No POI matches." in site.text
    site.click_link("Show all")
    assert f"Library {tag}" in site.text


def test_a_poi_in_several_categories_is_listed_and_counted_under_each(site):
    eat, see = unique("Eat"), unique("See")
    site.open("/categories")
    for name, parent in ((eat, ""), ("Cafés", eat), ("Bars", eat), (see, "")):
        site.fill("Name", name)
        if parent:
            site.fill("Parent", parent)
        site.click_button("Save", index=-1)
        assert name in site.text
    tour = site.create_tour(unique("Several"))
    poi = site.add_poi(tour, f"Musée Café {eat}", "34.2261", "-77.8767")
    site.fill("Category", f"{eat}/Cafés")
    also = Select(site.field("Also in"))
    also.select_by_value(f"{eat}/Bars")
    also.select_by_value(see)
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.value("Category") == f"{eat}/Cafés"
    assert sorted(o.get_attribute("value") for o in Select(site.field("Also in")).all_selected_options) == sorted([f"{eat}/Bars", see])

    site.open("/pois")
    assert f"{eat}/Cafés, {eat}/Bars, {see}" in site.row(f"Musée Café {eat}").text
    site.fill("Category", see)
    site.click_button("Search")
    assert "1 POI found." in site.text and f"Musée Café {eat}" in site.text

    # Counted once under each category it is in or under: the parent holding two of them counts it once.
    site.open("/categories")
    counts = {row.find_elements(By.TAG_NAME, "td")[1].text: row.find_elements(By.TAG_NAME, "td")[2].text
              for row in site.browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")}
    assert [counts[p] for p in (eat, f"{eat}/Cafés", f"{eat}/Bars", see)] == ["1", "1", "1", "1"]

    # No longer in a category once it is unselected.
    site.open(f"/pois/{poi}")
    Select(site.field("Also in")).deselect_by_value(see)
    site.click_button("Save")
    assert [o.get_attribute("value") for o in Select(site.field("Also in")).all_selected_options] == [f"{eat}/Bars"]


def feed_status(site, poi_id: str) -> int:
    try:
        with urllib.request.urlopen(f"{site.suite.feed_url}/v1/pois/{poi_id}", timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def browsed_names(site) -> list[str]:
    names, cursor = [], None
    while True:
        query = "limit=200" + (f"&cursor={cursor}" if cursor else "")
        with urllib.request.urlopen(f"{site.suite.feed_url}/v1/pois?{query}", timeout=5) as response:
            page = json.load(response)
        names += [poi["name"] for poi in page["pois"]]
        cursor = page.get("nextCursor")
        if not cursor:
            return names


def test_a_place_published_on_its_own_is_on_the_feed_without_a_tour_until_unpublished(site):
    name = unique("Parking Deck")
    site.open("/pois")
    site.click_link("Create New POI")
    site.fill("Name", name)
    site.fill("Latitude", "34.2240")
    site.fill("Longitude", "-77.8700")
    site.click_button("Save")
    assert "Created." in site.text
    poi = re.search(r"[0-9a-f-]{36}", site.path).group(0)
    assert "Not published as a place" in site.text
    assert feed_status(site, poi) == 404

    site.click_button("Publish as a place")
    assert "Published as a place" in site.text
    assert eventually(lambda: feed_status(site, poi) == 200)
    assert name in browsed_names(site)

    # Published: an edit waits as a draft until published, as a tour's stop does.
    site.fill("Summary", "Open to visitors after 5 pm.")
    site.click_button("Save")
    assert "Saved." in site.text
    assert site.browser.find_elements(By.CSS_SELECTOR, ".notice.drafts")
    site.click_button("Publish changes")
    assert eventually(lambda: feed_summary(site, poi) == "Open to visitors after 5 pm.")

    site.click_button("Unpublish place")
    assert "Unpublished as a place" in site.text
    assert eventually(lambda: feed_status(site, poi) == 404)
    assert name not in browsed_names(site)


def feed_summary(site, poi_id: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{site.suite.feed_url}/v1/pois/{poi_id}", timeout=5) as response:
            return json.load(response).get("summary")
    except urllib.error.HTTPError:
        return None


def test_opening_hours_are_refused_where_wrong_and_shown_as_a_week(site):
    tour = site.create_tour(unique("Hours tour"))
    poi = site.add_poi(tour, "Randall Library", "34.2275", "-77.8736")
    site.open(f"/pois/{poi}?tour={tour}")
    site.fill("Opening hours", "Mo-Fx 08:00-17:00")
    site.click_button("Save")
    assert '"Fx" is not a day' in site.error_for("Opening hours")
    assert site.value("Opening hours") == "Mo-Fx 08:00-17:00", "the typed value is kept to correct"

    site.fill("Opening hours", "Mo-Fr 08:00-22:00; Sa 10:00-18:00; Su off; PH off")
    Select(site.field("Price level")).select_by_visible_text("Free")
    site.fill("Accessibility", "Step-free entrance; lifts to every floor.")
    site.click_button("Save")
    assert "Saved." in site.text
    week = site.browser.find_element(By.CSS_SELECTOR, "table.hours").text
    assert "Monday 08:00-22:00" in week and "Sunday Closed" in week and "Public holidays Closed" in week
    assert site.value("Accessibility") == "Step-free entrance; lifts to every floor."
