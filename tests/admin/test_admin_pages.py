"""Content pages in the admin (issue 18, item 5): Add Page with an address that is taken refused beside its field,
Markdown with HTML in it published and shown on the feed as HTML with the HTML as text, an edit reaching the feed,
Delete taking it off."""
import json
import re
import urllib.error
import urllib.request
import uuid

from adminsite import eventually, site  # noqa: F401 (fixture)


def feed_page(site, slug: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{site.suite.feed_url}/v1/pages/{slug}", timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        assert error.code == 404, error.code
        return None


def test_a_page_is_added_refused_where_wrong_published_and_deleted(site):
    slug = f"history-{uuid.uuid4().hex[:6]}"
    site.open("/pages")
    assert site.heading == "Pages"
    site.click_link("Add Page")
    assert site.heading == "Add Page"
    site.fill("Title", "Our history")
    site.fill("Address", "about")  # the demo's About page has it
    site.fill("Text", "# Since 1947\n\nFounded as *Wilmington College*.\n\n<script>alert(1)</script>")
    site.click_button("Save")
    assert site.error_for("Address") == "Another page already has the address about", site.text[:1500]
    assert site.value("Title") == "Our history", "typed values are kept"

    site.fill("Address", slug)
    site.click_button("Save")
    assert "Created." in site.text and site.heading == "Edit Page"
    assert re.search(r"/pages/[0-9a-f-]{36}", site.path)
    assert feed_page(site, slug) is None, "a draft is not on the feed"

    site.click_button("Publish")
    assert "Published: the page is in the phones' menu of pages." in site.text
    assert eventually(lambda: feed_page(site, slug) is not None)
    html = feed_page(site, slug)["html"]
    assert "<h1>Since 1947</h1>" in html and "<em>Wilmington College</em>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html

    # An edit of the published page reaches the feed.
    site.fill("Title", "Our history, 1947 to now")
    site.click_button("Save")
    assert "Saved." in site.text
    assert eventually(lambda: feed_page(site, slug)["title"] == "Our history, 1947 to now")

    site.open("/pages")
    site.click_in_row(slug, "Delete")
    assert "Are you sure you want to delete?" in site.text
    site.click_button("Delete")
    assert "Deleted." in site.text
    assert eventually(lambda: feed_page(site, slug) is None)
