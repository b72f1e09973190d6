"""Checks of the deployment files: Kubernetes manifests, docker-compose.yml and the healthcheck script
the images run. Manifests are parsed with PyYAML, compose is validated by Debian's docker-compose
(`config` runs without an engine). Which variables each service reads comes from the service itself
(`<service> config --json`): compose and Kubernetes must set every required one for each service,
nothing that service does not read, and give each pod only its own secrets. The images themselves are
built and run by `make containers` (scripts/containers.sh).

Each checker returns a list of problems; the self-tests feed broken copies to the same checkers
to prove they notice.

Run: .venv/bin/python -m pytest tests/deploy
"""

from __future__ import annotations

import copy
import http.server
import os
import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
COMPOSE = ROOT / "docker-compose.yml"
HEALTHCHECK = ROOT / "deploy" / "healthcheck.sh"

SERVICES = {"feed": 8080, "admin": 8081, "catalog": 8082, "analytics": 8083}
NAMESPACE = "itour"


# ---------------------------------------------------------------------------------------------
# Kubernetes


def load_manifests(folder: Path) -> list[tuple[str, dict]]:
    """Every document of every *.yaml in folder, as (file name, document)."""
    docs = []
    for path in sorted(folder.glob("*.yaml")):
        with path.open() as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    docs.append((path.name, doc))
    return docs


def _of_kind(docs, kind):
    return [d for _, d in docs if d.get("kind") == kind]


def _named(docs, kind, name):
    found = [d for d in _of_kind(docs, kind) if d.get("metadata", {}).get("name") == name]
    return found[0] if found else None


def _selects(selector: dict | None, labels: dict | None) -> bool:
    """A non-empty equality selector whose every pair is among labels."""
    if not selector or not labels:
        return False
    return all(labels.get(k) == v for k, v in selector.items())


def _non_root(pod_ctx: dict, ctr_ctx: dict) -> bool:
    merged = {**(pod_ctx or {}), **(ctr_ctx or {})}
    if merged.get("runAsNonRoot") is not True:
        return False
    uid = merged.get("runAsUser")
    return uid is None or uid != 0


def check_service(docs, name: str, port: int) -> list[str]:
    problems = []
    dep = _named(docs, "Deployment", name)
    if dep is None:
        return [f"{name}: no Deployment"]
    spec = dep.get("spec", {})
    tmpl = spec.get("template", {})
    pod_labels = tmpl.get("metadata", {}).get("labels", {})
    match = spec.get("selector", {}).get("matchLabels")
    if not _selects(match, pod_labels):
        problems.append(f"{name}: Deployment selector {match} does not match its pod labels {pod_labels}")

    pod = tmpl.get("spec", {})
    containers = pod.get("containers") or []
    if not containers:
        return problems + [f"{name}: Deployment has no containers"]
    ctr = next((c for c in containers if c.get("name") == name), containers[0])

    port_names = {p.get("name"): p.get("containerPort") for p in ctr.get("ports", [])}
    if port not in port_names.values():
        problems.append(f"{name}: container does not expose port {port}")
    env = {e.get("name"): e.get("value") for e in ctr.get("env", [])}
    if env.get("HTTP_PORT") != str(port):
        problems.append(f"{name}: HTTP_PORT env is {env.get('HTTP_PORT')!r}, expected {port}")

    def probe_port_ok(probe):
        p = probe.get("httpGet", {}).get("port")
        return p == port or (isinstance(p, str) and port_names.get(p) == port)

    for probe_name, path in (("readinessProbe", "/ready"), ("livenessProbe", "/health")):
        probe = ctr.get(probe_name)
        if not probe:
            problems.append(f"{name}: no {probe_name}")
            continue
        got = probe.get("httpGet", {}).get("path")
        if got != path:
            problems.append(f"{name}: {probe_name} path is {got!r}, expected {path}")
        if not probe_port_ok(probe):
            problems.append(f"{name}: {probe_name} does not target port {port}")

    resources = ctr.get("resources", {})
    for section in ("requests", "limits"):
        for res in ("cpu", "memory"):
            if not resources.get(section, {}).get(res):
                problems.append(f"{name}: no {section}.{res}")

    env_from = ctr.get("envFrom", [])
    cm_refs = [e["configMapRef"].get("name") for e in env_from if "configMapRef" in e]
    if not cm_refs:
        problems.append(f"{name}: no envFrom configMapRef")
    if any("secretRef" in e for e in env_from):
        problems.append(f"{name}: envFrom secretRef gives the pod every secret; take its own keys with secretKeyRef")
    for ref in cm_refs:
        if _named(docs, "ConfigMap", ref) is None:
            problems.append(f"{name}: configMapRef {ref!r} names no ConfigMap in the manifests")
    for variable in ctr.get("env", []):
        key_ref = variable.get("valueFrom", {}).get("secretKeyRef")
        if key_ref is None:
            continue
        secret = _named(docs, "Secret", key_ref.get("name"))
        if secret is None or key_ref.get("key") not in {**secret.get("stringData", {}), **secret.get("data", {})}:
            problems.append(f"{name}: {variable.get('name')} refers to no key of a Secret (template) in the manifests")

    for c in containers + (pod.get("initContainers") or []):
        if not _non_root(pod.get("securityContext"), c.get("securityContext")):
            problems.append(f"{name}: container {c.get('name')} may run as root")
        if (c.get("securityContext") or {}).get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: container {c.get('name')} allows privilege escalation")

    annotations = tmpl.get("metadata", {}).get("annotations", {})
    if annotations.get("prometheus.io/scrape") != "true" or annotations.get("prometheus.io/path") != "/metrics":
        problems.append(f"{name}: pod template lacks prometheus scrape annotations")
    if annotations.get("prometheus.io/port") != str(port):
        problems.append(f"{name}: prometheus.io/port is not {port}")

    svc = _named(docs, "Service", name)
    if svc is None:
        problems.append(f"{name}: no Service")
    else:
        if not _selects(svc.get("spec", {}).get("selector"), pod_labels):
            problems.append(f"{name}: Service selector does not select the Deployment's pods")
        targets = [p.get("targetPort") for p in svc.get("spec", {}).get("ports", [])]
        if not any(t == port or (isinstance(t, str) and port_names.get(t) == port) for t in targets):
            problems.append(f"{name}: Service does not target container port {port}")

    pdbs = [
        p
        for p in _of_kind(docs, "PodDisruptionBudget")
        if _selects(p.get("spec", {}).get("selector", {}).get("matchLabels"), pod_labels)
    ]
    if not pdbs:
        problems.append(f"{name}: no PodDisruptionBudget selecting its pods")
    for p in pdbs:
        if p.get("apiVersion") != "policy/v1":
            problems.append(f"{name}: PodDisruptionBudget is {p.get('apiVersion')}, expected policy/v1")
        s = p.get("spec", {})
        if ("minAvailable" in s) == ("maxUnavailable" in s):
            problems.append(f"{name}: PodDisruptionBudget needs exactly one of minAvailable/maxUnavailable")
        replicas = spec.get("replicas", 1)
        if s.get("minAvailable") is not None and isinstance(s["minAvailable"], int):
            hpa_min = min(
                (
                    h.get("spec", {}).get("minReplicas", 1)
                    for h in _of_kind(docs, "HorizontalPodAutoscaler")
                    if h.get("spec", {}).get("scaleTargetRef", {}).get("name") == name
                ),
                default=replicas,
            )
            if s["minAvailable"] >= max(replicas if "replicas" in spec else hpa_min, 1):
                problems.append(f"{name}: PodDisruptionBudget minAvailable would block every drain")
    return problems


def check_hpa(docs) -> list[str]:
    hpas = [
        h
        for h in _of_kind(docs, "HorizontalPodAutoscaler")
        if h.get("spec", {}).get("scaleTargetRef", {}).get("name") == "feed"
    ]
    if not hpas:
        return ["feed: no HorizontalPodAutoscaler targets the feed Deployment"]
    problems = []
    h = hpas[0]
    if h.get("apiVersion") != "autoscaling/v2":
        problems.append(f"feed HPA is {h.get('apiVersion')}, expected autoscaling/v2")
    s = h["spec"]
    ref = s.get("scaleTargetRef", {})
    if ref.get("kind") != "Deployment" or ref.get("apiVersion") != "apps/v1":
        problems.append("feed HPA does not target an apps/v1 Deployment")
    if not (1 <= s.get("minReplicas", 1) <= s.get("maxReplicas", 0)):
        problems.append("feed HPA needs 1 <= minReplicas <= maxReplicas")
    if not s.get("metrics"):
        problems.append("feed HPA has no metrics")
    dep = _named(docs, "Deployment", "feed")
    if dep is not None and "replicas" in dep.get("spec", {}):
        problems.append("feed Deployment sets replicas, which fights the HPA on every apply")
    return problems



# Rollouts and the fleet (issue 44): every Deployment rolls without a gap and its pods leave quietly, and the
# Postgres pools of every pod that can run at once, at the HPA's maximum plus a rollout's surge, fit Postgres.

POSTGRES_SERVER_MAX_CONNECTIONS = 100   # Postgres' default max_connections
POOL_HEADROOM = 25                      # superuser_reserved_connections (3), psql, `analytics replay`, replication, monitoring
FLEET_MIN_REPLICAS = 2                  # operators run at least two of every service (issue 44), whatever replicas says
FEED_MEDIA_READS = 4                    # the feed caps its pool at its media reads at once (MediaCache.defaultMaximumReads)
# What SIGTERM may take after preStop: ShutdownDrain's 2 s of /ready 503, a request in flight (an event waits up to
# KAFKA_DELIVERY_TIMEOUT_MS, 10 s), consumers closing (5 s) and the producer's flush (10 s).
SHUTDOWN_SECONDS = 2 + 10 + 5 + 10


def _surge(strategy: dict, replicas: int) -> int:
    value = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return -(-replicas * int(value[:-1]) // 100)   # Kubernetes rounds a surge percentage up
    return int(value)


def _env_value(docs, container: dict, variable: str) -> str | None:
    for e in container.get("env", []):
        if e.get("name") == variable:
            return e.get("value")
    for source in container.get("envFrom", []):
        config_map = _named(docs, "ConfigMap", (source.get("configMapRef") or {}).get("name"))
        if config_map and variable in config_map.get("data", {}):
            return config_map["data"][variable]
    return None


def pool_budget(docs) -> tuple[list[dict], list[str]]:
    """Per Deployment: the pods that can run at once (the HPA's maximum, or replicas, at least FLEET_MIN_REPLICAS,
    plus maxSurge), its pool (POSTGRES_MAX_CONNECTIONS) and their product; and the problems found."""
    rows, problems = [], []
    for name in SERVICES:
        dep = _named(docs, "Deployment", name)
        if dep is None:
            continue
        spec = dep.get("spec", {})
        hpa = next((h for h in _of_kind(docs, "HorizontalPodAutoscaler")
                    if h.get("spec", {}).get("scaleTargetRef", {}).get("name") == name), None)
        replicas = hpa["spec"].get("maxReplicas", 1) if hpa else spec.get("replicas", 1)
        replicas = max(replicas, FLEET_MIN_REPLICAS)
        pods = replicas + _surge(spec.get("strategy", {}), replicas)
        container = spec.get("template", {}).get("spec", {}).get("containers", [{}])[0]
        value = _env_value(docs, container, "POSTGRES_MAX_CONNECTIONS")
        if value is None or not str(value).isdigit() or int(value) < 1:
            problems.append(f"{name}: POSTGRES_MAX_CONNECTIONS is not set to a pool size ({value!r}); the default 10 per pod "
                            "does not fit a fleet")
            continue
        pool = min(int(value), FEED_MEDIA_READS) if name == "feed" else int(value)
        rows.append({"name": name, "pods": pods, "pool": pool, "total": pods * pool, "hpa": hpa is not None})
    total = sum(r["total"] for r in rows)
    budget = POSTGRES_SERVER_MAX_CONNECTIONS - POOL_HEADROOM
    if total > budget:
        problems.append(f"Postgres pools: {total} connections at the HPA maximum plus surge "
                        f"({' + '.join('%s %d x %d' % (r['name'], r['pods'], r['pool']) for r in rows)}), more than {budget} "
                        f"(max_connections {POSTGRES_SERVER_MAX_CONNECTIONS} less {POOL_HEADROOM} headroom)")
    return rows, problems


def check_rollout(docs, name: str) -> list[str]:
    """Rolls with no pod missing, leaves the endpoints before SIGTERM, has time to drain, and a PDB guards it."""
    dep = _named(docs, "Deployment", name)
    if dep is None:
        return [f"{name}: no Deployment"]
    problems = []
    spec = dep.get("spec", {})
    strategy = spec.get("strategy", {})
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        problems.append(f"{name}: strategy is {strategy.get('type')}, not RollingUpdate")
    rolling = strategy.get("rollingUpdate") or {}
    if rolling.get("maxUnavailable") not in (0, "0%"):
        problems.append(f"{name}: rollingUpdate.maxUnavailable is {rolling.get('maxUnavailable')!r}, expected 0 (start the new pod first)")
    if _surge(strategy, 1) < 1:
        problems.append(f"{name}: rollingUpdate.maxSurge is 0: with maxUnavailable 0 the rollout cannot start")
    pod = spec.get("template", {}).get("spec", {})
    container = next((c for c in pod.get("containers", []) if c.get("name") == name), (pod.get("containers") or [{}])[0])
    command = (((container.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}).get("command") or []
    sleep = int(command[1]) if len(command) == 2 and command[0] == "sleep" and str(command[1]).isdigit() else None
    if not sleep:
        problems.append(f"{name}: no preStop sleep (endpoints must drop the pod before SIGTERM), got {command!r}")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if sleep and grace < sleep + SHUTDOWN_SECONDS:
        problems.append(f"{name}: terminationGracePeriodSeconds {grace} is less than preStop {sleep} s + {SHUTDOWN_SECONDS} s to shut down")
    readiness = (container.get("readinessProbe") or {}).get("httpGet", {}).get("path")
    if readiness != "/ready":
        problems.append(f"{name}: readinessProbe is on {readiness!r}, not /ready")
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    if not any(_selects(p.get("spec", {}).get("selector", {}).get("matchLabels"), labels)
               for p in _of_kind(docs, "PodDisruptionBudget")):
        problems.append(f"{name}: no PodDisruptionBudget selecting its pods")
    return problems


def check_common(docs) -> list[str]:
    problems = []
    for fname, d in docs:
        kind, meta = d.get("kind"), d.get("metadata", {})
        if kind in ("Namespace", "Kustomization"):
            continue
        if meta.get("namespace") != NAMESPACE:
            problems.append(f"{fname}: {kind} {meta.get('name')} is not in namespace {NAMESPACE}")
    if _named(docs, "Namespace", NAMESPACE) is None:
        problems.append(f"no Namespace {NAMESPACE}")
    for s in _of_kind(docs, "Secret"):
        values = {**s.get("stringData", {}), **s.get("data", {})}
        # Empty is "not set" (METRICS_TOKEN open, no previous command key), not a secret.
        if not all("CHANGE-ME" in str(v) or v == "" for v in values.values()):
            problems.append(f"Secret {s['metadata'].get('name')} holds a value that is not a CHANGE-ME placeholder")
    return problems


def check_kubernetes(docs) -> list[str]:
    problems = check_common(docs)
    for name, port in SERVICES.items():
        problems += check_service(docs, name, port)
    problems += check_hpa(docs)
    for name in SERVICES:
        problems += check_rollout(docs, name)
    problems += pool_budget(docs)[1]
    return problems


@pytest.fixture(scope="module")
def manifests():
    docs = load_manifests(K8S)
    assert docs, f"no manifests under {K8S}"
    return docs


def test_every_manifest_parses_and_has_kind(manifests):
    for fname, d in manifests:
        assert isinstance(d, dict), fname
        assert d.get("apiVersion") and d.get("kind"), f"{fname}: document without apiVersion/kind"


def test_kubernetes_invariants(manifests):
    assert check_kubernetes(manifests) == []


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_each_service_has_deployment_service_pdb(manifests, name):
    assert check_service(manifests, name, SERVICES[name]) == []


def test_feed_hpa(manifests):
    assert check_hpa(manifests) == []



@pytest.mark.parametrize("name", sorted(SERVICES))
def test_each_deployment_rolls_without_a_gap(manifests, name):
    assert check_rollout(manifests, name) == []


def test_postgres_pools_fit_at_the_hpa_maximum_plus_surge(manifests):
    rows, problems = pool_budget(manifests)
    assert problems == []
    assert {r["name"] for r in rows} == set(SERVICES)
    total = sum(r["total"] for r in rows)
    assert total < POSTGRES_SERVER_MAX_CONNECTIONS
    # The table in deploy/kubernetes/README.md ("Fleet") shows the same figures.
    readme = (K8S / "README.md").read_text()
    for r in rows:
        assert f"| {r['name']} | {r['pods']} | {r['pool']} | {r['total']} |" in readme, f"README's fleet table lacks {r}"
    assert f"| total | | | **{total}** |" in readme


def test_kustomization_lists_every_manifest_but_the_secret_template():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kust.get("resources", []))
    expected = {
        p.name for p in K8S.glob("*.yaml") if p.name not in ("kustomization.yaml", "secret.template.yaml")
    }
    assert listed == expected
    assert "secret.template.yaml" not in listed


def test_configmap_is_for_a_cluster(manifests):
    cm = _named(manifests, "ConfigMap", "itour-config")
    secret = _named(manifests, "Secret", "itour-secrets")
    assert cm["data"]["ITOUR_DEMO"] == "0", "a cluster must not run in demo mode"
    assert cm["data"]["HTTP_HOST"] == "0.0.0.0"
    assert not set(secret.get("stringData", {})) & set(cm["data"]), "a key is both secret and not"


# Self-tests: the checker must notice broken manifests, written to a temporary copy.


def _broken_copy(tmp_path: Path, fname: str, mutate) -> list[tuple[str, dict]]:
    dst = tmp_path / "k8s"
    shutil.copytree(K8S, dst)
    docs = [d for d in yaml.safe_load_all((dst / fname).read_text()) if d is not None]
    mutate(docs)
    (dst / fname).write_text(yaml.safe_dump_all(docs))
    return load_manifests(dst)


def _deployment(docs):
    return next(d for d in docs if d["kind"] == "Deployment")


def _container(docs):
    return _deployment(docs)["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(
    "fname, mutate, expected",
    [
        ("feed.yaml", lambda ds: _container(ds).pop("readinessProbe"), "feed: no readinessProbe"),
        ("admin.yaml", lambda ds: _container(ds)["livenessProbe"]["httpGet"].update(path="/ready"),
         "admin: livenessProbe path is '/ready'"),
        ("catalog.yaml", lambda ds: _container(ds)["resources"].pop("limits"), "catalog: no limits.cpu"),
        ("analytics.yaml", lambda ds: _container(ds)["envFrom"].append({"secretRef": {"name": "itour-secrets"}}),
         "analytics: envFrom secretRef gives the pod every secret"),
        ("feed.yaml", lambda ds: ds[1]["spec"]["selector"].update({"app.kubernetes.io/name": "fed"}),
         "feed: Service selector does not select"),
        ("admin.yaml", lambda ds: ds.pop(2), "admin: no PodDisruptionBudget"),
        ("feed.yaml", lambda ds: ds.pop(3), "feed: no HorizontalPodAutoscaler"),
        ("catalog.yaml", lambda ds: _deployment(ds)["spec"]["template"]["spec"]["securityContext"].update(
            runAsNonRoot=False) or _container(ds)["securityContext"].pop("runAsNonRoot"),
         "catalog: container catalog may run as root"),
        ("analytics.yaml", lambda ds: _container(ds).pop("lifecycle"), "analytics: no preStop sleep"),
        ("catalog.yaml", lambda ds: _deployment(ds)["spec"]["strategy"]["rollingUpdate"].update(maxUnavailable=1),
         "catalog: rollingUpdate.maxUnavailable is 1"),
        ("admin.yaml", lambda ds: _deployment(ds)["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=30),
         "admin: terminationGracePeriodSeconds 30 is less than"),
        ("feed.yaml", lambda ds: _container(ds)["env"].__setitem__(
            slice(None), [e for e in _container(ds)["env"] if e["name"] != "POSTGRES_MAX_CONNECTIONS"]),
         "feed: POSTGRES_MAX_CONNECTIONS is not set"),
        ("analytics.yaml", lambda ds: next(e for e in _container(ds)["env"] if e["name"] == "POSTGRES_MAX_CONNECTIONS")
         .update(value="20"), "Postgres pools: 106 connections"),
        ("feed.yaml", lambda ds: ds[3]["spec"].update(maxReplicas=30), "Postgres pools: 110 connections"),
        ("catalog.yaml", lambda ds: ds.pop(2), "catalog: no PodDisruptionBudget"),
    ],
    ids=["no-readiness", "liveness-path", "no-limits", "every-secret", "service-selector",
         "no-pdb", "no-hpa", "root", "no-prestop", "max-unavailable", "short-grace", "no-pool-size", "pools-too-big",
         "hpa-too-big", "catalog-no-pdb"],
)  # fmt: skip
def test_checker_notices_broken_manifests(tmp_path, fname, mutate, expected):
    problems = check_kubernetes(_broken_copy(tmp_path, fname, mutate))
    assert any(expected in p for p in problems), problems


# ---------------------------------------------------------------------------------------------
# NetworkPolicies (networkpolicy.yaml, issue 43): evaluated here as a cluster would, for the pods that matter.

POSTGRES_POD = ({"app.kubernetes.io/name": "postgres"}, NAMESPACE)
BROKER_POD = ({"strimzi.io/kind": "Kafka"}, "kafka")   # the brokers behind KAFKA_BROKERS (config.yaml)
STRANGER_POD = ({"app.kubernetes.io/name": "stranger"}, NAMESPACE)


def _selector_matches(selector: dict | None, labels: dict) -> bool:
    """A Kubernetes label selector ({} or absent selects everything)."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        present, value = e["key"] in labels, labels.get(e["key"])
        ok = {"In": present and value in e.get("values", []), "NotIn": not present or value not in e.get("values", []),
              "Exists": present, "DoesNotExist": not present}[e["operator"]]
        if not ok:
            return False
    return True


def _peer_matches(peer: dict, pod: tuple[dict, str]) -> bool:
    labels, namespace = pod
    if "ipBlock" in peer:
        return peer["ipBlock"].get("cidr") in ("0.0.0.0/0", "::/0")
    if "namespaceSelector" in peer:
        if not _selector_matches(peer["namespaceSelector"], {"kubernetes.io/metadata.name": namespace}):
            return False
    elif namespace != NAMESPACE:
        return False
    return "podSelector" not in peer or _selector_matches(peer["podSelector"], labels)


def _port_matches(rule_ports: list | None, port: int, named: dict) -> bool:
    if not rule_ports:
        return True
    return any(p.get("protocol", "TCP") == "TCP" and (p.get("port") is None or p.get("port") == port or named.get(p.get("port")) == port)
               for p in rule_ports)


def _allowed(docs, pod: tuple[dict, str], direction: str, peer: tuple[dict, str], port: int, named: dict) -> bool:
    """Whether POD's policies let traffic to (Egress) or from (Ingress) PEER on PORT through."""
    labels, namespace = pod
    kind = "egress" if direction == "Egress" else "ingress"
    field = "to" if kind == "egress" else "from"
    selecting = [p for p in _of_kind(docs, "NetworkPolicy")
                 if p["metadata"].get("namespace") == namespace and _selector_matches(p["spec"].get("podSelector"), labels)
                 and direction in p["spec"].get("policyTypes", ["Ingress"])]
    if not selecting:
        return True   # no policy isolates the pod in this direction
    return any(_port_matches(rule.get("ports"), port, named) and (not rule.get(field) or any(_peer_matches(x, peer) for x in rule[field]))
               for p in selecting for rule in p["spec"].get(kind) or [])


def _service_pod(docs, name: str) -> tuple[tuple[dict, str], dict]:
    dep = _named(docs, "Deployment", name)
    tmpl = dep["spec"]["template"]
    ports = {p["name"]: p["containerPort"] for c in tmpl["spec"]["containers"] for p in c.get("ports", []) if "name" in p}
    return (tmpl["metadata"]["labels"], NAMESPACE), ports


def reaches(docs, source: tuple[dict, str], target: tuple[dict, str], port: int, target_ports: dict | None = None) -> bool:
    return (_allowed(docs, source, "Egress", target, port, {})
            and _allowed(docs, target, "Ingress", source, port, target_ports or {}))


def _given_postgres_password(docs, name: str) -> bool:
    dep = _named(docs, "Deployment", name)
    return any(e.get("name") == "POSTGRES_PASSWORD" for c in dep["spec"]["template"]["spec"]["containers"] for e in c.get("env", []))


def check_network_policies(docs) -> list[str]:
    problems = []
    if not _of_kind(docs, "NetworkPolicy"):
        return ["no NetworkPolicy"]
    pods = {name: _service_pod(docs, name) for name in SERVICES if _named(docs, "Deployment", name)}
    for name, (pod, ports) in pods.items():
        # Postgres: exactly the services that are given its password.
        if reaches(docs, pod, POSTGRES_POD, 5432) != _given_postgres_password(docs, name):
            problems.append(f"{name}: reaches Postgres {'without' if not _given_postgres_password(docs, name) else 'never, though'} "
                            "being given its password")
        if not reaches(docs, pod, BROKER_POD, 9092):
            problems.append(f"{name}: cannot reach the broker")
        if not _allowed(docs, pod, "Egress", ({"k8s-app": "kube-dns"}, "kube-system"), 53, {}):
            problems.append(f"{name}: cannot reach DNS")
        if _allowed(docs, pod, "Egress", ({}, "elsewhere"), 443, {}):
            problems.append(f"{name}: may connect anywhere (no default deny)")
        if not reaches(docs, ({}, "ingress-nginx"), pod, SERVICES[name], ports):
            problems.append(f"{name}: its HTTP port {SERVICES[name]} is not reachable")
        if reaches(docs, ({}, "ingress-nginx"), pod, 9999, ports):
            problems.append(f"{name}: takes connections on ports other than its HTTP port")
    if "admin" in pods:
        for other in ("catalog", "feed", "analytics"):
            if other in pods and not reaches(docs, pods["admin"][0], pods[other][0], SERVICES[other], pods[other][1]):
                problems.append(f"admin: cannot reach {other} (System Status, reports)")
    for stranger, where in ((STRANGER_POD, "another pod of the namespace"), (({}, "default"), "a pod of another namespace")):
        if reaches(docs, stranger, POSTGRES_POD, 5432):
            problems.append(f"Postgres: {where} reaches it")
    return problems


def test_network_policies(manifests):
    assert check_network_policies(manifests) == []


def test_the_feed_reaches_postgres_only_for_the_media_store(manifests):
    """Issue 43 wants the feed to reach no database; it reads the media store in Postgres (DESIGN.md, "Media
    library"), so it does, through policies of their own that go once the media store leaves Postgres."""
    feed, _ = _service_pod(manifests, "feed")
    without = [(f, d) for f, d in manifests if not d.get("metadata", {}).get("name", "").endswith("feed-media-store")]
    assert reaches(manifests, feed, POSTGRES_POD, 5432)
    assert not reaches(without, feed, POSTGRES_POD, 5432)


def _policy(docs, name):
    return next(d for d in docs if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == name)


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda ds: _policy(ds, "itour-dns-and-broker")["spec"]["egress"].append({}), "may connect anywhere"),
        (lambda ds: _policy(ds, "postgres-from-itour")["spec"]["ingress"].append({}), "Postgres: a pod of another namespace reaches it"),
        (lambda ds: _policy(ds, "itour-to-postgres")["spec"]["podSelector"]["matchExpressions"][0]["values"].remove("analytics"),
         "analytics: reaches Postgres never"),
        (lambda ds: _policy(ds, "itour-dns-and-broker")["spec"]["egress"].pop(), "catalog: cannot reach the broker"),
        (lambda ds: _policy(ds, "itour-http-in")["spec"]["ingress"][0].pop("ports"), "takes connections on ports other"),
        (lambda ds: ds.remove(_policy(ds, "admin-to-services")), "admin: cannot reach catalog"),
    ],
    ids=["egress-anywhere", "postgres-open", "analytics-cut-off", "no-broker", "every-port", "admin-alone"],
)  # fmt: skip
def test_policy_checker_notices_broken_policies(tmp_path, mutate, expected):
    problems = check_network_policies(_broken_copy(tmp_path, "networkpolicy.yaml", mutate))
    assert any(expected in p for p in problems), problems


def test_policy_checker_notices_a_database_reached_without_its_password(tmp_path):
    def no_password(docs):
        env = _container(docs)["env"]
        env[:] = [e for e in env if e.get("name") != "POSTGRES_PASSWORD"]
    problems = check_network_policies(_broken_copy(tmp_path, "analytics.yaml", no_password))
    assert "analytics: reaches Postgres without being given its password" in problems, problems


# ---------------------------------------------------------------------------------------------
# docker-compose.yml

DOCKER_COMPOSE = shutil.which("docker-compose") or "/usr/bin/docker-compose"
# Variables the compose file reads; cleared so the demo defaults are what gets checked.
COMPOSE_VARS = (
    "ADMIN_EMAIL ADMIN_PASSWORD ADMIN_COOKIE_SECURE REPORTS_TOKEN POSTGRES_USER POSTGRES_PASSWORD POSTGRES_ADMIN_PASSWORD "
    "POSTGRES_DB KAFKA_TOPIC_PREFIX LOG_LEVEL LOG_FORMAT ITOUR_DEMO ITOUR_VERSION ITOUR_BIND ITOUR_IMAGE_PREFIX "
    "FEED_EVENTS_PER_MINUTE_PER_DEVICE SITE_TIME_ZONE SITE_PUBLIC_HOLIDAYS SITE_LANGUAGE SITE_LANGUAGES KAFKA_CLUSTER_ID KAFKA_HOST_PORT POSTGRES_HOST_PORT KAFKA_IMAGE "
    "POSTGRES_IMAGE FEED_HOST_PORT ADMIN_HOST_PORT CATALOG_HOST_PORT ANALYTICS_HOST_PORT METRICS_TOKEN TRUSTED_PROXIES ADMIN_PUBLIC_URL "
    "KAFKA_SECURITY_PROTOCOL KAFKA_SASL_MECHANISM KAFKA_SASL_USERNAME KAFKA_SASL_PASSWORD KAFKA_SSL_CA_LOCATION "
    "KAFKA_SSL_CERTIFICATE_LOCATION KAFKA_SSL_KEY_LOCATION POSTGRES_SSLMODE POSTGRES_SSL_ROOT_CERT ANALYTICS_ID_KEY "
    "ANALYTICS_RETENTION_DAYS ERASURE_TOKEN "
    "COMPOSE_FILE COMPOSE_PROJECT_NAME"
).split()


def compose_config(path: Path) -> subprocess.CompletedProcess:
    if not Path(DOCKER_COMPOSE).exists():
        pytest.fail("docker-compose is not installed (scripts/install.sh installs it)")
    env = {k: v for k, v in os.environ.items() if k not in COMPOSE_VARS}
    return subprocess.run(
        [DOCKER_COMPOSE, "-f", str(path), "config"],
        cwd=path.parent, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def check_compose(cfg: dict) -> list[str]:
    problems = []
    services = cfg.get("services", {})
    for infra in ("kafka", "postgres", "demo"):
        if infra not in services:
            problems.append(f"compose: no {infra} service")
    kafka = services.get("kafka", {})
    if "apache/kafka" not in str(kafka.get("image", "")):
        problems.append("compose: kafka does not run the apache/kafka image by default")
    if str(kafka.get("environment", {}).get("KAFKA_AUTO_CREATE_TOPICS_ENABLE")) != "false":
        problems.append("compose: kafka auto-creates topics (the services create them with their partitions)")
    pg = services.get("postgres", {})
    if not re.search(r"postgres:1[5-9]", str(pg.get("image", ""))):
        problems.append("compose: postgres is not PostgreSQL 15+")
    if not any(str(v).split(":")[0] in cfg.get("volumes", {}) for v in pg.get("volumes", [])):
        problems.append("compose: postgres data is not on a named volume")
    for svc in ("kafka", "postgres"):
        if not services.get(svc, {}).get("healthcheck", {}).get("test"):
            problems.append(f"compose: {svc} has no healthcheck")
        # Issue 43: whoever reaches the broker writes catalog.commands; the database is the services' alone.
        if services.get(svc, {}).get("ports"):
            problems.append(f"compose: {svc} publishes a host port by default (deploy/compose/publish.yml is for that)")
    pg_env = pg.get("environment", {})
    app_env = services.get("catalog", {}).get("environment", {})
    if not pg_env.get("ITOUR_DB_USER") or pg_env.get("ITOUR_DB_USER") == pg_env.get("POSTGRES_USER"):
        problems.append("compose: the services log in to postgres as its superuser")
    if (pg_env.get("ITOUR_DB_USER"), pg_env.get("ITOUR_DB_PASSWORD")) != (app_env.get("POSTGRES_USER"), app_env.get("POSTGRES_PASSWORD")):
        problems.append("compose: postgres's ITOUR_DB_USER/ITOUR_DB_PASSWORD are not the services' POSTGRES_USER/POSTGRES_PASSWORD")
    if not any(str(v).startswith(str(ROOT / "deploy/postgres/initdb") + ":/docker-entrypoint-initdb.d")
               for v in pg.get("volumes", [])):
        problems.append("compose: postgres does not mount deploy/postgres/initdb (the services' role) as /docker-entrypoint-initdb.d")
    demo = services.get("demo", {})
    if "load-demo /app/demo/uncw-itour.json" not in " ".join(map(str, demo.get("command", []))):
        problems.append("compose: the demo service does not load the demo content")

    for name, port in SERVICES.items():
        s = services.get(name)
        if s is None:
            problems.append(f"compose: no {name} service")
            continue
        if not re.search(rf"itour/{name}:", str(s.get("image", ""))):
            problems.append(f"compose: {name} does not run the itour/{name} image")
        env = s.get("environment", {})
        uses_postgres = name != "feed"  # the feed keeps no data of its own
        wanted = [("HTTP_PORT", str(port)), ("HTTP_HOST", "0.0.0.0"), ("KAFKA_BROKERS", "kafka:9092")]
        if uses_postgres:
            wanted.append(("POSTGRES_HOST", "postgres"))
        for key, want in wanted:
            if str(env.get(key)) != want:
                problems.append(f"compose: {name} {key} is {env.get(key)!r}, expected {want!r}")
        deps = s.get("depends_on", {})
        if not ({"postgres", "kafka"} if uses_postgres else {"kafka"}) <= set(deps):
            problems.append(f"compose: {name} does not start after what it uses (postgres, kafka)")
        if not s.get("healthcheck", {}).get("test"):
            problems.append(f"compose: {name} has no healthcheck")
        for p in s.get("ports", []):
            host_ip = p.get("host_ip") if isinstance(p, dict) else (str(p).split(":")[0] if str(p).count(":") == 2 else None)
            if host_ip != "127.0.0.1":
                problems.append(f"compose: {name} publishes {p} beyond 127.0.0.1 by default")
    admin_env = services.get("admin", {}).get("environment", {})
    for key, want in (("ANALYTICS_URL", "http://analytics:8083"), ("CATALOG_URL", "http://catalog:8082"),
                      ("FEED_URL", "http://feed:8080")):  # fmt: skip
        if admin_env.get(key) != want:
            problems.append(f"compose: admin {key} is {admin_env.get(key)!r}, expected {want!r}")
    if admin_env.get("REPORTS_TOKEN") != services.get("analytics", {}).get("environment", {}).get("REPORTS_TOKEN"):
        problems.append("compose: admin and analytics disagree on REPORTS_TOKEN")
    return problems


@pytest.fixture(scope="module")
def compose_cfg():
    result = compose_config(COMPOSE)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def test_compose_config_passes(compose_cfg):
    assert set(SERVICES) | {"kafka", "postgres", "demo"} <= set(compose_cfg["services"])


def test_compose_invariants(compose_cfg):
    assert check_compose(compose_cfg) == []


def test_compose_has_no_obsolete_version_key():
    assert "version" not in yaml.safe_load(COMPOSE.read_text())


def test_compose_demo_defaults(compose_cfg):
    s = compose_cfg["services"]
    assert s["admin"]["environment"]["ADMIN_EMAIL"] == "admin@example.edu"
    assert s["admin"]["environment"]["ADMIN_PASSWORD"] == "itour-demo"
    assert s["analytics"]["environment"]["REPORTS_TOKEN"] == "itour-demo-token"
    assert all(s[n]["environment"]["ITOUR_DEMO"] == "1" for n in ("admin", "analytics"))


def test_compose_takes_credentials_from_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in COMPOSE_VARS}
    env.update(ADMIN_PASSWORD="s3cret-from-env", ITOUR_DEMO="0")
    out = subprocess.run(
        [DOCKER_COMPOSE, "-f", str(COMPOSE), "config"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cfg = yaml.safe_load(out.stdout)
    assert cfg["services"]["admin"]["environment"]["ADMIN_PASSWORD"] == "s3cret-from-env"
    assert cfg["services"]["analytics"]["environment"]["ITOUR_DEMO"] == "0"


def test_compose_checker_notices_missing_healthcheck_and_open_ports(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    del raw["services"]["postgres"]["healthcheck"]
    raw["services"]["feed"]["ports"] = ["8080:8080"]
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(raw))
    result = compose_config(broken)
    assert result.returncode == 0, result.stderr  # valid syntax, wrong wiring
    problems = check_compose(yaml.safe_load(result.stdout))
    assert "compose: postgres has no healthcheck" in problems
    assert any(p.startswith("compose: feed publishes") for p in problems), problems


def test_compose_checker_notices_a_published_database_and_a_superuser_service(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    raw["services"]["postgres"]["ports"] = ["127.0.0.1:5433:5432"]
    raw["services"]["postgres"]["environment"]["ITOUR_DB_USER"] = "postgres"
    broken = ROOT / f".compose-check-{os.getpid()}.yml"   # beside the real one: its relative mounts resolve alike
    try:
        broken.write_text(yaml.safe_dump(raw))
        result = compose_config(broken)
    finally:
        broken.unlink(missing_ok=True)
    assert result.returncode == 0, result.stderr
    problems = check_compose(yaml.safe_load(result.stdout))
    assert "compose: postgres publishes a host port by default (deploy/compose/publish.yml is for that)" in problems
    assert "compose: the services log in to postgres as its superuser" in problems


def test_compose_publish_overlay_publishes_postgres_and_the_broker_on_loopback():
    env = {k: v for k, v in os.environ.items() if k not in COMPOSE_VARS}
    out = subprocess.run(
        [DOCKER_COMPOSE, "-f", str(COMPOSE), "-f", str(ROOT / "deploy/compose/publish.yml"), "config"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    assert services["postgres"]["ports"] == ["127.0.0.1:5433:5432/tcp"]
    assert services["kafka"]["ports"] == ["127.0.0.1:29092:29092/tcp"]


def test_compose_config_rejects_an_invalid_file(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    raw["services"]["feed"]["depends_on"] = {"postgres": {"condition": "service_ready_eventually"}}
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(raw))
    assert compose_config(broken).returncode != 0


# ---------------------------------------------------------------------------------------------
# The healthcheck script, against a local HTTP server on the loopback interface


class _Handler(http.server.BaseHTTPRequestHandler):
    codes = {"/health": 200, "/ready": 503}

    def do_GET(self):  # noqa: N802
        code = self.codes.get(self.path, 404)
        body = b"ok" if code == 200 else b"no"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def local_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _healthcheck(*args, **env):
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run(["bash", str(HEALTHCHECK), *args], env={**base, **env},
                          capture_output=True, text=True, timeout=20)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_healthcheck_ok_on_200(local_server):
    assert _healthcheck("/health", HTTP_PORT=str(local_server), HTTP_HOST="0.0.0.0").returncode == 0


def test_healthcheck_fails_on_non_200(local_server):
    r = _healthcheck("/ready", HTTP_PORT=str(local_server))
    assert r.returncode == 1 and "503" in r.stderr


def test_healthcheck_fails_when_nothing_listens():
    r = _healthcheck("/health", HTTP_PORT=str(_free_port()))
    assert r.returncode == 1 and "cannot connect" in r.stderr


def test_healthcheck_needs_a_port():
    assert _healthcheck("/health").returncode == 1


def test_self_test_copy_is_independent(manifests):
    """The broken copies are made from a copy; the real manifests stay valid."""
    snapshot = copy.deepcopy(manifests)
    assert check_kubernetes(snapshot) == []
