"""Accessibility and stops in a real browser (DESIGN.md, "Accessibility and stops"): captions and a transcript pasted
on a library item's page; a stop whose picture has no alt text cannot be published; with the library's alt text it
is, and the feed's page plays the narration with its captions track and shows the transcript."""
import hashlib
import re
import uuid

import requests

from adminsite import eventually, site  # noqa: F401 (fixture)
from test_admin_media import png, upload

CAPTIONS = "WEBVTT\n\n00:00.000 --> 00:02.500\nWelcome to the hall.\n"
SPANISH_CAPTIONS = "WEBVTT\n\n00:00.000 --> 00:02.500\nBienvenidos a la sala.\n"


def open_item(site, title: str) -> None:
    site.open("/media")
    site.click_link(title)
    assert site.heading == title, site.text


def test_captions_transcript_and_alt_text_gate_publishing_and_reach_the_poi_page(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    picture = png(64, 48, seed=int(tag, 16) + 7)
    audio = b"ID3\x04\x00\x00\x00\x00\x00\x00" + hashlib.sha256(tag.encode()).digest() * 40
    picture_sha, audio_sha = hashlib.sha256(picture).hexdigest(), hashlib.sha256(audio).hexdigest()
    (tmp_path / f"front-{tag}.png").write_bytes(picture)
    (tmp_path / f"welcome-{tag}.mp3").write_bytes(audio)
    upload(site, tmp_path / f"front-{tag}.png", title=f"Front {tag}")
    assert "Uploaded" in site.text, site.text
    upload(site, tmp_path / f"welcome-{tag}.mp3", title=f"Welcome {tag}")
    assert "Uploaded" in site.text, site.text
    assert "has no alt text" in site.row(f"Front {tag}").text
    assert "has neither captions nor a transcript" in site.row(f"Welcome {tag}").text

    # Captions that are not WebVTT are refused beside the field; good ones and a transcript are saved.
    open_item(site, f"Welcome {tag}")
    site.fill("Captions (WebVTT)", "Welcome to the hall.")
    site.click_button("Save")
    assert "Captions must be WebVTT" in site.error_for("Captions (WebVTT)"), site.text
    site.fill("Captions (WebVTT)", CAPTIONS)
    site.fill("Transcript", "Welcome to the hall. It was built in 1961.")
    site.click_button("Save")
    assert "Saved" in site.text, site.text
    assert site.value("Captions (WebVTT)").startswith("WEBVTT")
    # In Spanish too, a file of its own (DESIGN.md "Languages"): refused beside its field when it is not WebVTT.
    site.fill("Captions (WebVTT) (es)", "Bienvenidos.")
    site.click_button("Save")
    assert site.error_for("Captions (WebVTT) (es)").startswith("es: Captions must be WebVTT"), site.text
    site.fill("Captions (WebVTT) (es)", SPANISH_CAPTIONS)
    site.click_button("Save")
    assert "Saved" in site.text, site.text
    assert "Bienvenidos a la sala." in site.value("Captions (WebVTT) (es)")
    assert "Welcome to the hall." in site.value("Captions (WebVTT)")

    # A place whose library picture has no alt text is not published; the message says which and how.
    feed = site.suite.feed_url
    site.open("/pois/new")
    site.fill("Name", f"Hall {tag}")
    site.fill("Latitude", "34.2240")
    site.fill("Longitude", "-77.8700")
    site.fill("Main Pictures (URL)", f"{feed}/v1/media/{picture_sha}\nhttps://example.edu/gate-{tag}.jpg The iron gate at the north entrance")
    site.fill("Trigger radius (metres)", "45")
    site.fill("Narration", audio_sha)
    site.click_button("Save")
    assert "Created." in site.text, site.text
    poi = re.search(r"[0-9a-f-]{36}", site.path).group(0)
    assert site.value("Main Pictures (URL)").endswith("The iron gate at the north entrance")
    site.click_button("Publish as a place")
    assert "Picture 1 of Hall" in site.text and "has no alt text" in site.text, site.text
    assert requests.get(f"{feed}/v1/pois/{poi}", timeout=5).status_code == 404

    open_item(site, f"Front {tag}")
    assert "Used by" in site.text and f"Hall {tag}" in site.text, site.text
    site.fill("Alternative text", "The brick front of the hall")
    site.click_button("Save")
    assert "Saved" in site.text, site.text
    site.open(f"/pois/{poi}")
    site.click_button("Publish as a place")
    assert "Published as a place" in site.text, site.text

    assert eventually(lambda: requests.get(f"{feed}/v1/pois/{poi}", timeout=5).status_code == 200, timeout=20)
    detail = requests.get(f"{feed}/v1/pois/{poi}", timeout=5).json()
    assert detail["triggerRadiusMeters"] == 45
    assert detail["pictureAlts"] == ["The brick front of the hall", "The iron gate at the north entrance"]
    assert detail["narration"]["sha256"] == audio_sha and detail["narration"]["transcript"].startswith("Welcome")
    captions = requests.get(detail["narration"]["captionsUrl"], timeout=5)
    assert captions.status_code == 200 and captions.headers["Content-Type"].startswith("text/vtt") and captions.text.startswith("WEBVTT")

    page = requests.get(f"{feed}/v1/pois/{poi}/page", timeout=5)
    assert "media-src" in page.headers["Content-Security-Policy"]
    assert 'alt="The brick front of the hall"' in page.text
    # The page links library files relatively (issue 47), so it works from an unpacked tour zip too.
    captions_sha = detail["narration"]["captionsUrl"].rsplit("/", 1)[1]
    assert f'<track kind="captions" src="../../media/{captions_sha}" srclang="en" label="English" default>' in page.text
    assert "<summary>Transcript</summary><p>Welcome to the hall. It was built in 1961.</p>" in page.text
    assert "<figcaption>Narration</figcaption>" in page.text and f"Welcome {tag}" not in page.text, "the library's title stays in the admin"

    # The page in the browser: the player holds its captions track, which the browser loads.
    site.browser.get(f"{feed}/v1/pois/{poi}/page")
    tracks = site.browser.execute_script(
        "return [...document.querySelectorAll('audio track')].map(t => [t.kind, t.srclang, t.src, t.default])")
    assert tracks == [["captions", "en", detail["narration"]["captionsUrl"], True]]

    # A phone asking in Spanish gets the Spanish captions, and a page whose track and words are in Spanish.
    spanish = requests.get(f"{feed}/v1/pois/{poi}?lang=es", timeout=5).json()
    spanish_url = spanish["narration"]["captionsUrl"]
    assert spanish_url != detail["narration"]["captionsUrl"]
    assert "Bienvenidos a la sala." in requests.get(spanish_url, timeout=5).text
    spanish_page = requests.get(f"{feed}/v1/pois/{poi}/page", headers={"Accept-Language": "es-MX"}, timeout=5).text
    assert f'src="../../media/{spanish_url.rsplit("/", 1)[1]}" srclang="es" label="español" default>' in spanish_page, spanish_page
    assert "<figcaption>Narración</figcaption>" in spanish_page and "<summary>Transcripción</summary>" in spanish_page
