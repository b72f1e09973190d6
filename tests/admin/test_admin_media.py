"""The media library in a real browser: an upload reaches the feed under its SHA-256 and is served whole and
by ranges; a file whose bytes are not what its name says is refused with a message; a delete takes it off the feed."""
import hashlib
import struct
import subprocess
import uuid
import zlib

import requests

from adminsite import eventually, site  # noqa: F401 (fixture)


def png(width: int, height: int, seed: int) -> bytes:
    """A real PNG (RGB, 8 bits) whose pixels depend on `seed`, so each test run uploads a new file."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(
        b"\x00" + b"".join(bytes(((x * 7 + y * 3 + seed) % 256, (x + seed) % 256, (y * 5 + seed) % 256)) for x in range(width))
        for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")


def upload(site, path, title: str = "") -> None:
    site.open("/media")
    # Notes in the tab's session storage that the page's script sent the file (XMLHttpRequest, for its progress bar).
    site.browser.execute_script(
        "const send = XMLHttpRequest.prototype.send;"
        "XMLHttpRequest.prototype.send = function (body) { sessionStorage.setItem('uploadedBy', 'xhr'); return send.call(this, body); };")
    site.field("File").send_keys(str(path))
    if title:
        site.fill("Title", title)
    site.click_button("Upload")
    assert site.browser.execute_script("return sessionStorage.getItem('uploadedBy')") == "xhr"
    site.browser.execute_script("sessionStorage.removeItem('uploadedBy')")


def test_upload_reaches_the_feed_and_is_served_whole_and_by_range(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    data = png(400, 300, seed=int(tag, 16))
    sha = hashlib.sha256(data).hexdigest()
    path = tmp_path / f"hall-{tag}.png"
    path.write_bytes(data)
    upload(site, path, title=f"Hall {tag}")
    assert "Uploaded" in site.text, site.text
    row = site.row(f"Hall {tag}")
    assert "PNG image" in row.text and f"hall-{tag}.png" in row.text

    url = f"{site.suite.feed_url}/v1/media/{sha}"
    assert eventually(lambda: requests.get(url, timeout=5).status_code == 200, timeout=20), url
    whole = requests.get(url, timeout=5)
    assert whole.content == data
    assert whole.headers["Content-Type"] == "image/png"
    assert whole.headers["ETag"] == f'"{sha}"'
    assert whole.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    part = requests.get(url, headers={"Range": "bytes=10-109"}, timeout=5)
    assert part.status_code == 206
    assert part.headers["Content-Range"] == f"bytes 10-109/{len(data)}"
    assert part.content == data[10:110]
    assert requests.get(url, headers={"If-None-Match": f'"{sha}"'}, timeout=5).status_code == 304

    # Deleting takes it off the feed.
    site.open("/media")
    row = site.row(f"Hall {tag}")
    site.navigate(row.find_element("xpath", ".//button[normalize-space()='Delete']"))
    assert "Deleted" in site.text
    assert eventually(lambda: requests.get(url, timeout=5).status_code == 404, timeout=20)


def pixel_width(data: bytes, tmp_path) -> int:
    """An image's width as libvips reads it (a decoder that is not ours)."""
    path = tmp_path / f"probe-{uuid.uuid4().hex}"
    path.write_bytes(data)
    return int(subprocess.run(["vipsheader", "-f", "width", str(path)], capture_output=True, text=True, check=True).stdout)


def test_an_image_gets_webp_variants_that_w_picks(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    data = png(1400, 100, seed=int(tag, 16) + 1)
    sha = hashlib.sha256(data).hexdigest()
    path = tmp_path / f"panorama-{tag}.png"
    path.write_bytes(data)
    upload(site, path, title=f"Panorama {tag}")
    assert "Uploaded" in site.text, site.text
    assert "1400×100 px" in site.row(f"Panorama {tag}").text
    url = f"{site.suite.feed_url}/v1/media/{sha}"
    assert eventually(lambda: requests.get(url, timeout=5).status_code == 200, timeout=20), url
    # The narrowest of the variants and the original at least that wide; the original past them all.
    for asked, width, kind in [(1, 320, "image/webp"), (320, 320, "image/webp"), (321, 640, "image/webp"), (1000, 1280, "image/webp"),
                               (1281, 1400, "image/png"), (5000, 1400, "image/png")]:
        variant = requests.get(f"{url}?w={asked}", timeout=5)
        assert variant.status_code == 200 and variant.headers["Content-Type"] == kind, asked
        assert pixel_width(variant.content, tmp_path) == width, asked
        assert variant.headers["ETag"] == f'"{hashlib.sha256(variant.content).hexdigest()}"'
    assert pixel_width(requests.get(url, timeout=5).content, tmp_path) == 1400

    # A small image gets no variant wider than itself.
    small = png(500, 20, seed=int(tag, 16) + 2)
    (tmp_path / f"small-{tag}.png").write_bytes(small)
    upload(site, tmp_path / f"small-{tag}.png", title=f"Small {tag}")
    small_url = f"{site.suite.feed_url}/v1/media/{hashlib.sha256(small).hexdigest()}"
    assert eventually(lambda: requests.get(small_url, timeout=5).status_code == 200, timeout=20)
    assert pixel_width(requests.get(f"{small_url}?w=300", timeout=5).content, tmp_path) == 320
    assert pixel_width(requests.get(f"{small_url}?w=400", timeout=5).content, tmp_path) == 500


def test_a_broken_image_is_refused(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    broken = tmp_path / f"broken-{tag}.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really a picture" * 10)
    upload(site, broken)
    assert f"broken-{tag}.png could not be read as PNG image" in site.text
    assert "nothing was added" in site.text


def test_a_renamed_file_is_refused_with_what_it_is(site, tmp_path):
    tag = uuid.uuid4().hex[:6]
    text = tmp_path / f"notes-{tag}.jpg"
    text.write_text("These are my notes, not a picture.\n")
    upload(site, text)
    assert f"notes-{tag}.jpg is not a file the library takes: its bytes are text" in site.text
    assert "JPEG, PNG or WebP images" in site.text
    assert f"notes-{tag}" not in "".join(r.text for r in site.browser.find_elements("css selector", "tbody tr"))

    picture = tmp_path / f"song-{tag}.mp3"
    picture.write_bytes(png(8, 8, seed=1))
    upload(site, picture)
    assert f"song-{tag}.mp3 is named as audio but its bytes are PNG image" in site.text


def test_media_page_is_for_owners(site):
    email, password = site.create_user("editor")
    site.logout()
    site.login(email, password)
    site.open("/media")
    assert "Only an owner can manage the media library" in site.text
    site.logout()
