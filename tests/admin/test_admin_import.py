"""Bulk import from the admin: a CSV upload with its progress page and per-row report; all or nothing,
unless bad rows are skipped."""
import uuid

from selenium.webdriver.common.by import By

from adminsite import eventually, site  # noqa: F401 (fixture)


def wait_done(site) -> None:
    """The job page refreshes itself until the import is done."""
    def finished():
        site.browser.refresh()
        return "refreshes itself" not in site.text
    assert eventually(finished, timeout=30, interval=0.5)


def import_file(site, path, skip_bad_rows: bool) -> None:
    """Uploads the file on the Import page and waits for its report."""
    site.open("/import")
    site.field("File (.json or .csv)").send_keys(str(path))
    if skip_bad_rows:
        site.field("Skip bad rows (import the good rows and report the bad ones)").click()
    site.click_button("Import")
    wait_done(site)


def import_csv(site, path, text: str) -> None:
    """Writes the CSV and imports it, skipping bad rows."""
    path.write_text(text)
    import_file(site, path, skip_bad_rows=True)


def get_feed(site, path):
    import json
    import urllib.request
    with urllib.request.urlopen(f"{site.suite.feed_url}{path}", timeout=5) as response:
        return json.load(response)


def test_csv_import_all_or_nothing_then_skipping_bad_rows(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    csv = tmp_path / f"shops-{tag}.csv"
    csv.write_text(
        "kind,name,latitude,longitude,category,links\n"
        f"poi,Corn Exchange {tag},53.7961,-1.5404,Shop {tag}/Market,Site|page|https://example.com\n"
        f"poi,Off the map {tag},95,-1.5,,\n"
        f"poi,Kirkgate Market {tag},53.7975,-1.5395,Shop {tag}/Market,\n")
    site.open("/import")
    assert site.heading == "Import Tours and POIs"
    site.field("File (.json or .csv)").send_keys(str(csv))
    site.click_button("Import")
    wait_done(site)
    assert "Not imported" in site.text
    assert "1 of 3 rows failed, so nothing was imported" in site.text
    assert "3 rows in the file" in site.text
    failed = site.row("line 3")
    assert "Failed" in failed.text and "Latitude must be between -90 and 90" in failed.text
    assert "Not imported (another row failed)" in site.row("line 2").text
    site.open("/pois")
    assert f"Corn Exchange {tag}" not in site.text, "nothing half-imported"

    import_file(site, csv, skip_bad_rows=True)
    assert "imported 2 of 3 rows and 1 category; 1 row failed and was skipped" in site.text
    assert "2 imported, 1 failed (and 1 category they use)." in site.text
    site.open("/pois")
    assert f"Corn Exchange {tag}" in site.text and f"Kirkgate Market {tag}" in site.text
    assert f"Off the map {tag}" not in site.text
    assert f"Shop {tag}/Market" in site.row(f"Corn Exchange {tag}").text

    # A file that cannot even be read is refused on the form, with the reason.
    bad = tmp_path / "bad.csv"
    bad.write_text("name,colour\nx,red\n")
    site.open("/import")
    site.field("File (.json or .csv)").send_keys(str(bad))
    site.click_button("Import")
    assert 'unknown column "colour"' in site.text
    rows = site.browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")
    assert len(rows) >= 2, "recent imports are listed"


def test_csv_import_of_people_and_pages_reaches_the_feed(site, tmp_path):
    """Issue 18, item 9: people and pages from a CSV file, through the admin's import, on the feed."""
    tag = uuid.uuid4().hex[:6]
    import_csv(site, tmp_path / f"staff-{tag}.csv",
        "kind,name,role,department,email,office,interests,slug,body,order,status\n"
        f"person,Robin Vale {tag},Registrar,Registrar's Office,registrar@example.edu,1020,Records;Transcripts,,,,\n"
        f"person,Ari Stone {tag},Advisor,Advising,advising@example.edu,Randall Library 2nd floor,,,,,draft\n"
        f"page,Education {tag},,,,,,education-{tag},\"# Study with us\n\nPrograms in **every** college.\",30,\n"
        f"person,Nobody {tag},,,not an address,,,,,,\n")
    assert "imported 3 of 4 rows; 1 row failed and was skipped" in site.text, site.text[:2000]
    assert "Email must be an address" in site.row("line 7").text, "a record is labelled by the line it starts on"

    def people():
        return get_feed(site, f"/v1/people?q={tag}")["people"]
    assert eventually(lambda: [p["name"] for p in people()] == [f"Robin Vale {tag}"]), "the draft is not shown"
    assert people()[0]["office"]["name"] == "Fisher Student Center" and people()[0]["interests"] == ["Records", "Transcripts"]
    page = get_feed(site, f"/v1/pages/education-{tag}")
    assert page["title"] == f"Education {tag}" and "<strong>every</strong>" in page["html"] and page["order"] == 30


def test_csv_import_of_events_and_featured_items_reaches_the_feed(site, tmp_path):
    """Issue 18, item 9: calendar events (an RRULE and a skipped date) and featured items (targets by title and
    legacyId) from a CSV file, through the admin's import, on the feed; a featured row naming no row is refused."""
    tag = uuid.uuid4().hex[:6]
    import_csv(site, tmp_path / f"whatson-{tag}.csv",
        "kind,name,startsAt,endsAt,timeZone,place,recurrence,exceptionDates,target,imageUrl,imageAlt,order\n"
        f"event,Walk {tag},2031-03-04T10:00,2031-03-04T11:00,America/New_York,1020,FREQ=WEEKLY;BYDAY=TU;COUNT=4,2031-03-11T10:00,,,,\n"
        f"featured,Walk with us {tag},,,,,,,event:walk {tag},https://images.example.edu/walk-{tag}.jpg,Visitors on the quad,-5\n"
        f"featured,,,,,,,,poi:1020,https://images.example.edu/fsc-{tag}.jpg,Fisher Student Center,-4\n"
        f"featured,,,,,,,,event:No such walk {tag},https://images.example.edu/x.jpg,x,0\n")
    assert "3 imported, 1 failed." in site.text, site.text[:2000]
    assert "event:TITLE" in site.row("line 5").text, "refused as the file was read, with its line"

    def walks():
        return [o for o in get_feed(site, "/v1/calendar?from=2031-03-01&to=2031-04-30")["occurrences"] if o["title"] == f"Walk {tag}"]
    assert eventually(lambda: len(walks()) == 3), "four Tuesdays, one skipped"
    assert [o["startsAt"] for o in walks()] == ["2031-03-04T10:00:00-05:00", "2031-03-18T10:00:00-04:00", "2031-03-25T10:00:00-04:00"]
    assert walks()[0]["place"]["name"] == "Fisher Student Center"

    def featured():
        return [f for f in get_feed(site, "/v1/featured")["featured"] if tag in f["imageUrl"]]
    assert eventually(lambda: len(featured()) == 2)
    first, second = featured()
    assert (first["kind"], first["title"], first["id"]) == ("event", f"Walk with us {tag}", walks()[0]["eventId"])
    assert (second["kind"], second["title"], second["imageAlt"]) == ("poi", "Fisher Student Center", "Fisher Student Center")
