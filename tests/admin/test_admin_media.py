"""The media library in a real browser: an upload reaches the feed under its SHA-256 and is served whole and
by ranges; a file whose bytes are not what its name says is refused with a message; a delete takes it off the feed."""
import hashlib
import struct
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
    site.field("File").send_keys(str(path))
    if title:
        site.fill("Title", title)
    site.click_button("Upload")


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
