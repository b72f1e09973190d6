"""The people directory in the admin (issue 18, item 4): Add Person with a mistake refused beside its field, an office
chosen from the POIs, Publish putting the person in the feed's directory with the office's name, an edit in two tabs
refused as a conflict, Unpublish and Delete taking them out."""
import json
import re
import urllib.parse
import urllib.request
import uuid

from selenium.webdriver.support.ui import Select

from adminsite import eventually, site  # noqa: F401 (fixture)


def feed_people(site, query: str = "") -> list[dict]:
    with urllib.request.urlopen(f"{site.suite.feed_url}/v1/people?limit=500{query}", timeout=5) as response:
        return json.load(response)["people"]


def test_a_person_is_added_refused_where_wrong_published_edited_and_deleted(site):
    name = f"Casey Hart {uuid.uuid4().hex[:6]}"
    site.open("/people")
    assert site.heading == "People"
    site.click_link("Add Person")
    assert site.heading == "Add Person"
    site.fill("Name", name)
    site.fill("Role", "Admissions Counselor")
    site.fill("Department", "Office of Admissions")
    site.fill("Interests", "Campus tours\n<script>alert(1)</script>")
    # type=email would stop the browser sending a bad address; the server's check is what is tested here.
    site.browser.execute_script("document.getElementById('field-email').type = 'text'")
    site.fill("Email", "not an address")
    office = Select(site.field("Office"))
    office.select_by_visible_text("Fisher Student Center")
    site.click_button("Save")
    assert site.error_for("Email") == "Email must be an address such as name@example.edu", site.text[:1500]
    assert site.value("Name") == name, "typed values are kept"

    site.fill("Email", "hart@example.edu")
    site.click_button("Save")
    assert "Created." in site.text and site.heading == "Edit Person"
    person_id = re.search(r"[0-9a-f-]{36}", site.path).group(0)
    assert "Draft:" in site.text
    assert name not in [p["name"] for p in feed_people(site)]

    site.click_button("Publish")
    assert "Published: the person is in the phones' directory." in site.text
    assert eventually(lambda: name in [p["name"] for p in feed_people(site)])
    person = next(p for p in feed_people(site) if p["id"].lower() == person_id)
    assert person["office"]["name"] == "Fisher Student Center" and person["interests"] == ["Campus tours", "<script>alert(1)</script>"]
    assert [p["name"] for p in feed_people(site, "&q=" + urllib.parse.quote(name))] == [name]

    # Two tabs: the second saves over a version the first already changed, and is refused with the newer one shown.
    first = site.browser.current_window_handle
    site.browser.switch_to.new_window("tab")
    site.open(f"/people/{person_id}")
    site.browser.switch_to.window(first)
    site.fill("Role", "Senior Admissions Counselor")
    site.click_button("Save")
    assert "Saved." in site.text
    site.browser.switch_to.window(site.browser.window_handles[-1])
    site.fill("Role", "Dean")
    site.click_button("Save")
    assert "someone else changed this meanwhile" in site.text
    assert site.value("Role") == "Senior Admissions Counselor"
    site.browser.close()
    site.browser.switch_to.window(first)
    assert eventually(lambda: next(p for p in feed_people(site) if p["id"].lower() == person_id)["role"] == "Senior Admissions Counselor")

    site.open("/people")
    site.click_in_row(name, "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert "Deleted." in site.text
    assert eventually(lambda: name not in [p["name"] for p in feed_people(site)])
