"""The admin map: click to place and drag a POI's pin (the form's coordinates follow), no pre-filled
coordinates, and a stop far from the rest flagged."""
import uuid

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from adminsite import site  # noqa: F401 (fixture)


def test_a_new_stop_has_no_coordinates_and_a_click_on_the_map_places_it(site):
    tour = site.create_tour(f"Map {uuid.uuid4().hex[:6]}")
    site.add_poi(tour, "Anchor stop", "34.2261", "-77.8767")
    site.open(f"/tours/{tour}")
    site.click_link("Add New POI")
    assert site.value("Latitude") == "" and site.value("Longitude") == "", "nothing pre-filled"
    canvas = site.browser.find_element(By.CSS_SELECTOR, "fieldset .map-canvas")
    assert len(canvas.find_elements(By.CSS_SELECTOR, ".map-stop")) == 1, "the tour's other stop is shown"

    # A click 60 px right of and 40 px above the middle, where the map opened over the anchor stop.
    ActionChains(site.browser).move_to_element_with_offset(canvas, 60, -40).click().perform()
    latitude, longitude = float(site.value("Latitude")), float(site.value("Longitude"))
    assert 34.2261 < latitude < 34.30 and -77.8767 < longitude < -77.80, (latitude, longitude)
    assert len(canvas.find_elements(By.CSS_SELECTOR, ".map-pin")) == 1

    # Dragging the pin moves the coordinates with it.
    pin = canvas.find_element(By.CSS_SELECTOR, ".map-pin")
    ActionChains(site.browser).click_and_hold(pin).move_by_offset(-30, 30).move_by_offset(-30, 30).release().perform()
    dragged = float(site.value("Latitude")), float(site.value("Longitude"))
    assert dragged[0] < latitude and dragged[1] < longitude, (dragged, latitude, longitude)

    site.fill("Name", "Placed by click")
    site.click_button("Save")
    assert "Created." in site.text, site.text
    assert site.value("Latitude") == f"{dragged[0]:.6f}".rstrip("0") or float(site.value("Latitude")) == round(dragged[0], 6)
    assert float(site.value("Longitude")) == round(dragged[1], 6)


def test_a_stop_with_a_sign_left_out_is_flagged_on_the_tour_and_its_page(site):
    tour = site.create_tour(f"Stray {uuid.uuid4().hex[:6]}")
    site.add_poi(tour, "Near one", "34.2261", "-77.8767")
    site.add_poi(tour, "Near two", "34.2277", "-77.8759")
    stray = site.add_poi(tour, "Sign left out", "34.2275", "77.8736")
    assert "from the middle of" in site.text and "minus sign" in site.text
    site.open(f"/tours/{tour}")
    flagged = [row.text for row in site.browser.find_elements(By.CSS_SELECTOR, "table.stops tbody tr") if "check the coordinates" in row.text]
    assert len(flagged) == 1 and "Sign left out" in flagged[0]
    site.open(f"/pois/{stray}?tour={tour}")
    site.fill("Longitude", "-77.8736")
    site.click_button("Save")
    assert "Saved." in site.text and "minus sign" not in site.text
