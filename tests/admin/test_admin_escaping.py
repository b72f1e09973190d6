"""A name like <script>alert(1)</script> is shown as text on every page it appears on, and never runs."""
import urllib.request
import json

from selenium.webdriver.common.by import By

from adminsite import eventually, site  # noqa: F401 (fixture)

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def assert_shown_as_text(site, path: str) -> None:
    site.open(path)
    assert site.alert_text() is None, f"{path}: a script ran"
    assert SCRIPT in site.browser.find_element(By.TAG_NAME, "body").text + "".join(
        element.get_attribute("value") or "" for element in site.browser.find_elements(By.CSS_SELECTOR, "input, textarea")), path
    source = site.http().get(site.base + path).text
    assert SCRIPT not in source, f"{path}: the name is in the page unescaped"
    assert ESCAPED in source, path


def test_a_script_name_is_text_everywhere(site):
    tour = site.create_tour(SCRIPT, purpose=SCRIPT)
    assert site.alert_text() is None
    poi = site.add_poi(tour, SCRIPT, "34.2262", "-77.8718", description=SCRIPT)
    site.click_link("Manage Multimedia Links")
    site.fill("Link Name", SCRIPT)
    site.fill("URL", "https://example.edu/?q=<script>")
    site.click_button("Save")
    assert site.alert_text() is None
    # Refused input is echoed back escaped too.
    site.fill("Link Name", SCRIPT)
    site.fill("URL", "javascript:alert(1)")
    site.click_button("Save")
    assert site.alert_text() is None
    assert SCRIPT in site.value("Link Name")

    for path in ["/tours", f"/tours/{tour}", f"/tours/{tour}/delete", f"/pois/{poi}", f"/pois/{poi}?tour={tour}", f"/pois/{poi}/links",
                 f"/pois/{poi}/links/0/edit", f"/pois/{poi}/links/0/delete", f"/pois/{poi}/preview", f"/pois/{poi}/delete", "/pois"]:
        assert_shown_as_text(site, path)
    # On the map the name is a label's text and a pin's title, not markup.
    site.open(f"/tours/{tour}")
    labels = [element.text for element in site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas .map-label")]
    titles = [element.get_attribute("title") for element in site.browser.find_elements(By.CSS_SELECTOR, ".map-canvas .map-stop")]
    assert SCRIPT in labels and f"1. {SCRIPT}" in titles
    assert site.alert_text() is None

    site.click_button("Publish")
    assert eventually(lambda: any(t["name"] == SCRIPT for t in json.load(urllib.request.urlopen(site.suite.feed_url + "/v1/tours"))["tours"]))
    # A user's email is no way in either.
    site.open("/users")
    site.fill("Email", SCRIPT + "@example.edu")
    site.fill("Password", "whatever-long")
    site.click_button("Save", index=-1)
    assert site.alert_text() is None
    assert site.error_for("Email") == "Email must be an address like name@example.edu"
    assert SCRIPT in site.value("Email")
