"""Forms safe to repeat: Back + Save, a double click and a retried request send the same command once."""
import re
import uuid

from selenium.webdriver.common.by import By

from adminsite import UUID_RE, site  # noqa: F401 (fixture)


def unique(name: str) -> str:
    return f"{name} {uuid.uuid4().hex[:6]}"


def tours_named(site, name: str) -> int:
    site.open("/tours")
    return sum(1 for row in site.browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")
               if row.find_elements(By.TAG_NAME, "td") and row.find_elements(By.TAG_NAME, "td")[1].text.strip() == name)


def test_back_and_save_after_creating_a_tour_makes_no_second_tour(site):
    name = unique("Open Day 2026")
    site.open("/tours/new")
    site.fill("Tour's Name", name)
    site.fill("Tour's Purpose", "Five stops for visiting families.")
    site.click_button("Save")
    assert "Created." in site.text
    first = re.search(UUID_RE, site.path).group(0)

    site.browser.back()
    assert site.heading == "Create New Tour"
    assert site.value("Tour's Name") == name, "the browser restored what was typed"
    site.click_button("Save")
    assert "Already saved" in site.text, site.text
    assert re.search(UUID_RE, site.path).group(0) == first, "the repeat shows the tour the first Save made"
    assert tours_named(site, name) == 1

    # Back again, but the name changed: a different submission, so a second tour.
    site.browser.back()
    site.browser.back()
    assert site.heading == "Create New Tour"
    site.fill("Tour's Name", name + " (second)")
    site.click_button("Save")
    assert "Created." in site.text
    assert re.search(UUID_RE, site.path).group(0) != first
    assert tours_named(site, name) == 1 and tours_named(site, name + " (second)") == 1


def test_back_and_save_after_an_edit_is_already_saved_not_a_conflict(site):
    tour = site.create_tour(unique("Repeat Edit"), purpose="Before")
    site.fill("Tour's Purpose", "After")
    site.click_button("Save")
    assert "Saved." in site.text
    site.browser.back()
    assert site.value("Tour's Purpose") == "After"
    site.click_button("Save")
    assert "Already saved" in site.text, site.text
    assert "changed by someone else" not in site.text
    assert site.value("Tour's Purpose") == "After"
    assert tour in site.path


def test_the_same_form_sent_twice_is_one_command_and_a_form_without_an_id_still_works(site):
    name = unique("Double Click")
    site.open("/tours/new")
    token = site.csrf_token()
    form_id = site.browser.find_element(By.NAME, "formIdRendered").get_attribute("value")
    session = site.http()
    fields = {"csrf_token": token, "formIdRendered": form_id, "name": name, "summary": "", "purpose": "Twice"}
    first = session.post(f"{site.base}/tours", data=fields)
    second = session.post(f"{site.base}/tours", data=fields)
    assert first.status_code == 200 and "Created." in first.text
    assert second.status_code == 200 and "Already saved" in second.text
    assert first.url.split("?")[0] == second.url.split("?")[0], "the repeat shows the tour the first request made"
    assert tours_named(site, name) == 1

    # A script's POST without a form id gets a command of its own each time, as before.
    scripted = {"csrf_token": token, "name": name + " scripted", "summary": "", "purpose": "Script"}
    assert "Created." in session.post(f"{site.base}/tours", data=scripted).text
    assert "Created." in session.post(f"{site.base}/tours", data=scripted).text
    assert tours_named(site, name + " scripted") == 2


def test_two_tabs_conflict_per_field_and_a_stale_stop_move_is_explained_as_one(site):
    tour = site.create_tour(unique("Two Tabs"), purpose="Purpose as it was")
    site.add_poi(tour, "Stop A", "34.2261", "-77.8767")
    site.add_poi(tour, "Stop B", "34.2277", "-77.8759")
    browser = site.browser
    site.open(f"/tours/{tour}")
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    try:
        site.open(f"/tours/{tour}")
        site.fill("Summary", "Summary from the second tab")
        site.fill("Tour's Name", "Name from the second tab")
        site.click_button("Save")
        assert "Saved." in site.text
        browser.close()
    finally:
        browser.switch_to.window(first)

    # The first tab, still on the old version, edits the name (changed in both tabs) and the purpose (only here).
    site.fill("Tour's Name", "Name from the first tab")
    site.fill("Tour's Purpose", "Purpose from the first tab")
    site.click_button("Save")
    conflict = browser.find_element(By.CSS_SELECTOR, ".conflict").text
    assert "by you, in another tab or window" in conflict
    assert "Summary" in conflict and "Tour's Name" in conflict
    marked = browser.find_elements(By.CSS_SELECTOR, ".field.has-error label")
    assert [label.text for label in marked] == ["Tour's Name"], "only the field changed in both tabs is marked"
    assert "Name from the second tab" in site.error_for("Tour's Name")
    assert site.value("Summary") == "Summary from the second tab"
    assert site.value("Tour's Name") == "Name from the first tab"
    assert site.value("Tour's Purpose") == "Purpose from the first tab"
    site.click_button("Save")
    assert "Saved." in site.text
    assert (site.value("Tour's Name"), site.value("Summary"), site.value("Tour's Purpose")) == (
        "Name from the first tab", "Summary from the second tab", "Purpose from the first tab")

    # A stop move from a page older than the tour: explained as a change to the stops, with nothing to "save again".
    browser.switch_to.new_window("tab")
    try:
        site.open(f"/tours/{tour}")
        site.click_labelled("Move down: Stop A")
        assert "Stops saved." in site.text
        browser.close()
    finally:
        browser.switch_to.window(first)
    site.click_labelled("Move down: Stop A")
    conflict = browser.find_element(By.CSS_SELECTOR, ".conflict").text
    assert "Your change to the stops was not made" in conflict and "by you, in another tab or window" in conflict
    assert "Save again" not in conflict and "Changed on both sides" not in conflict
