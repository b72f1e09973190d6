"""Roles, checked on the server on every route: an editor edits only the tours assigned to them; a viewer
reads reports only. The owner manages users and assigns editors in the browser."""
import re
import uuid

import pytest
from selenium.webdriver.common.by import By

from adminsite import UUID_RE, AdminSite


@pytest.fixture(scope="module")
def world(suite, browser):
    """Two tours with a POI each, an editor assigned to the first, and a viewer; made by the owner."""
    site = AdminSite(suite, browser)
    site.login()
    mine = site.create_tour(f"Editor's tour {uuid.uuid4().hex[:6]}")
    mine_poi = site.add_poi(mine, "Editor's stop", "34.2262", "-77.8718")
    other = site.create_tour(f"Someone else's tour {uuid.uuid4().hex[:6]}")
    other_poi = site.add_poi(other, "Someone else's stop", "34.2270", "-77.8700")
    editor = site.create_user("editor")
    viewer = site.create_user("viewer")
    site.open(f"/tours/{mine}")
    site.fill("Assign an editor", editor[0])
    site.click_button("Assign")
    assert "Editors saved." in site.text
    assert editor[0] in site.browser.find_element(By.XPATH, "//h2[text()='Editors']/following-sibling::ul").text
    site.logout()
    return {"mine": mine, "mine_poi": mine_poi, "other": other, "other_poi": other_poi, "editor": editor, "viewer": viewer}


def test_an_editor_edits_their_tour_and_is_refused_on_a_tour_not_theirs(suite, browser, world):
    site = AdminSite(suite, browser)
    site.login(*world["editor"])
    assert site.heading == "Tours Administration"
    assert "Editor's tour" in site.text
    assert "Someone else's tour" not in site.text, "the list shows only their tours"
    assert "Create New Tour" not in site.text
    nav = site.browser.find_element(By.CSS_SELECTOR, "nav.main").text
    assert "Users" not in nav and "Reports" not in nav and "Categories" not in nav and "Calendar" not in nav

    site.open(f"/tours/{world['mine']}")
    site.fill("Tour's Purpose", "Edited by its editor")
    site.click_button("Save")
    assert "Saved." in site.text
    site.open(f"/pois/{world['mine_poi']}")
    assert site.heading == "Manage Point of Interest"

    refused = [f"/tours/{world['other']}", f"/tours/{world['other']}/pois/new", f"/pois/{world['other_poi']}",
               f"/pois/{world['other_poi']}/links", f"/pois/{world['other_poi']}/preview", f"/pois/{world['other_poi']}/delete",
               f"/tours/{world['mine']}/delete", "/tours/new", "/pois", "/users", "/categories", "/import", "/calendar", "/calendar/new",
               "/people", "/people/new", "/pages", "/pages/new", "/featured", "/featured/new", "/deleted", "/translations",
               "/translations/es/export"]
    for path in refused:
        site.open(path)
        assert site.heading == "Not allowed", path
    # Posting to the other tour with a valid token of this session is refused too, and changes nothing.
    site.open(f"/tours/{world['mine']}")
    token = site.csrf_token()
    session = site.http()
    for path, data in [(f"/tours/{world['other']}", {"name": "Taken over", "version": "1"}),
                       (f"/tours/{world['other']}/status", {"status": "published", "version": "1"}),
                       (f"/pois/{world['other_poi']}", {"name": "Taken over", "latitude": "1", "longitude": "1"}),
                       (f"/tours/{world['mine']}/editors", {"action": "add", "user": world["mine"]}),
                       ("/calendar", {"title": "Editor's event", "startsAt": "2030-01-01T10:00", "endsAt": "2030-01-01T11:00", "timeZone": "UTC"}),
                       ("/people", {"name": "Editor's friend"}), ("/pages", {"slug": "editors", "title": "Editor's page"}),
                       (f"/deleted/tours/{world['other']}", {"revertTo": "1"}), (f"/deleted/pois/{world['other_poi']}", {"revertTo": "1"})]:
        response = session.post(site.base + path, data={**data, "csrf_token": token}, allow_redirects=False)
        assert response.status_code == 403, path
    site.logout()


def test_a_viewer_is_refused_on_every_edit_page(suite, browser, world):
    site = AdminSite(suite, browser)
    site.login(*world["viewer"])
    assert site.heading == "Welcome"
    nav = site.browser.find_element(By.CSS_SELECTOR, "nav.main").text
    assert nav.strip() == "Reports", nav
    tour, poi = world["mine"], world["mine_poi"]
    pages = ["/tours", "/tours/new", f"/tours/{tour}", f"/tours/{tour}/pois/new", f"/tours/{tour}/delete", "/pois", "/pois/new",
             f"/pois/{poi}", f"/pois/{poi}/links", f"/pois/{poi}/links/0/edit", f"/pois/{poi}/preview", f"/pois/{poi}/delete",
             "/categories", "/users", "/import", "/calendar", "/calendar/new", "/people", "/people/new",
             "/pages", "/pages/new", "/featured", "/featured/new", "/deleted", "/translations", "/translations/es/export"]
    for path in pages:
        site.open(path)
        assert site.heading == "Not allowed", path
    site.open("/account")
    token = site.csrf_token()
    session = site.http()
    posts = ["/tours", f"/tours/{tour}", f"/tours/{tour}/status", f"/tours/{tour}/stops", f"/tours/{tour}/editors", f"/tours/{tour}/delete",
             f"/tours/{tour}/pois", "/pois", f"/pois/{poi}", f"/pois/{poi}/delete", f"/pois/{poi}/links", "/categories", "/users", "/import",
             "/calendar", "/people", "/pages", "/featured", f"/deleted/tours/{tour}", f"/deleted/pois/{poi}", "/translations/import"]
    for path in posts:
        response = session.post(site.base + path, data={"csrf_token": token, "name": "Viewer was here", "version": "1", "poi": poi,
                                                        "move": "remove", "status": "archived", "user": tour, "action": "add",
                                                        "latitude": "1", "longitude": "1", "email": "x@example.edu", "role": "owner",
                                                        "password": "viewer-made-this"},
                                allow_redirects=False)
        assert response.status_code == 403, path
    site.logout()
    site.login()
    site.open(f"/tours/{tour}")
    assert "Viewer was here" not in site.text
    assert "Editor's stop" in site.text


def test_an_editor_cannot_take_over_a_place_and_a_viewer_sees_no_draft_tour(suite, browser, world):
    """Issue 43: a POI in none of the editor's tours (a place of its own) is not offered to them nor accepted from them;
    a viewer's reports name published tours only, whatever the address asks for."""
    site = AdminSite(suite, browser)
    site.login()
    name = f"Lonely place {uuid.uuid4().hex[:6]}"
    site.open("/pois/new")
    site.fill("Name", name)
    site.fill("Latitude", "34.2281")
    site.fill("Longitude", "-77.8731")
    site.click_button("Save")
    assert "Created." in site.text, site.text
    place = re.search(UUID_RE, site.path).group(0)
    site.open(f"/tours/{world['mine']}")
    assert name in site.text, "offered to the owner"
    site.logout()

    site.login(*world["editor"])
    site.open(f"/tours/{world['mine']}")
    assert name not in site.text, "not offered to the editor"
    token, version = site.csrf_token(), site.browser.find_element(By.NAME, "version").get_attribute("value")
    response = site.http().post(f"{site.base}/tours/{world['mine']}/stops",
                                data={"csrf_token": token, "poi": place, "move": "add", "version": version}, allow_redirects=False)
    assert response.status_code == 403 and "in none of your tours" in response.text
    site.open(f"/pois/{place}")
    assert site.heading == "Not allowed"
    site.logout()

    site.login(*world["viewer"])
    for path in ["/reports?allTours=1", f"/reports?tourId={world['other']}"]:
        site.open(path)
        assert "Someone else's tour" not in site.text and "Editor's tour" not in site.text, path
    assert not site.browser.find_elements(By.NAME, "allTours"), "no 'Include draft and archived tours' for viewers"
    site.logout()
