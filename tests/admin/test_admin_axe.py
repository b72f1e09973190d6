"""axe-core (the engine browsers' accessibility tools run) over every admin page, logged in and out: no serious or
critical violation (issue 48). Pages with an id are reached as a person would, from their lists, so each kind of
page is checked with real content (the demo tour, its stops, an event, a person, a page, a featured item)."""
import importlib.resources
import re
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from adminsite import site  # noqa: F401 (fixture)

AXE = importlib.resources.files("axe_core_python").joinpath("axe.min.js").read_text()
UUID_LINK = re.compile(r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def serious_violations(site) -> list[str]:
    """Runs axe on the open page; one line per serious or critical rule broken, with the elements that break it."""
    # Injected and run in one script: a page that reloads itself (System Status) cannot come between the two.
    result = site.browser.execute_async_script(AXE + """
        ;const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]}).then(r => done(r.violations), e => done(String(e)));
    """)
    assert isinstance(result, list), result
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:4]}"
            for v in result if v["impact"] in ("serious", "critical")]


def first_link(site, list_path: str, under: str) -> str:
    """The path of the first record linked from a list page (`under` + an id)."""
    site.open(list_path)
    for link in site.browser.find_elements(By.CSS_SELECTOR, f"a[href^='{under}/']"):
        href = link.get_attribute("href")
        if UUID_LINK.search(href.split("?")[0]):
            return href[len(site.base):].split("?")[0]
    pytest.fail(f"{list_path} links no record under {under}")


def admin_pages(site) -> list[str]:
    # The demo tour: it has stops, whatever other tests made before this one.
    tour = first_link(site, "/tours?q=Students+Tour", "/tours")
    site.open(tour)
    poi = site.browser.find_element(By.CSS_SELECTOR, "table.stops a[href*='/pois/']").get_attribute("href")
    poi = poi[len(site.base):].split("?")[0]
    pages = ["/", "/tours", "/tours/new", tour, f"{tour}/history", f"{tour}/preview", f"{tour}/qr", f"{tour}/pois/new",
             f"{tour}/delete", "/pois", "/pois/new", poi, f"{poi}/history", f"{poi}/links", f"{poi}/delete", "/categories",
             "/media", "/import", "/translations", "/users", "/reports", "/status", "/account", "/help", "/deleted"]
    for kind in ("/calendar", "/people", "/pages", "/featured"):
        record = make_record(site, kind)
        pages += [kind, f"{kind}/new", record, f"{record}/delete"]
    return pages


def make_record(site, kind: str) -> str:
    """Creates one record of a kind through its form, so each kind's page is checked whatever ran before; returns its path."""
    tag = uuid.uuid4().hex[:6]
    site.open(f"{kind}/new")
    if kind == "/calendar":
        site.fill("Title", f"Axe visit {tag}")
        site.fill("Starts", "2030-02-01T10:00")
        site.fill("Ends", "2030-02-01T11:00")
    elif kind == "/people":
        site.fill("Name", f"Axe Person {tag}")
    elif kind == "/pages":
        site.fill("Title", f"Axe page {tag}")
        site.fill("Address", f"axe-{tag}")
    else:
        Select(site.field("Features")).select_by_index(1)
        site.fill("Title", f"Axe feature {tag}")
        site.fill("Image link", "https://images.example.edu/axe.jpg")
        site.fill("Image description", "A test picture")
    site.click_button("Save")
    assert "Created." in site.text, site.text[:1500]
    return site.path.split("?")[0]


def test_no_admin_page_has_a_serious_accessibility_violation(site):
    found: dict[str, list[str]] = {}
    for path in admin_pages(site):
        site.open(path)
        assert site.browser.find_elements(By.TAG_NAME, "h1"), f"{path}: {site.text[:300]}"
        if violations := serious_violations(site):
            found[path] = violations
    site.logout()
    site.open("/login")
    if violations := serious_violations(site):
        found["/login"] = violations
    assert not found, "\n".join(f"{path}: {line}" for path, lines in found.items() for line in lines)
