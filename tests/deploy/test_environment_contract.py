"""docker-compose.yml and deploy/kubernetes against what each service says it reads.

The list is the one in the code (`<service> config --json`: name, required, secret, default,
description). For each of the four services, compose and Kubernetes must set every variable it
requires and nothing it does not read; Kubernetes' shared ConfigMap (envFrom, every pod) holds only
what some service reads, and a pod gets only its own secrets, each by key from the Secret (never a
plain value, never the whole Secret).
"""
from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from test_deploy import COMPOSE, K8S, compose_config, load_manifests, _named

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("ITOUR_BIN_DIR", ROOT / ".build" / "debug"))
SERVICES = ("catalog", "feed", "analytics", "admin")


@pytest.fixture(scope="module")
def contract() -> dict[str, dict[str, dict]]:
    out = {}
    for service in SERVICES:
        result = subprocess.run([str(BIN_DIR / service), "config", "--json"], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, f"{service} config --json: {result.stderr}"
        variables = json.loads(result.stdout)
        out[service] = {v["name"]: v for v in variables}
    return out


def check_set(where: str, service: str, reads: dict[str, dict], sets: set[str], own: set[str]) -> list[str]:
    """`sets`: every variable the service gets; `own`: those set for it alone (must all be read by it)."""
    problems = [f"{where}: {service} does not set {name}, which it requires"
                for name, v in sorted(reads.items()) if v["required"] and name not in sets]
    problems += [f"{where}: {service} sets {name}, which it does not read" for name in sorted(own - set(reads))]
    return problems


def check_compose(cfg: dict, contract) -> list[str]:
    problems = []
    for name in (*SERVICES, "demo"):
        reads = contract["catalog" if name == "demo" else name]
        sets = set(cfg["services"][name].get("environment", {}))
        problems += check_set("compose", name, reads, sets, sets)
    return problems


def check_kubernetes(docs: list[tuple[str, dict]], contract) -> list[str]:
    problems = []
    read_by_any = set().union(*(set(reads) for reads in contract.values()))
    for config_map in (d for _, d in docs if d["kind"] == "ConfigMap"):
        for name in sorted(set(config_map.get("data", {})) - read_by_any):
            problems.append(f"kubernetes: ConfigMap {config_map['metadata']['name']} sets {name}, which no service reads")
    for service in SERVICES:
        deployment = _named(docs, "Deployment", service)
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        reads = contract[service]
        sets: set[str] = set()
        own: set[str] = set()
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                config_map = _named(docs, "ConfigMap", source["configMapRef"]["name"])
                sets |= set(config_map.get("data", {}))
                for name in config_map.get("data", {}):
                    if reads.get(name, {}).get("secret"):
                        problems.append(f"kubernetes: {service} gets the secret {name} from a ConfigMap")
            if "secretRef" in source:
                problems.append(f"kubernetes: {service} gets the whole Secret {source['secretRef']['name']}")
        for variable in container.get("env", []):
            name = variable["name"]
            sets.add(name)
            own.add(name)
            # A key of the Secret the service does not read shows up below as "sets …, which it does not read".
            from_secret = "secretKeyRef" in variable.get("valueFrom", {})
            secret = reads.get(name, {}).get("secret", False)
            if secret and not from_secret:
                problems.append(f"kubernetes: {service} has the secret {name} as a plain value")
        problems += check_set("kubernetes", service, reads, sets, own)
    return problems


def test_each_service_lists_what_it_reads(contract):
    for service, reads in contract.items():
        assert {"HTTP_PORT", "KAFKA_BROKERS", "LOG_LEVEL", "LOG_FORMAT"} <= set(reads), service
        assert all(isinstance(v["required"], bool) and isinstance(v["secret"], bool) and v["description"]
                   for v in reads.values()), service
    assert contract["admin"]["ADMIN_PASSWORD"]["secret"] and contract["analytics"]["REPORTS_TOKEN"]["secret"]
    assert {"CATALOG_URL", "FEED_URL", "ANALYTICS_URL"} <= set(contract["admin"])
    assert "SESSION_SECRET" not in set().union(*contract.values())
    # The feed reads media files from the media store in Postgres (DESIGN.md, "Media library").
    assert "POSTGRES_PASSWORD" in contract["catalog"] and "POSTGRES_PASSWORD" in contract["feed"]


def test_compose_sets_what_each_service_reads(contract):
    result = compose_config(COMPOSE)
    assert result.returncode == 0, result.stderr
    assert check_compose(yaml.safe_load(result.stdout), contract) == []


def test_kubernetes_sets_what_each_service_reads_and_only_its_own_secrets(contract):
    assert check_kubernetes(load_manifests(K8S), contract) == []


def test_the_checks_notice_a_missing_a_stray_and_a_leaked_variable(contract):
    broken = copy.deepcopy(load_manifests(K8S))
    analytics = _named(broken, "Deployment", "analytics")["spec"]["template"]["spec"]["containers"][0]
    analytics["env"] = [v for v in analytics["env"] if v["name"] != "REPORTS_TOKEN"]
    feed = _named(broken, "Deployment", "feed")["spec"]["template"]["spec"]["containers"][0]
    feed["env"].append({"name": "ADMIN_PASSWORD",
                        "valueFrom": {"secretKeyRef": {"name": "itour-secrets", "key": "ADMIN_PASSWORD"}}})
    feed["env"].append({"name": "SESSION_SECRET", "value": "x"})
    _named(broken, "ConfigMap", "itour-config")["data"]["SESSION_SECRET"] = "y"
    problems = check_kubernetes(broken, contract)
    assert "kubernetes: ConfigMap itour-config sets SESSION_SECRET, which no service reads" in problems
    assert "kubernetes: analytics does not set REPORTS_TOKEN, which it requires" in problems
    assert "kubernetes: feed sets ADMIN_PASSWORD, which it does not read" in problems
    assert "kubernetes: feed sets SESSION_SECRET, which it does not read" in problems

    result = compose_config(COMPOSE)
    cfg = yaml.safe_load(result.stdout)
    cfg["services"]["feed"]["environment"]["SESSION_SECRET"] = "x"
    del cfg["services"]["analytics"]["environment"]["REPORTS_TOKEN"]
    problems = check_compose(cfg, contract)
    assert "compose: feed sets SESSION_SECRET, which it does not read" in problems
    assert "compose: analytics does not set REPORTS_TOKEN, which it requires" in problems


def test_each_service_gets_a_pool_size_of_its_own(contract):
    """Issue 44: every replica opens its own pool, so each Deployment (and each compose service) sets the size its
    service needs rather than the default 10; compose and Kubernetes agree (the budget: test_deploy.pool_budget)."""
    docs = load_manifests(K8S)
    result = compose_config(COMPOSE)
    assert result.returncode == 0, result.stderr
    compose = yaml.safe_load(result.stdout)
    for service in SERVICES:
        assert "POSTGRES_MAX_CONNECTIONS" in contract[service], f"{service} does not read POSTGRES_MAX_CONNECTIONS"
        container = _named(docs, "Deployment", service)["spec"]["template"]["spec"]["containers"][0]
        own = {e["name"]: e.get("value") for e in container.get("env", [])}
        assert str(own.get("POSTGRES_MAX_CONNECTIONS", "")).isdigit(), f"kubernetes: {service} sets no pool size of its own"
        in_compose = compose["services"][service]["environment"].get("POSTGRES_MAX_CONNECTIONS")
        assert str(in_compose) == own["POSTGRES_MAX_CONNECTIONS"], f"compose and kubernetes give {service} different pools"
