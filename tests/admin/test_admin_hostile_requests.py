"""The security review's findings on the admin site (issue 14), against the real admin binary over a real socket:
multipart read only where uploads go and only after log-in, Origin compared by scheme, host and port, `next`
only a plain path. (Throttling and the linear delimiter search are in Tests/AdminTests/AdminSecurityTests.swift:
guessing here would hold back the shared suite's own log-ins.)"""
import re
import socket
from urllib.parse import urlsplit

import requests

from conftest import ADMIN_EMAIL, ADMIN_PASSWORD


def anonymous(base: str) -> tuple[requests.Session, str]:
    """A fresh browser that opened the log-in page: its double-submit cookie and the form's token."""
    session = requests.Session()
    page = session.get(base + "/login", timeout=10)
    return session, re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)


def signed_in(base: str) -> tuple[requests.Session, str]:
    session, token = anonymous(base)
    answer = session.post(base + "/login", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "csrf_token": token},
                          allow_redirects=False, timeout=10)
    assert answer.status_code == 303, answer.text[:300]
    page = session.get(base + "/tours/new", timeout=10)
    return session, re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)


def test_login_posted_as_multipart_is_not_read(suite):
    base = suite.admin_url
    session, token = anonymous(base)
    # The right token and password, as multipart: refused unread, no session.
    answer = session.post(base + "/login", files={"csrf_token": (None, token), "email": (None, ADMIN_EMAIL),
                                                   "password": (None, ADMIN_PASSWORD)}, allow_redirects=False, timeout=10)
    assert answer.status_code == 400
    assert "itour_session" not in answer.cookies
    # The reported attack: an 8 KiB boundary of dashes, 128 KiB of dashes, no session.
    answer = requests.post(base + "/login", data=b"-" * (128 << 10),
                           headers={"Content-Type": "multipart/form-data; boundary=" + "-" * (8 << 10)}, timeout=10)
    assert answer.status_code == 400


def test_upload_route_needs_a_session_before_its_body_is_read(suite):
    base = suite.admin_url
    answer = requests.post(base + "/import", data=b"not multipart at all",
                           headers={"Content-Type": "multipart/form-data; boundary=XyZ"}, allow_redirects=False, timeout=10)
    assert answer.status_code == 401
    session, token = signed_in(base)
    long = "b" * 71
    body = (f"--{long}\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n{token}\r\n--{long}--\r\n").encode()
    answer = session.post(base + "/import", data=body, headers={"Content-Type": f"multipart/form-data; boundary={long}"},
                          allow_redirects=False, timeout=10)
    assert answer.status_code == 400
    # A boundary of 70 is read, and its token checked.
    ok = long[:70]
    body = (f"--{ok}\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n{token}\r\n--{ok}--\r\n").encode()
    answer = session.post(base + "/import", data=body, headers={"Content-Type": f"multipart/form-data; boundary={ok}"},
                          allow_redirects=False, timeout=10)
    assert answer.status_code == 422 and "Choose a file, or paste its content." in answer.text
    forged = body.replace(token.encode(), b"x" * len(token))
    answer = session.post(base + "/import", data=forged, headers={"Content-Type": f"multipart/form-data; boundary={ok}"},
                          allow_redirects=False, timeout=10)
    assert answer.status_code == 403


def test_origin_must_match_scheme_host_and_port(suite):
    base = suite.admin_url
    port = urlsplit(base).port
    session, token = signed_in(base)

    def create(name: str, origin: str) -> int:
        return session.post(base + "/tours", data={"name": name, "purpose": "p", "csrf_token": token},
                            headers={"Origin": origin}, allow_redirects=False, timeout=30).status_code

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other_port = other.getsockname()[1]
    assert create("Other port", f"http://127.0.0.1:{other_port}") == 403
    assert create("Other scheme", f"https://127.0.0.1:{port}") == 403
    assert create("Same origin", f"http://127.0.0.1:{port}") == 303


def test_next_with_a_tab_does_not_leave_the_site(suite):
    base = suite.admin_url
    session = requests.Session()
    page = session.get(base + "/login?next=/%09/127.0.0.1:8080/v1/tours", timeout=10)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    answer = session.post(base + "/login", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "csrf_token": token,
                                                 "next": "/\t/127.0.0.1:8080/v1/tours"}, allow_redirects=False, timeout=10)
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/"
