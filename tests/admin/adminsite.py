"""Driving the admin site in the browser the way staff do: by the labels and button texts they see.

Not a conftest.py (a second one would shadow tests/conftest.py for `from conftest import ...`): test
modules import the fixtures they use from here.
"""
from __future__ import annotations

import json
import re
import time
import urllib.request
import uuid

import pytest
import requests
from selenium.common.exceptions import (
    NoAlertPresentException,
    NoSuchElementException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import ADMIN_EMAIL, ADMIN_PASSWORD

UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def xpath_literal(text: str) -> str:
    """`text` as an XPath string literal, whatever quotes it holds."""
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return "concat(" + ", \"'\", ".join(f"'{part}'" for part in text.split("'")) + ")"


class AdminSite:
    def __init__(self, suite, browser):
        self.suite = suite
        self.browser = browser
        self.base = suite.admin_url

    # navigation

    def open(self, path: str) -> None:
        self.browser.get(self.base + path)

    @property
    def path(self) -> str:
        return self.browser.current_url[len(self.base):]

    def read_text(self, by: str, value: str, within: float = 3) -> str:
        """The text of the element found by (`by`, `value`). A page that reloads itself (status, import jobs) can
        replace the element between finding it and reading it, or be between two documents: find it again, for up
        to `within` seconds."""
        deadline = time.monotonic() + within
        while True:
            try:
                return self.browser.find_element(by, value).text
            except (StaleElementReferenceException, NoSuchElementException):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    @property
    def heading(self) -> str:
        return self.read_text(By.TAG_NAME, "h1")

    @property
    def text(self) -> str:
        return self.read_text(By.TAG_NAME, "body")

    def login(self, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> None:
        self.open("/login")
        self.browser.delete_all_cookies()
        self.open("/login")
        self.fill("Email", email)
        self.fill("Password", password)
        self.click_button("Log In")

    def logout(self) -> None:
        self.click_button("Log Out")

    # forms, by what a person reads

    def field(self, label: str):
        """The input, textarea or select that a visible <label> names."""
        element = self.browser.find_element(By.XPATH, f"//label[normalize-space()={xpath_literal(label)}]")
        assert element.is_displayed(), f"label {label!r} is not visible"
        return self.browser.find_element(By.ID, element.get_attribute("for"))

    def fill(self, label: str, value: str) -> None:
        element = self.field(label)
        if element.tag_name == "select":
            select = Select(element)
            try:
                select.select_by_visible_text(value)
            except NoSuchElementException:
                select.select_by_value(value)
        else:
            element.clear()
            if value:
                element.send_keys(value)

    def value(self, label: str) -> str:
        element = self.field(label)
        if element.tag_name == "select":
            return Select(element).first_selected_option.text
        return element.get_attribute("value")

    def error_for(self, label: str) -> str:
        """The error shown right beside the field (same .field block)."""
        element = self.field(label)
        errors = element.find_elements(By.XPATH, "./following-sibling::p[contains(@class, 'field-error')]")
        return errors[0].text if errors else ""

    def navigate(self, element) -> None:
        """Clicks `element` and waits until the next page replaced this one."""
        page = self.browser.find_element(By.TAG_NAME, "html")
        element.click()

        def replaced(_):
            try:
                page.tag_name
                return False
            except WebDriverException:  # stale, or (Chrome) "node does not belong to the document"
                return True
        WebDriverWait(self.browser, 30).until(replaced)

    def click_button(self, text: str, index: int = 0) -> None:
        buttons = self.browser.find_elements(By.XPATH, f"//button[normalize-space()={xpath_literal(text)}]")
        assert buttons, f"no button {text!r} on {self.path}"
        self.navigate(buttons[index])

    def click_labelled(self, aria_label: str) -> None:
        """A button by its accessible name (e.g. "Move down: Historic Quad")."""
        self.navigate(self.browser.find_element(By.XPATH, f"//button[@aria-label={xpath_literal(aria_label)}]"))

    def click_link(self, text: str, index: int = 0) -> None:
        links = self.browser.find_elements(By.XPATH, f"//main//a[normalize-space()={xpath_literal(text)}]")
        assert links, f"no link {text!r} on {self.path}"
        self.navigate(links[index])

    def click_in_row(self, row_text: str, link_text: str) -> None:
        """A link in the table row that contains `row_text` (e.g. a tour's Delete)."""
        self.navigate(self.row(row_text).find_element(By.LINK_TEXT, link_text))

    def row(self, text: str):
        """The table row that contains `text`."""
        return self.browser.find_element(By.XPATH, f"//tr[td[contains(normalize-space(), {xpath_literal(text)})]]")

    def alert_text(self) -> str | None:
        try:
            return self.browser.switch_to.alert.text
        except NoAlertPresentException:
            return None

    # content

    def create_tour(self, name: str, purpose: str = "A tour made by a browser test.") -> str:
        self.open("/tours")
        self.click_link("Create New Tour")
        self.fill("Tour's Name", name)
        self.fill("Tour's Purpose", purpose)
        self.click_button("Save")
        assert self.heading == "Manage Tour", self.text
        return re.search(UUID_RE, self.path).group(0)

    def add_poi(self, tour_id: str, name: str, latitude: str, longitude: str, description: str = "") -> str:
        self.open(f"/tours/{tour_id}")
        self.click_link("Add New POI")
        assert self.heading == "Manage Point of Interest"
        self.fill("Name", name)
        self.fill("Latitude", latitude)
        self.fill("Longitude", longitude)
        if description:
            self.fill("Description", description)
        self.click_button("Save")
        assert "Created." in self.text, self.text
        return re.search(UUID_RE, self.path).group(0)

    def create_user(self, role: str, password: str = "browser-test-pass") -> tuple[str, str]:
        email = f"{role}-{uuid.uuid4().hex[:8]}@example.edu"
        self.open("/users")
        self.fill("Email", email)
        self.fill("Role", role.capitalize())
        self.fill("Password", password)
        self.click_button("Save", index=len(self.browser.find_elements(By.XPATH, "//button[normalize-space()='Save']")) - 1)
        assert "User saved." in self.text, self.text
        return email, password

    # the same session outside the browser

    def http(self) -> requests.Session:
        """A requests session carrying the browser's cookies."""
        session = requests.Session()
        for cookie in self.browser.get_cookies():
            session.cookies.set(cookie["name"], cookie["value"])
        return session

    def csrf_token(self) -> str:
        return self.browser.find_element(By.NAME, "csrf_token").get_attribute("value")


def feed_tours(suite) -> list[dict]:
    with urllib.request.urlopen(suite.feed_url + "/v1/tours", timeout=5) as response:
        return json.load(response)["tours"]


def eventually(condition, timeout: float = 10.0, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


@pytest.fixture
def site(suite, browser) -> AdminSite:
    """The admin site, signed in as the demo owner."""
    admin = AdminSite(suite, browser)
    admin.login()
    assert admin.heading == "Tours Administration", admin.text
    return admin
