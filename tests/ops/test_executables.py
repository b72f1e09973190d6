"""The five executables as operators meet them (issue 15): --help and --version, usage errors (exit 64), a
failure at start as one log line and exit 1 (never Swift's "Fatal error" and a crash report), LOG_LEVEL and
LOG_FORMAT checked at start, and `config --json`, the list of environment variables each one reads."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

BIN_DIR = Path(os.environ.get("ITOUR_BIN_DIR", ROOT / ".build" / "debug"))
SERVICES = ("catalog", "feed", "analytics", "admin")
EXECUTABLES = SERVICES + ("itour-bench",)
# What a crash report or an uncaught top-level error prints; none of it may appear.
CRASH_MARKS = ("Fatal error", "Stack dump", "Current stack trace", "Backtrace", "💣", "Error raised at top level")
LEVELS = ("trace", "debug", "info", "notice", "warning", "error", "critical")
SHARED = {"HTTP_HOST", "HTTP_PORT", "HTTP_IDLE_TIMEOUT_SECONDS", "KAFKA_BROKERS", "KAFKA_TOPIC_PREFIX", "KAFKA_DELIVERY_TIMEOUT_MS",
          "KAFKA_LINGER_MS", "KAFKA_FETCH_WAIT_MS", "CONSUMER_STALL_SECONDS", "LOG_LEVEL", "LOG_FORMAT", "ITOUR_VERSION", "METRICS_TOKEN",
          # Kafka TLS and SASL (issue 43)
          "KAFKA_SECURITY_PROTOCOL", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD", "KAFKA_SSL_CA_LOCATION",
          "KAFKA_SSL_CERTIFICATE_LOCATION", "KAFKA_SSL_KEY_LOCATION"}
POSTGRES = {"POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB", "POSTGRES_MAX_CONNECTIONS",
            "POSTGRES_SSLMODE", "POSTGRES_SSL_ROOT_CERT"}
# Signed commands (issue 43): catalog checks them, the admin signs them.
COMMAND_KEYS = {"CATALOG_COMMAND_KEY", "CATALOG_COMMAND_KEY_PREVIOUS"}
EXPECTED = {
    "catalog": SHARED | POSTGRES | COMMAND_KEYS | {"ITOUR_DEMO", "CATALOG_SNAPSHOT_WINDOW_MS"},
    # The feed reads media files from the media store in Postgres (DESIGN.md, "Media library").
    "feed": SHARED | POSTGRES | {"FEED_EVENTS_PER_MINUTE_PER_DEVICE", "FEED_EVENTS_PER_MINUTE_PER_CLIENT", "SITE_TIME_ZONE", "SITE_LANGUAGE", "SITE_LANGUAGES",
                                 "SITE_PUBLIC_HOLIDAYS", "FEED_PUBLIC_URL", "FEED_MEDIA_CACHE_BYTES", "FEED_MAX_CONNECTIONS_PER_CLIENT",
                                 "TRUSTED_PROXIES", "FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT"},
    "analytics": SHARED | POSTGRES | {"REPORTS_TOKEN", "ITOUR_DEMO", "ANALYTICS_BATCH_SIZE", "REPORTS_TOKEN_FAILURES_PER_MINUTE", "TRUSTED_PROXIES",
                                      "ANALYTICS_ID_KEY", "ANALYTICS_RETENTION_DAYS", "ERASURE_TOKEN"},
    "admin": SHARED | POSTGRES | {"ITOUR_DEMO", "ADMIN_EMAIL", "ADMIN_PASSWORD", "REPORTS_TOKEN", "CATALOG_URL", "FEED_URL", "ANALYTICS_URL",
                                  "ADMIN_COOKIE_SECURE", "ADMIN_SESSION_HOURS", "ADMIN_BCRYPT_COST", "ADMIN_COMMAND_TIMEOUT_SECONDS",
                                  "ADMIN_LOGIN_FAILURES_PER_ACCOUNT", "ADMIN_LOGIN_FAILURES_PER_ADDRESS", "ADMIN_LOGIN_DELAY_SECONDS",
                                  "ADMIN_LOGIN_MAX_DELAY_SECONDS", "ADMIN_MAP_TILES_URL", "ADMIN_MAP_ATTRIBUTION", "ADMIN_LEAFLET_DIR",
                                  "FEED_PUBLIC_URL", "MEDIA_MAX_BYTES", "MEDIA_MAX_PIXELS", "ADMIN_PUBLIC_URL", "TRUSTED_PROXIES",
                                  "ADMIN_IMPORT_LEASE_SECONDS", "ADMIN_IMPORT_HEARTBEAT_SECONDS", "SITE_TIME_ZONE",
                                  "SITE_LANGUAGE", "SITE_LANGUAGES"}
             | COMMAND_KEYS,
}
SECRETS = {"POSTGRES_PASSWORD", "ADMIN_PASSWORD", "REPORTS_TOKEN", "METRICS_TOKEN", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD", "ANALYTICS_ID_KEY", "ERASURE_TOKEN"} | COMMAND_KEYS
REQUIRED = {"catalog": {"CATALOG_COMMAND_KEY"}, "analytics": {"REPORTS_TOKEN", "ANALYTICS_ID_KEY"},
            "admin": {"ADMIN_EMAIL", "ADMIN_PASSWORD", "REPORTS_TOKEN", "ADMIN_PUBLIC_URL", "CATALOG_COMMAND_KEY"}}


def clean_env(**extra: str) -> dict:
    """This process's environment without any setting a service reads, plus `extra`."""
    prefixes = ("POSTGRES_", "KAFKA_", "LOG_", "ITOUR_", "ADMIN_", "HTTP_", "REPORTS_", "FEED_", "CATALOG_", "ANALYTICS_", "CONSUMER_", "SITE_",
                "METRICS_", "TRUSTED_", "MEDIA_", "ERASURE_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(prefixes)}
    lib = str(ROOT / ".local" / "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.update(extra)
    return env


def run(name: str, *args: str, timeout: float = 30, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN_DIR / name), *args], env=clean_env(**env), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line_failure(result: subprocess.CompletedProcess) -> str:
    """Exit 1 with exactly one critical log line (JSON, the default format) and no crash report; returns its message."""
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for mark in CRASH_MARKS:
        assert mark not in output, output
    critical = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{") and '"critical"' in line]
    assert len(critical) == 1, output
    assert [line for line in result.stderr.splitlines() if '"level":"error"' in line] == [], output
    return critical[0]["msg"]


@pytest.mark.parametrize("name", EXECUTABLES)
def test_help_and_version(name):
    help = run(name, "--help")
    assert help.returncode == 0, help.stderr
    assert "USAGE:" in help.stdout and "SUBCOMMANDS:" in help.stdout
    assert f"{name} config --json" in help.stdout  # the environment, as the discussion names it
    version = run(name, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, "0.1.0"), version.stderr
    assert run(name, "--version", ITOUR_VERSION="1.2.3-test").stdout.strip() == "1.2.3-test"


@pytest.mark.parametrize("name,subcommands", [("catalog", ("serve", "import", "load-demo", "config")), ("feed", ("serve", "config")),
                                              ("analytics", ("serve", "replay", "config")), ("admin", ("serve", "config")),
                                              ("itour-bench", ("thin-path", "admin-path", "generate-city", "feed-queries",
                                                               "feed-event-bodies", "analytics", "config"))])
def test_help_lists_the_subcommands_and_serve_is_the_default(name, subcommands):
    help = run(name, "--help").stdout
    listed = help.split("SUBCOMMANDS:")[1]
    for subcommand in subcommands:
        assert f"\n  {subcommand}" in listed, (subcommand, help)
    if name != "itour-bench":
        assert "serve (default)" in listed
        assert run(name, "serve", "--help").returncode == 0


@pytest.mark.parametrize("args", [("catalog", "--no-such-flag"), ("feed", "--no-such-flag"), ("analytics", "--no-such-flag"),
                                  ("admin", "--port", "1"), ("itour-bench", "--no-such-flag"), ("itour-bench", "thin-path", "--runs", "many"),
                                  ("catalog", "import"), ("catalog", "import", "a.json", "--skip-all"),
                                  ("analytics", "replay"), ("analytics", "replay", "--from-beginning", "--activate"),
                                  ("analytics", "replay", "--activate", "--schema", "analytics"), ("feed", "nothing")])
def test_a_bad_command_line_is_a_usage_error(args):
    result = run(*args)
    assert result.returncode == 64, (result.stdout, result.stderr)
    assert "Usage:" in result.stderr or "USAGE:" in result.stderr, result.stderr
    for mark in CRASH_MARKS:
        assert mark not in result.stderr


@pytest.mark.parametrize("name", SERVICES)
def test_a_mistyped_log_level_is_refused_at_start_naming_the_valid_values(name):
    message = assert_one_line_failure(run(name, LOG_LEVEL="loud", ITOUR_DEMO="1"))
    assert "LOG_LEVEL" in message and '"loud"' in message, message
    for level in LEVELS:
        assert level in message, message


@pytest.mark.parametrize("name", SERVICES)
def test_a_mistyped_log_format_is_refused_at_start_naming_the_valid_values(name):
    message = assert_one_line_failure(run(name, LOG_FORMAT="xml", ITOUR_DEMO="1"))
    assert "LOG_FORMAT" in message and "json" in message and "text" in message and '"xml"' in message, message


@pytest.mark.parametrize("value", ["-1", "60000", "soon"])
def test_a_fetch_wait_librdkafka_would_refuse_is_refused_at_start_naming_it(value):
    message = assert_one_line_failure(run("feed", KAFKA_FETCH_WAIT_MS=value))
    assert "KAFKA_FETCH_WAIT_MS" in message, message


@pytest.mark.parametrize("variables, named", [
    ({"KAFKA_LINGER_MS": "-1"}, "KAFKA_LINGER_MS"),
    ({"KAFKA_LINGER_MS": "1000000"}, "KAFKA_LINGER_MS"),
    ({"KAFKA_LINGER_MS": "soon"}, "KAFKA_LINGER_MS"),
    ({"KAFKA_DELIVERY_TIMEOUT_MS": "2"}, "KAFKA_DELIVERY_TIMEOUT_MS"),
    ({"KAFKA_DELIVERY_TIMEOUT_MS": "5000", "KAFKA_LINGER_MS": "5000"}, "KAFKA_DELIVERY_TIMEOUT_MS"),
    ({"KAFKA_DELIVERY_TIMEOUT_MS": "2147483648"}, "KAFKA_DELIVERY_TIMEOUT_MS"),
])
def test_producer_timings_librdkafka_would_refuse_are_refused_at_start_naming_the_variable(variables, named):
    message = assert_one_line_failure(run("feed", **variables))
    assert named in message, message
    assert "linger.ms" not in message and "queue.buffering" not in message, message


def test_a_missing_required_secret_is_refused_at_start_naming_it():
    message = assert_one_line_failure(run("analytics"))
    assert "REPORTS_TOKEN" in message and "demo mode" in message, message


def test_analytics_refuses_to_start_without_its_id_key_or_with_a_short_one():
    """docs/PRIVACY.md: outside demo mode the pseudonyms' key is required, and a key under 16 bytes is refused; so is a
    retention shorter than what a late event needs."""
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token"))
    assert "ANALYTICS_ID_KEY" in message and "demo mode" in message, message
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token", ANALYTICS_ID_KEY="short"))
    assert "ANALYTICS_ID_KEY" in message and "16 bytes" in message, message
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token", ANALYTICS_ID_KEY="a-long-enough-test-key",
                                          ANALYTICS_RETENTION_DAYS="44"))
    # docs/ANALYTICS.md "Retention": 45 days at least, a late event read as late as tracking.events keeps it.
    assert "ANALYTICS_RETENTION_DAYS" in message and "45 to 36600" in message, message


def test_analytics_refuses_the_templates_placeholder_key_the_demo_key_outside_demo_and_an_erasure_token_equal_to_the_reports_one():
    """docs/PRIVACY.md: deploy/kubernetes/secret.template.yaml's placeholder is not a key; the demo key is public; erasing
    needs a token of its own."""
    placeholder = re.search(r'ANALYTICS_ID_KEY: "([^"]+)"', (ROOT / "deploy" / "kubernetes" / "secret.template.yaml").read_text()).group(1)
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token", ANALYTICS_ID_KEY=placeholder))
    assert "ANALYTICS_ID_KEY" in message and "placeholder" in message, message
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token", ANALYTICS_ID_KEY="itour-demo-analytics-id-key"))
    assert "ANALYTICS_ID_KEY" in message and "demo" in message, message
    message = assert_one_line_failure(run("analytics", REPORTS_TOKEN="a-reports-token", ANALYTICS_ID_KEY="a-long-enough-test-key",
                                          ERASURE_TOKEN="a-reports-token"))
    assert "ERASURE_TOKEN" in message and "REPORTS_TOKEN" in message, message


def test_unreachable_postgres_ends_the_start_with_one_log_line_and_exit_1(tmp_path):
    """The broker is up (make test's), Postgres is not: catalog retries its migrations (a compose start waits for
    Postgres this way), then gives up with one line that says where it looked."""
    result = run("catalog", timeout=180, POSTGRES_HOST="127.0.0.1", POSTGRES_PORT="1", HTTP_PORT="0", CATALOG_COMMAND_KEY="a-test-command-key",
                 KAFKA_BROKERS=os.environ.get("ITOUR_TEST_KAFKA_BROKERS", "127.0.0.1:9094"), KAFKA_TOPIC_PREFIX=f"{tmp_path.name}.")
    message = assert_one_line_failure(result)
    assert "Postgres (127.0.0.1:1)" in message, message


def config(name: str) -> list:
    result = run(name, "config", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", SERVICES)
def test_config_json_lists_what_each_service_reads(name):
    variables = config(name)
    for variable in variables:
        assert set(variable) == {"name", "required", "secret", "default", "description"}, variable
        assert isinstance(variable["required"], bool) and isinstance(variable["secret"], bool), variable
        assert variable["default"] is None or isinstance(variable["default"], str), variable
        assert variable["description"], variable
        if variable["required"]:
            assert variable["default"] is None, variable
    names = [variable["name"] for variable in variables]
    assert len(names) == len(set(names)), names
    assert set(names) == EXPECTED[name]
    assert {v["name"] for v in variables if v["secret"]} == SECRETS & EXPECTED[name]
    assert {v["name"] for v in variables if v["required"]} == REQUIRED.get(name, set())
    assert "SESSION_SECRET" not in names
    defaults = {v["name"]: v["default"] for v in variables}
    assert defaults["HTTP_PORT"] == {"feed": "8080", "admin": "8081", "catalog": "8082", "analytics": "8083"}[name]
    assert defaults["LOG_LEVEL"] == "info" and defaults["LOG_FORMAT"] == "json" and defaults["ITOUR_VERSION"] == "0.1.0"


def test_config_without_json_is_a_table_for_people():
    result = run("admin", "config")
    assert result.returncode == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "required outside demo mode; secret" in lines["ADMIN_PASSWORD"]
    assert "default 8081" in lines["HTTP_PORT"]
