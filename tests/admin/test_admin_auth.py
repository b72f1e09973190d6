"""Log in and out, throttled guessing, CSRF, labels (Appendix F's login test, done right)."""
import re

import requests
from selenium.webdriver.common.by import By

from adminsite import AdminSite, site  # noqa: F401 (fixture)
from conftest import ADMIN_EMAIL, ADMIN_PASSWORD


def test_login_wrong_then_right(suite, browser):
    admin = AdminSite(suite, browser)
    # The browser is the session's: a test that ran before may have left it signed in.
    admin.open("/login")
    browser.delete_all_cookies()
    admin.open("/tours")
    assert admin.path.startswith("/login"), "a page needs a session"
    assert browser.title.startswith("iTour UNCW")
    admin.fill("Email", ADMIN_EMAIL)
    admin.fill("Password", "not-the-password")
    admin.click_button("Log In")
    assert admin.heading == "Log In"
    assert "User and password combination is invalid." in admin.text
    assert admin.value("Email") == ADMIN_EMAIL, "the typed email is kept"
    assert admin.value("Password") == "", "the password is not sent back"

    admin.fill("Password", ADMIN_PASSWORD)
    admin.click_button("Log In")
    assert admin.heading == "Tours Administration"
    assert admin.path == "/tours", "back to the page that asked for the log-in"
    assert "Students Tour (Beta)" in admin.text


def test_session_cookie_is_httponly_and_lax(site):
    cookie = site.browser.get_cookie("itour_session")
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Lax"


def test_logout_ends_the_session(site):
    old = site.http()
    site.logout()
    assert site.heading == "Log In"
    assert "You have logged out." in site.text
    site.open("/tours")
    assert site.path.startswith("/login")
    # The old cookie no longer opens anything, even replayed.
    response = old.get(site.base + "/tours", allow_redirects=False)
    assert response.status_code == 303 and response.headers["Location"].startswith("/login")


def test_repeated_failed_logins_are_throttled(suite, browser):
    admin = AdminSite(suite, browser)
    admin.open("/login")
    for _ in range(5):
        admin.fill("Email", "nobody-guessing@example.edu")
        admin.fill("Password", "guess")
        admin.click_button("Log In")
    assert re.search(r"Too many failed log-ins.*try again in \d+ seconds", admin.text, re.I), admin.text
    # Even the right password of a real account is not checked for the locked email; the admin's own account is unaffected.
    admin.fill("Email", ADMIN_EMAIL)
    admin.fill("Password", ADMIN_PASSWORD)
    admin.click_button("Log In")
    assert admin.heading == "Tours Administration"


def test_form_posted_without_its_csrf_token_is_refused(site):
    site.open("/tours/new")
    site.fill("Tour's Name", "Smuggled without a token")
    # Take the token out of the real form, then submit it as a person would.
    site.browser.execute_script("document.querySelectorAll('main form input[name=csrf_token]').forEach(e => e.remove())")
    site.click_button("Save")
    assert site.heading == "Form refused"
    assert "security token" in site.text
    # The same with a forged token, and with none, outside the browser: 403 and nothing created.
    session = site.http()
    for data in ({"name": "Forged"}, {"name": "Forged", "csrf_token": "x" * 43}):
        response = session.post(site.base + "/tours", data=data, allow_redirects=False)
        assert response.status_code == 403
    # A POST from another site's page is refused even with the token.
    site.open("/tours")
    token = site.csrf_token()
    response = session.post(site.base + "/tours", data={"name": "Cross-site", "csrf_token": token},
                            headers={"Origin": "https://evil.example"}, allow_redirects=False)
    assert response.status_code == 403
    site.open("/tours")
    assert "Smuggled without a token" not in site.text
    assert "Forged" not in site.text and "Cross-site" not in site.text


def test_every_form_field_has_a_visible_label(site):
    site.open("/tours")
    tour = re.search(r"/tours/([0-9a-f-]{36})", site.browser.find_element(By.LINK_TEXT, "Students Tour (Beta)").get_attribute("href")).group(1)
    site.open(f"/tours/{tour}")
    poi = re.search(r"/pois/([0-9a-f-]{36})", site.browser.find_element(By.LINK_TEXT, "CIS Building").get_attribute("href")).group(1)
    pages = ["/tours/new", f"/tours/{tour}", f"/tours/{tour}/pois/new", f"/pois/{poi}", f"/pois/{poi}/links", "/categories",
             "/users", "/import", "/account"]
    for path in pages:
        site.open(path)
        fields = site.browser.find_elements(By.CSS_SELECTOR, "main input:not([type=hidden]):not([hidden]), main textarea, main select")
        assert fields, path
        for field in fields:
            labels = site.browser.find_elements(By.CSS_SELECTOR, f"label[for='{field.get_attribute('id')}']")
            assert labels and labels[0].is_displayed() and labels[0].text.strip(), f"{path}: {field.get_attribute('name')} has no visible label"
    site.logout()
    site.open("/login")
    for field in site.browser.find_elements(By.CSS_SELECTOR, "main input:not([type=hidden]):not([hidden])"):
        assert site.browser.find_element(By.CSS_SELECTOR, f"label[for='{field.get_attribute('id')}']").is_displayed()


def test_pages_forbid_inline_scripts_and_framing(site):
    response = requests.get(site.base + "/login", timeout=5)
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "unsafe" not in policy
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
