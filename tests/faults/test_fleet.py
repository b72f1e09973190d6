"""Two of every service against one Postgres and one broker (issue 44), the quick form of `make fleet`.

One suite (conftest.start_suite) and a second replica of each of its services (fleet.start_replicas): two
catalogs share `catalog.commands` (its partitions split between them), two analytics share
`tracking.events`, two feeds and two admins each read `catalog.events` whole.
"""
from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from conftest import ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, start_suite  # noqa: E402
from fleet import FleetRun, print_table, start_replicas  # noqa: E402
from restarts import psql  # noqa: E402
from workload import csrf_of, login  # noqa: E402

ROUNDS = 6
# Rounds of restarts under load: 1 here (the quick form, in make test); make fleet runs more (scripts/fleet.sh).
FLEET_ROUNDS = int(os.environ.get("FLEET_ROUNDS", "1"))
RESULT = ROOT / ".run" / "fleet-result.json"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    first = start_suite(root / "a")
    try:
        second = start_replicas(first, root / "b" / "logs")
    except Exception:
        for name in list(first.processes):
            first.stop(name)
        raise
    yield first, second
    for suite in (second, first):
        for name in list(suite.processes):
            suite.stop(name)


def owner_session(admin_url: str):
    session, response = login(admin_url, ADMIN_EMAIL, ADMIN_PASSWORD)
    assert response.status_code in (302, 303), f"admin log-in failed at {admin_url}: {response.status_code}"
    return session


def test_the_same_category_through_two_catalogs_at_once_is_made_once(fleet):
    """The same name through the two admins at the same moment: each admin's command goes to its own partition
    of catalog.commands (a new id is its key), so the two catalogs handle them side by side. One category
    results, every time; the other save is refused with the clear message, never a 5xx."""
    first, second = fleet
    sessions = [owner_session(first.admin_url), owner_session(second.admin_url)]
    bases = [first.admin_url, second.admin_url]
    for round_ in range(ROUNDS):
        name = f"Fleet Race {round_}"
        tokens = [csrf_of(session.get(base + "/categories", timeout=15).text) for session, base in zip(sessions, bases)]
        start = threading.Barrier(2)
        answers: list = [None, None]

        def save(i: int) -> None:
            start.wait()
            answers[i] = sessions[i].post(bases[i] + "/categories", data={"name": name, "parent": "", "csrf_token": tokens[i]},
                                          timeout=30, allow_redirects=False)

        threads = [threading.Thread(target=save, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = sorted(answer.status_code for answer in answers)
        made = psql(first, f"SELECT count(*) FROM catalog.categories WHERE lower(path) = lower('{name}') AND deleted_at IS NULL")
        assert made == ["1"], f"round {round_}: {made} live categories named {name!r}; the saves answered {statuses}"
        assert statuses == [303, 422], f"round {round_}: the two saves answered {statuses}, not one saved and one refused"
        refused = next(answer for answer in answers if answer.status_code == 422)
        assert "There is already a category" in refused.text, re.findall(r'class="[^"]*error[^"]*"[^>]*>([^<]*)', refused.text)
    # Each save's key is a new id, so its partition, and the catalog that owns it, is chance: both catalogs must
    # have handled some of the races' commands, or the rounds proved nothing about two of them.
    handled = [sum(1 for line in (suite.log_dir / "catalog.log").read_text().splitlines()
                   if '"command handled"' in line and '"category.create"' in line) for suite in (first, second)]
    assert all(handled), f"category.create commands handled by each catalog: {handled}"


def test_a_fleet_under_load_loses_nothing_while_replicas_are_killed_restarted_and_scaled_in(fleet):
    """Steady events and saves (fleet.FleetRun) while: one analytics killed -9 and started again; each service
    restarted one replica at a time (SIGTERM, as a rollout does); one catalog stopped for good (scale-in).
    Every acknowledged event counted once, no save failed, the feed answered every read without a 5xx."""
    first, second = fleet
    with FleetRun(first, second) as run:
        run.settle()
        for round_ in range(FLEET_ROUNDS):
            run.step("analytics (second) killed -9 and started again", lambda: run.restart(second, "analytics", signal.SIGKILL))
            for name in ("catalog", "feed", "analytics", "admin"):
                for suite, which in ((first, "first"), (second, "second")):
                    run.step(f"{name} ({which}) restarted", lambda suite=suite, name=name: run.restart(suite, name))
        run.step("catalog (second) stopped for good", lambda: second.stop("catalog"))
        result = run.finish()
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2))
    print_table(result)
    assert result["violations"] == []
    assert result["events_acked"] and result["events_counted"] == result["events_acked"], result
    assert result["failed_saves"] == [], result["failed_saves"]
    assert result["saves"] > 0
    bad_reads = {status: n for status, n in result["feed_reads"].items() if status != 200}
    assert bad_reads == {}, f"feed reads that were not 200: {bad_reads}"
