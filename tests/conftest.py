"""Shared fixtures for the Python tests (browser, API and fault tests).

`suite` runs the four real service binaries (from $ITOUR_BIN_DIR, default .build/debug) against the
Postgres and broker that `make test` started (ITOUR_TEST_POSTGRES_PORT, ITOUR_TEST_KAFKA_BROKERS), on a
fresh database and a fresh topic prefix, with the demo content loaded. `browser` is headless Chromium.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("catalog", "feed", "analytics", "admin")
ADMIN_EMAIL = "admin@example.edu"
ADMIN_PASSWORD = "itour-demo"
REPORTS_TOKEN = "itour-demo-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str, timeout: float = 2.0) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


@dataclass
class Suite:
    env: dict
    ports: dict
    log_dir: Path
    bin_dir: Path
    processes: dict = field(default_factory=dict)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    @property
    def feed_url(self) -> str:
        return self.url("feed")

    @property
    def admin_url(self) -> str:
        return self.url("admin")

    @property
    def catalog_url(self) -> str:
        return self.url("catalog")

    @property
    def analytics_url(self) -> str:
        return self.url("analytics")

    def service_env(self, name: str) -> dict:
        env = dict(self.env)
        env["HTTP_PORT"] = str(self.ports[name])
        if name in ("feed", "admin"):
            # Two languages (DESIGN.md "Languages"): the suites' answers are the site's unless a test asks for Spanish.
            env.setdefault("SITE_LANGUAGES", "en,es")
        if name == "admin":
            # Staff read and type times in the site's zone: a zone other than the machine's and the browser's UTC,
            # so a time shown or read in UTC by mistake is an hour-scale error a test sees.
            env.setdefault("SITE_TIME_ZONE", ADMIN_SITE_TIME_ZONE)
        return env

    def start(self, name: str) -> None:
        log = open(self.log_dir / f"{name}.log", "ab")
        self.processes[name] = subprocess.Popen(
            [str(self.bin_dir / name)], env=self.service_env(name), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 15) -> int | None:
        process = self.processes.pop(name, None)
        if process is None:
            return None
        process.send_signal(sig)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def wait_ready(self, names=SERVICES, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        for name in names:
            while http_status(self.url(name) + "/ready") != 200:
                process = self.processes.get(name)
                if process is not None and process.poll() is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode}; see {self.log_dir / (name + '.log')}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} not ready after {timeout}s; see {self.log_dir / (name + '.log')}")
                time.sleep(0.2)

    def run_tool(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin_dir / args[0]), *args[1:]], env=self.service_env("catalog"), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)



# The admin's SITE_TIME_ZONE in these suites (Suite.service_env).
ADMIN_SITE_TIME_ZONE = "America/New_York"

def make_database(name: str) -> None:
    port = os.environ.get("ITOUR_TEST_POSTGRES_PORT", "5434")
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", "itour", "-d", "itour", "-v", "ON_ERROR_STOP=1",
                    "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)


def start_suite(tmp_root: Path, services=SERVICES, demo: bool = True, wait: bool = True, brokers: str | None = None) -> Suite:
    """The services on a fresh database and topic prefix; `brokers` (host:port) overrides
    ITOUR_TEST_KAFKA_BROKERS, for a test that runs (and kills) a broker of its own."""
    database = "py_" + uuid.uuid4().hex[:10]
    make_database(database)
    bin_dir = Path(os.environ.get("ITOUR_BIN_DIR", ROOT / ".build" / "debug"))
    log_dir = tmp_root / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    lib = str(ROOT / ".local" / "lib")
    env = dict(os.environ)
    env.update({
        "LD_LIBRARY_PATH": lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""),
        "POSTGRES_HOST": "127.0.0.1",
        "POSTGRES_PORT": os.environ.get("ITOUR_TEST_POSTGRES_PORT", "5434"),
        "POSTGRES_DB": database,
        "KAFKA_BROKERS": brokers or os.environ.get("ITOUR_TEST_KAFKA_BROKERS", "127.0.0.1:9094"),
        "KAFKA_TOPIC_PREFIX": database + ".",
        "ITOUR_DEMO": "1",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "info",
        "HTTP_HOST": "127.0.0.1",
        # No network here: the admin's maps show pins and routes without tiles.
        "ADMIN_MAP_TILES_URL": "none",
    })
    ports = {name: free_port() for name in SERVICES}
    env["ANALYTICS_URL"] = f"http://127.0.0.1:{ports['analytics']}"
    env["FEED_URL"] = f"http://127.0.0.1:{ports['feed']}"
    # The links in QR codes: where this suite's feed answers, so a test can follow one.
    env["FEED_PUBLIC_URL"] = env["FEED_URL"]
    env["CATALOG_URL"] = f"http://127.0.0.1:{ports['catalog']}"
    suite = Suite(env=env, ports=ports, log_dir=log_dir, bin_dir=bin_dir)
    for name in services:
        suite.start(name)
    try:
        if wait:
            suite.wait_ready(services)
        if demo:
            result = suite.run_tool("catalog", "load-demo", str(ROOT / "deploy" / "demo" / "uncw-itour.json"))
            if result.returncode != 0:
                raise RuntimeError(f"load-demo failed: {result.stdout}\n{result.stderr}")
            if wait and "feed" in services:
                # load-demo returns once catalog applied it; the feed shows it a moment later.
                wait_for_demo_on_feed(suite.feed_url)
    except Exception:
        for name in list(suite.processes):
            suite.stop(name)
        raise
    return suite


def wait_for_demo_on_feed(feed_url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(feed_url + "/v1/tours", timeout=5) as response:
                if any(tour["name"] == "Students Tour (Beta)" for tour in json.load(response)["tours"]):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the demo tour did not reach {feed_url}/v1/tours within {timeout} s")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def suite(tmp_path_factory) -> Suite:
    """All four services on a fresh database and topic prefix, demo content loaded."""
    running = start_suite(tmp_path_factory.mktemp("suite"))
    yield running
    for name in list(running.processes):
        running.stop(name)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium through Selenium (PLATFORM.md)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
