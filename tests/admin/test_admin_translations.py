"""Translations (DESIGN.md "Languages"): staff translate a stop where they edit it, see what is missing, publish, and a
phone asking in Spanish gets the Spanish text; a CSV import's name@es columns fill the same fields."""
import json
import urllib.request
import uuid

from selenium.webdriver.common.by import By

from adminsite import eventually, site  # noqa: F401 (fixture)
from test_admin_import import import_csv, wait_done


def feed_get(suite, path: str, language: str | None = None) -> tuple[dict, dict]:
    request = urllib.request.Request(suite.feed_url + path, headers={"Accept-Language": language} if language else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response), dict(response.headers)


def test_a_stop_translated_in_its_form_reaches_phones_asking_in_spanish_once_published(site):
    tag = uuid.uuid4().hex[:6]
    name, stop = f"Library Walk {tag}", f"Randall Library {tag}"
    tour = site.create_tour(name, purpose="Where the books are.")
    poi = site.add_poi(tour, stop, "34.2275", "-77.8750", description="Four floors of books.")

    # The form shows a Spanish fieldset, each field with the English text beside it.
    site.open(f"/pois/{poi}?tour={tour}")
    fieldset = site.browser.find_element(By.CSS_SELECTOR, "fieldset.translation[lang='es']")
    assert "Spanish (es)" in fieldset.text
    assert f"\u201c{stop}\u201d" in fieldset.text, fieldset.text
    site.fill("Name (es)", f"Biblioteca Randall {tag}")
    # A hot-linked picture's alt text, and its Spanish line.
    site.fill("Main Pictures (URL)", f"https://example.edu/randall-{tag}.jpg The brick front")
    site.fill("What the pictures show (a line per picture, in their order) (es)", "La fachada de ladrillo")
    site.click_button("Save")
    assert "Saved." in site.text, site.text
    assert site.value("Name (es)") == f"Biblioteca Randall {tag}"

    # The list says what is still missing in which language; so does the tour's page beside Publish.
    site.open("/pois")
    row = site.row(stop)
    assert "es: description" in row.text, row.text
    site.open(f"/tours/{tour}")
    notice = site.browser.find_element(By.CSS_SELECTOR, ".notice.untranslated")
    assert "Spanish (es)" in notice.text and f"{stop} (description)" in notice.text, notice.text
    assert "the tour (name, purpose)" in notice.text, notice.text

    site.fill("Tour's Name (es)", f"Paseo {name}")
    site.click_button("Save")
    site.click_button("Publish")
    assert eventually(lambda: feed_get(site.suite, f"/v1/tours/{tour}", "es-MX")[0].get("name") == f"Paseo {name}", timeout=15)

    body, headers = feed_get(site.suite, f"/v1/pois/{poi}", "es-MX, en;q=0.5")
    assert headers["Content-Language"] == "es"
    assert "Accept-Language" in headers["Vary"]
    assert body["name"] == f"Biblioteca Randall {tag}"
    assert body["description"] == "Four floors of books.", "an untranslated field falls back to English on its own"
    assert body["pictureAlts"] == ["La fachada de ladrillo"], body["pictureAlts"]
    assert body["languages"] == ["en", "es"]
    english, english_headers = feed_get(site.suite, f"/v1/pois/{poi}")
    assert english["name"] == stop and english_headers["Content-Language"] == "en"
    assert english["pictureAlts"] == ["The brick front"]
    assert english_headers["ETag"] != headers["ETag"]

    # Emptying the translation takes it back to English.
    site.open(f"/pois/{poi}?tour={tour}")
    site.fill("Name (es)", "")
    site.click_button("Save")
    site.open(f"/tours/{tour}")
    site.click_button("Publish changes")
    assert eventually(lambda: feed_get(site.suite, f"/v1/pois/{poi}", "es")[0].get("name") == stop, timeout=15)


def test_two_tabs_translating_different_fields_keep_both(site):
    tour = site.create_tour(f"Two tabs {uuid.uuid4().hex[:6]}")
    poi = site.add_poi(tour, "Hoggard Hall", "34.2262", "-77.8768", description="Offices.")
    page = f"/pois/{poi}?tour={tour}"
    site.open(page)
    # Another tab, opened at the same version, saves a Spanish description first.
    form = site.browser.find_element(By.CSS_SELECTOR, "[name='name@es']").find_element(By.XPATH, "ancestor::form")
    entries = site.browser.execute_script("return Array.from(new FormData(arguments[0]).entries())", form)
    action = form.get_attribute("action")
    # Its own submission: not this page's form id (a second post of one id is taken as the same submission).
    other = [(name, "Oficinas." if name == "description@es" else value) for name, value in entries if name not in ("formId", "formIdRendered")]
    answer = site.http().post(action, data=other, headers={"Origin": site.suite.admin_url}, allow_redirects=True, timeout=30)
    assert answer.status_code == 200 and "Saved." in answer.text, answer.text[:500]

    site.fill("Name (es)", "Edificio Hoggard")
    site.click_button("Save")
    assert "was changed" in site.text, "the save lost the race and says so"
    assert site.value("Description (es)") == "Oficinas.", "their translation was taken into the form"
    assert site.value("Name (es)") == "Edificio Hoggard", "yours is kept"
    site.click_button("Save")
    assert "Saved." in site.text, site.text
    site.open(page)
    assert site.value("Name (es)") == "Edificio Hoggard" and site.value("Description (es)") == "Oficinas."


def test_a_csv_import_fills_translations_from_name_at_language_columns(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    import_csv(site, tmp_path / f"translated-{tag}.csv",
               "kind,name,name@es,summary,summary@ES,latitude,longitude,status\n"
               f"poi,Watson College {tag},Facultad Watson {tag},Teachers,Docentes,34.2270,-77.8770,published\n")
    assert "1 imported, 0 failed." in site.text, site.text[:2000]

    def found():
        body, _ = feed_get(site.suite, f"/v1/search?q=facultad%20watson%20{tag}", "es")
        return [poi for poi in body["pois"] if poi["name"] == f"Facultad Watson {tag}"]
    assert eventually(found, timeout=30), "the import's Spanish name reached the feed and search finds a word of it"
    poi = found()[0]
    assert poi["summary"] == "Docentes" and poi["languages"] == ["en", "es"]
    english, _ = feed_get(site.suite, f"/v1/pois/{poi['id']}")
    assert english["name"] == f"Watson College {tag}"


def unit_ids(store) -> dict:
    """The units by their id (translate-toolkit puts the file's name and \\x04 in front of it)."""
    return {unit.getid().split("\x04")[-1]: unit for unit in store.units}


def upload_translations(site, path) -> None:
    site.open("/translations")
    site.field("XLIFF file (.xlf or .xliff)").send_keys(str(path))
    site.click_button("Import translations")


def test_an_xliff_export_translated_by_a_translation_tool_comes_back_into_the_forms_and_the_feed(site, tmp_path):
    from translate.storage import xliff  # translate-toolkit: a reader and writer of XLIFF other than ours

    tag = uuid.uuid4().hex[:6]
    tour = site.create_tour(f"History Walk {tag}", purpose="The old buildings.")
    poi = site.add_poi(tour, f"Leutze Hall {tag}", "34.2268", "-77.8772", description="The history department.")
    site.open("/categories")
    site.fill("Name", f"History {tag}")
    site.click_button("Save", index=-1)
    session = site.http()
    exported = session.get(site.suite.admin_url + "/translations/es/export", timeout=30)
    assert exported.status_code == 200 and exported.headers["Content-Type"].startswith("application/x-xliff+xml")
    store = xliff.xlifffile.parsestring(exported.content)
    assert (store.getsourcelanguage(), store.gettargetlanguage()) == ("en", "es")
    units = unit_ids(store)
    assert units[f"poi/{poi}/name"].source == f"Leutze Hall {tag}"
    assert units[f"poi/{poi}/description"].source == "The history department."
    assert f"poi/{poi}/summary" not in units, "an empty text has nothing to translate"
    # Every kind of content is in it: the demo's About page with its Spanish title, the new category.
    about = [unit for key, unit in units.items() if key.startswith("page/") and key.endswith("/title") and unit.source == "About iTour"]
    assert len(about) == 1 and about[0].target == "Acerca de iTour"
    category = [unit for key, unit in units.items() if key.startswith("category/") and unit.source == f"History {tag}"]
    assert len(category) == 1 and not category[0].target

    # The agency's work, written back by the tool.
    units[f"poi/{poi}/name"].target = f"Edificio Leutze {tag}"
    units[f"poi/{poi}/description"].target = "El departamento de historia & <más>."
    units[f"tour/{tour}/name"].target = f"Paseo histórico {tag}"
    category[0].target = f"Historia {tag}"
    translated = tmp_path / f"itour-es-{tag}.xlf"
    translated.write_bytes(bytes(store))
    upload_translations(site, translated)
    # The changes run as an import: its progress, then a row per entity changed.
    assert site.path.startswith("/import/"), site.path
    wait_done(site)
    assert "3 imported, 0 failed" in site.text and f"Leutze Hall {tag}" in site.text, site.text[:2000]

    site.open(f"/pois/{poi}?tour={tour}")
    assert site.value("Name (es)") == f"Edificio Leutze {tag}"
    assert site.value("Description (es)") == "El departamento de historia & <más>."
    site.open(f"/tours/{tour}")
    site.click_button("Publish")
    assert eventually(lambda: feed_get(site.suite, f"/v1/pois/{poi}", "es")[0].get("name") == f"Edificio Leutze {tag}", timeout=15)
    assert feed_get(site.suite, f"/v1/tours/{tour}", "es")[0]["name"] == f"Paseo histórico {tag}"
    # A category has no draft: its Spanish name is on the feed at once.
    assert eventually(lambda: (find_category(feed_get(site.suite, "/v1/categories", "es")[0]["categories"], f"History {tag}") or {})
                      .get("name") == f"Historia {tag}", timeout=15)

    # Out again, the file holds what was done; read back by the tool.
    again = unit_ids(xliff.xlifffile.parsestring(session.get(site.suite.admin_url + "/translations/es/export", timeout=30).content))
    assert again[f"poi/{poi}/description"].target == "El departamento de historia & <más>."

    # XLIFF 2.0 as other tools write it.
    version2 = tmp_path / f"itour-es-{tag}-2.xlf"
    version2.write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="es">
  <file id="f1"><unit id="tour/{tour}/purpose"><segment><source>The old buildings.</source><target>Los edificios antiguos.</target></segment></unit></file>
</xliff>""")
    upload_translations(site, version2)
    wait_done(site)
    assert "1 imported, 0 failed" in site.text, site.text[:2000]
    # The same file again changes nothing, and says so on the Translations page.
    upload_translations(site, version2)
    assert "nothing to change, 1 item already translated so" in site.text, site.text[:2000]
    site.open(f"/tours/{tour}")
    assert site.value("Tour's Purpose (es)") == "Los edificios antiguos."


def test_a_translation_file_that_is_not_xliff_or_names_nothing_here_is_refused_with_the_reason(site, tmp_path):
    bomb = tmp_path / "bomb.xlf"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><xliff version="1.2"><file target-language="es"></file></xliff>')
    upload_translations(site, bomb)
    assert "Nothing was imported" in site.text and "DOCTYPE" in site.text, site.text[:2000]

    french = tmp_path / "french.xlf"
    french.write_text('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" target-language="fr"><body/></file></xliff>')
    upload_translations(site, french)
    assert "its target language is fr" in site.text, site.text[:2000]

    stranger = tmp_path / "stranger.xlf"
    stranger.write_text('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" target-language="es"><body>'
                        f'<trans-unit id="poi/{uuid.uuid4()}/name"><source>Gone</source><target>Ido</target></trans-unit>'
                        '<trans-unit id="poi/x/latitude"><source>1</source><target>2</target></trans-unit></body></file></xliff>')
    upload_translations(site, stranger)
    assert "not here (deleted since the export?)" in site.text and "not a unit of this site" in site.text, site.text[:2000]


def test_the_demo_about_page_answers_in_spanish_and_its_form_keeps_the_translation(site):
    body, headers = feed_get(site.suite, "/v1/pages/about", "es-ES")
    assert headers["Content-Language"] == "es" and "Accept-Language" in headers["Vary"]
    assert body["title"] == "Acerca de iTour" and body["language"] == "es" and body["languages"] == ["en", "es"]
    assert "<h1>Bienvenido a UNCW</h1>" in body["html"]
    english, english_headers = feed_get(site.suite, "/v1/pages/about")
    assert english["title"] == "About iTour" and english_headers["ETag"] != headers["ETag"]
    request = urllib.request.Request(site.suite.feed_url + "/v1/pages/about/page", headers={"Accept-Language": "es"})
    with urllib.request.urlopen(request, timeout=5) as response:
        page = response.read().decode()
    assert '<html lang="es">' in page and "Acerca de iTour" in page
    listed, _ = feed_get(site.suite, "/v1/pages?lang=es")
    assert [p["title"] for p in listed["pages"] if p["slug"] == "about"] == ["Acerca de iTour"]

    # Staff see the Spanish beside the English, and a save of the English alone keeps it.
    site.open("/pages")
    assert "All translated" in site.row("About iTour").text, site.row("About iTour").text
    site.click_link("About iTour")
    assert site.value("Title (es)") == "Acerca de iTour"
    site.fill("Summary", "A self-guided tour of the UNCW campus, on your phone (updated).")
    site.click_button("Save")
    assert site.value("Title (es)") == "Acerca de iTour"
    assert eventually(lambda: feed_get(site.suite, "/v1/pages/about")[0]["summary"].endswith("(updated)."), timeout=15)
    assert feed_get(site.suite, "/v1/pages/about", "es")[0]["title"] == "Acerca de iTour"
    # Back as the demo has it: other suites read the demo page.
    site.fill("Summary", "A self-guided tour of the UNCW campus, on your phone.")
    site.click_button("Save")
    assert eventually(lambda: not feed_get(site.suite, "/v1/pages/about")[0]["summary"].endswith("(updated)."), timeout=15)


def find_category(nodes: list, path: str) -> dict | None:
    for node in nodes:
        if node["path"] == path:
            return node
        found = find_category(node["children"], path)
        if found:
            return found
    return None


def test_a_category_named_in_spanish_on_the_categories_page_reaches_phones_asking_in_spanish(site):
    tag = uuid.uuid4().hex[:6]
    top = f"Eat {tag}"
    site.open("/categories")
    site.fill("Name", top)
    site.fill("Name (es)", f"Comer {tag}")
    site.click_button("Save", index=-1)
    assert "All translated" in site.row(top).text, site.row(top).text
    assert eventually(lambda: (find_category(feed_get(site.suite, "/v1/categories", "es")[0]["categories"], top) or {}).get("name")
                      == f"Comer {tag}", timeout=15)
    body, headers = feed_get(site.suite, "/v1/categories", "es")
    assert headers["Content-Language"] == "es"
    assert find_category(feed_get(site.suite, "/v1/categories")[0]["categories"], top)["name"] == top

    # Renamed in place, the Spanish name beside the English one; the path stays English.
    site.fill(f"Spanish (es) name for {top}", f"Comida {tag}")
    site.navigate(site.row(top).find_element(By.XPATH, ".//button[normalize-space()='Save']"))
    assert eventually(lambda: (find_category(feed_get(site.suite, "/v1/categories", "es")[0]["categories"], top) or {}).get("name")
                      == f"Comida {tag}", timeout=15)

    # A subcategory without a Spanish name is listed as missing one; a malformed one is refused with the reason.
    site.fill("Name", "Cafés")
    site.fill("Parent", top)
    site.fill("Name (es)", "Cafés/Bares")
    site.click_button("Save", index=-1)
    assert site.error_for("Name (es)").startswith("es: Category name must not contain"), site.error_for("Name (es)")
    assert site.value("Name (es)") == "Cafés/Bares"
    site.fill("Name (es)", "")
    site.click_button("Save", index=-1)
    assert "es: name" in site.row(f"{top}/Cafés").text, site.row(f"{top}/Cafés").text
