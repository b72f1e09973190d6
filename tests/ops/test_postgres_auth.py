"""Issue 43, item 5: make up's Postgres is closed. scripts/postgres.sh in its password mode (POSTGRES_SECRETS_DIR,
what scripts/up.sh runs) asks every connection for a password (scram-sha-256), and the services' role `itour`
owns database itour without being a superuser. A cluster made with trust before is closed in place, its data kept.

Each test starts clusters of its own with scripts/postgres.sh on free ports in temporary directories, so this
runs inside `make test` without `make up`.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, free_port

PG_BIN = Path("/usr/lib/postgresql/15/bin")
SCRIPT = ROOT / "scripts" / "postgres.sh"

pytestmark = pytest.mark.skipif(not (PG_BIN / "pg_ctl").exists(), reason="PostgreSQL 15 is not installed (scripts/install.sh)")


class Cluster:
    def __init__(self, root: Path, port: int):
        self.dir, self.port, self.secrets = root / "pg", port, root / "secrets"

    def run(self, *args: str, passwords: bool = True) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "POSTGRES_"))}
        if passwords:
            env["POSTGRES_SECRETS_DIR"] = str(self.secrets)
        return subprocess.run(["bash", str(SCRIPT), *args, str(self.dir), str(self.port)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)

    def start(self, passwords: bool = True) -> str:
        result = self.run("start", passwords=passwords)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def stop(self) -> None:
        self.run("stop", passwords=False)

    def remove(self) -> None:
        self.stop()
        real = self.dir.resolve()   # as root, a link into /var/tmp (postgres.sh)
        shutil.rmtree(real, ignore_errors=True)
        if self.dir.is_symlink():
            self.dir.unlink()

    def password(self, role: str = "itour") -> str:
        name = "postgres-password" if role == "itour" else "postgres-admin-password"
        return (self.secrets / name).read_text().strip()

    def psql(self, sql: str, user: str = "itour", password: str | None = None, host: str = "127.0.0.1",
             db: str = "itour") -> subprocess.CompletedProcess:
        """psql as USER; no password at all unless one is given (never a prompt, no ~/.pgpass)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGPASSFILE"] = os.devnull
        if password is not None:
            env["PGPASSWORD"] = password
        return subprocess.run([str(PG_BIN / "psql"), "-X", "-w", "-h", host, "-p", str(self.port), "-U", user, "-d", db,
                               "-v", "ON_ERROR_STOP=1", "-tA", "-c", sql], env=env, capture_output=True, text=True, timeout=30)

    def query(self, sql: str, user: str = "itour") -> str:
        result = self.psql(sql, user=user, password=self.password(user))
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()


@pytest.fixture(scope="module")
def closed(tmp_path_factory) -> Cluster:
    cluster = Cluster(tmp_path_factory.mktemp("pg-auth"), free_port())
    cluster.start()
    yield cluster
    cluster.remove()


def refused(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 and ("password" in result.stderr)


def test_passwords_are_made_once_into_private_files(closed):
    assert stat.S_IMODE(closed.secrets.stat().st_mode) == 0o700
    for role in ("itour", "itour_admin"):
        name = "postgres-password" if role == "itour" else "postgres-admin-password"
        path = closed.secrets / name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert len(closed.password(role)) == 48 and int(closed.password(role), 16) >= 0
    assert closed.password("itour") != closed.password("itour_admin")


@pytest.mark.parametrize("user", ["itour", "itour_admin"])
def test_no_password_is_refused_over_tcp(closed, user):
    result = closed.psql("SELECT 1", user=user)
    assert refused(result), result.stdout + result.stderr


@pytest.mark.parametrize("user", ["itour", "itour_admin"])
def test_no_password_is_refused_on_the_socket(closed, user):
    result = closed.psql("SELECT 1", user=user, host=str(closed.dir.resolve()))
    assert refused(result), result.stdout + result.stderr


def test_a_wrong_password_is_refused(closed):
    result = closed.psql("SELECT 1", password=closed.password("itour_admin"))
    assert result.returncode != 0 and "password authentication failed" in result.stderr, result.stderr


def test_itour_logs_in_with_its_password_and_is_no_superuser(closed):
    assert closed.query("SELECT current_user") == "itour"
    assert closed.query("SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user") == "f|f|f"
    assert closed.query("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'itour'") == "itour"


@pytest.mark.parametrize("sql, error", [
    ("SELECT pg_read_file('/etc/passwd')", "permission denied"),
    ("SELECT rolpassword FROM pg_authid", "permission denied"),
    ("COPY (SELECT 1) TO PROGRAM 'true'", "must be superuser"),
    ("CREATE ROLE intruder LOGIN SUPERUSER", "must be superuser"),
    ("ALTER ROLE itour SUPERUSER", "must be superuser"),
])  # fmt: skip
def test_what_only_a_superuser_may_is_refused_to_itour(closed, sql, error):
    result = closed.psql(sql, password=closed.password("itour"))
    assert result.returncode != 0 and error in result.stderr, result.stdout + result.stderr


def test_itour_does_what_the_services_do(closed):
    """Schemas of its own, tables, migrations under an advisory lock (Shared/Core/Postgres/MigrationRunner.swift)."""
    out = closed.query("SELECT pg_advisory_lock(hashtext('itour.migrations.catalog'));"
                       "CREATE SCHEMA IF NOT EXISTS catalog;"
                       "CREATE TABLE catalog.probe (id bigserial PRIMARY KEY, name text NOT NULL);"
                       "CREATE INDEX probe_name ON catalog.probe (name);"
                       "INSERT INTO catalog.probe (name) VALUES ('x');"
                       "SELECT count(*) FROM catalog.probe;")
    assert out.splitlines()[-1] == "1"


def test_the_admin_role_is_the_superuser(closed):
    assert closed.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user", user="itour_admin") == "t"


def test_a_restart_keeps_the_passwords(closed):
    # Its own row to find after the restart (it must not depend on another test having run first).
    closed.query("CREATE SCHEMA IF NOT EXISTS restart; CREATE TABLE restart.kept (name text); INSERT INTO restart.kept VALUES ('x')")
    before = (closed.password("itour"), closed.password("itour_admin"))
    closed.stop()
    out = closed.start()
    assert "made a password" not in out and "password set" not in out, out
    assert (closed.password("itour"), closed.password("itour_admin")) == before
    assert closed.query("SELECT count(*) FROM restart.kept") == "1"
    assert refused(closed.psql("SELECT 1"))


def test_trust_mode_refuses_a_cluster_that_asks_for_passwords(closed):
    result = closed.run("start", passwords=False)
    assert result.returncode != 0 and "POSTGRES_SECRETS_DIR" in result.stderr, result.stdout + result.stderr


def test_a_trust_cluster_is_closed_in_place_with_its_data(tmp_path):
    """An older .run/pg: made with trust, bootstrap superuser itour, the services' tables in it."""
    cluster = Cluster(tmp_path, free_port())
    try:
        cluster.start(passwords=False)
        made = cluster.psql("CREATE SCHEMA catalog;"
                            "CREATE TABLE catalog.tours (id bigserial PRIMARY KEY, name text NOT NULL);"
                            "INSERT INTO catalog.tours (name) SELECT 'tour ' || g FROM generate_series(1, 250) g;"
                            "CREATE VIEW catalog.names AS SELECT name FROM catalog.tours;"
                            "CREATE TYPE catalog.mood AS ENUM ('calm', 'busy');"
                            "CREATE SCHEMA analytics; CREATE TABLE analytics.days (day date PRIMARY KEY);")
        assert made.returncode == 0, made.stderr
        assert cluster.psql("SELECT rolsuper FROM pg_roles WHERE rolname = 'itour'").stdout.strip() == "t"

        out = cluster.start()   # running still, as make up finds it
        assert "closing it" in out and "now asks every connection for a password" in out, out

        assert refused(cluster.psql("SELECT 1")), "itour still gets in without a password"
        assert cluster.query("SELECT count(*) FROM catalog.tours") == "250"
        assert cluster.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") == "f"
        owners = cluster.query("SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c "
                               "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('catalog', 'analytics')")
        assert owners == "itour"
        assert cluster.query("SELECT string_agg(pg_get_userbyid(nspowner), ',') FROM pg_namespace "
                             "WHERE nspname IN ('catalog', 'analytics')") == "itour,itour"
        # The services go on as before: write, and migrate further.
        cluster.query("INSERT INTO catalog.tours (name) VALUES ('new'); ALTER TABLE analytics.days ADD COLUMN n int;"
                      "CREATE SCHEMA admin;")
        assert cluster.query("SELECT rolname FROM pg_roles WHERE oid = 10", user="itour_admin") == "itour_admin"
        assert refused(cluster.psql("SELECT 1", user="itour_admin"))

        again = cluster.start()   # a second make up: nothing left to close
        assert "closing" not in again, again
    finally:
        cluster.remove()
