"""Checks of the deployment files: Kubernetes manifests, docker-compose.yml, the Dockerfile and
the scripts the containers run. No kubectl or Docker engine is needed: manifests are parsed with
PyYAML, compose is validated by Debian's docker-compose (`config` runs without an engine), and
the shell scripts run here against local stand-ins.

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
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
HEALTHCHECK = ROOT / "deploy" / "healthcheck.sh"
TOPICS_SCRIPT = ROOT / "deploy" / "kafka" / "create-topics.sh"

SERVICES = {"feed": 8080, "admin": 8081, "catalog": 8082, "analytics": 8083}
TOPICS = {
    "catalog.commands",
    "catalog.command-results",
    "catalog.events",
    "tracking.events",
    "dead-letters",
}
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
    secret_refs = [e["secretRef"].get("name") for e in env_from if "secretRef" in e]
    if not cm_refs:
        problems.append(f"{name}: no envFrom configMapRef")
    if not secret_refs:
        problems.append(f"{name}: no envFrom secretRef")
    for ref in cm_refs:
        if _named(docs, "ConfigMap", ref) is None:
            problems.append(f"{name}: configMapRef {ref!r} names no ConfigMap in the manifests")
    for ref in secret_refs:
        if _named(docs, "Secret", ref) is None:
            problems.append(f"{name}: secretRef {ref!r} names no Secret (template) in the manifests")

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


def check_topics_job(docs) -> list[str]:
    jobs = _of_kind(docs, "Job")
    if not jobs:
        return ["no Job (topic creation)"]
    problems = []
    job = jobs[0]
    pod = job.get("spec", {}).get("template", {}).get("spec", {})
    ctrs = pod.get("containers") or []
    if not ctrs or not str(ctrs[0].get("image", "")).startswith("apache/kafka"):
        problems.append("topic Job does not use the apache/kafka image")
    if pod.get("restartPolicy") not in ("OnFailure", "Never"):
        problems.append("topic Job needs restartPolicy OnFailure or Never")
    for c in ctrs:
        if not _non_root(pod.get("securityContext"), c.get("securityContext")):
            problems.append(f"topic Job container {c.get('name')} may run as root")
        if not c.get("resources", {}).get("limits"):
            problems.append("topic Job container has no resource limits")
    # The script it runs: from a ConfigMap it mounts, or inline in its command.
    scripts = [" ".join(map(str, c.get("command", []) + c.get("args", []))) for c in ctrs]
    for vol in pod.get("volumes", []):
        cm_name = vol.get("configMap", {}).get("name")
        cm = _named(docs, "ConfigMap", cm_name) if cm_name else None
        if cm:
            scripts.extend(cm.get("data", {}).values())
    text = "\n".join(scripts)
    if "kafka-topics.sh" not in text:
        problems.append("topic Job does not run kafka-topics.sh")
    for topic in TOPICS:
        if topic not in text:
            problems.append(f"topic Job does not create {topic}")
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
        if not all("CHANGE-ME" in str(v) for v in values.values()):
            problems.append(f"Secret {s['metadata'].get('name')} holds a value that is not a CHANGE-ME placeholder")
    return problems


def check_kubernetes(docs) -> list[str]:
    problems = check_common(docs)
    for name, port in SERVICES.items():
        problems += check_service(docs, name, port)
    problems += check_hpa(docs)
    problems += check_topics_job(docs)
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


def test_topics_job(manifests):
    assert check_topics_job(manifests) == []


def test_topics_job_script_is_the_shared_script(manifests):
    cm = _named(manifests, "ConfigMap", "itour-kafka-topics")
    assert cm is not None
    assert cm["data"]["create-topics.sh"] == TOPICS_SCRIPT.read_text(), (
        "kafka-topics-job.yaml's ConfigMap differs from deploy/kafka/create-topics.sh; copy it over"
    )


def test_kustomization_lists_every_manifest_but_the_secret_template():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kust.get("resources", []))
    expected = {
        p.name for p in K8S.glob("*.yaml") if p.name not in ("kustomization.yaml", "secret.template.yaml")
    }
    assert listed == expected
    assert "secret.template.yaml" not in listed


def test_configmap_covers_the_environment(manifests):
    cm = _named(manifests, "ConfigMap", "itour-config")
    secret = _named(manifests, "Secret", "itour-secrets")
    keys = set(cm["data"]) | set(secret.get("stringData", {})) | {"HTTP_PORT"}
    wanted = {
        "HTTP_HOST", "HTTP_PORT", "POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_USER",
        "POSTGRES_PASSWORD", "POSTGRES_DB", "KAFKA_BROKERS", "LOG_LEVEL", "LOG_FORMAT",
        "ITOUR_DEMO", "ADMIN_EMAIL", "ADMIN_PASSWORD", "REPORTS_TOKEN", "ANALYTICS_URL",
        "SESSION_SECRET", "FEED_EVENTS_PER_MINUTE_PER_DEVICE", "KAFKA_TOPIC_PREFIX",
    }  # fmt: skip
    assert wanted <= keys, f"missing: {sorted(wanted - keys)}"
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
        ("analytics.yaml", lambda ds: _container(ds)["envFrom"].pop(1), "analytics: no envFrom secretRef"),
        ("feed.yaml", lambda ds: ds[1]["spec"]["selector"].update({"app.kubernetes.io/name": "fed"}),
         "feed: Service selector does not select"),
        ("admin.yaml", lambda ds: ds.pop(2), "admin: no PodDisruptionBudget"),
        ("feed.yaml", lambda ds: ds.pop(3), "feed: no HorizontalPodAutoscaler"),
        ("catalog.yaml", lambda ds: _deployment(ds)["spec"]["template"]["spec"]["securityContext"].update(
            runAsNonRoot=False) or _container(ds)["securityContext"].pop("runAsNonRoot"),
         "catalog: container catalog may run as root"),
        ("kafka-topics-job.yaml", lambda ds: ds.pop(1), "no Job (topic creation)"),
    ],
    ids=["no-readiness", "liveness-path", "no-limits", "no-secretRef", "service-selector",
         "no-pdb", "no-hpa", "root", "no-job"],
)  # fmt: skip
def test_checker_notices_broken_manifests(tmp_path, fname, mutate, expected):
    problems = check_kubernetes(_broken_copy(tmp_path, fname, mutate))
    assert any(expected in p for p in problems), problems


# ---------------------------------------------------------------------------------------------
# docker-compose.yml

DOCKER_COMPOSE = shutil.which("docker-compose") or "/usr/bin/docker-compose"
# Variables the compose file reads; cleared so the demo defaults are what gets checked.
COMPOSE_VARS = (
    "ADMIN_EMAIL ADMIN_PASSWORD REPORTS_TOKEN SESSION_SECRET POSTGRES_USER POSTGRES_PASSWORD "
    "POSTGRES_DB KAFKA_TOPIC_PREFIX LOG_LEVEL LOG_FORMAT ITOUR_DEMO ITOUR_VERSION "
    "FEED_EVENTS_PER_MINUTE_PER_DEVICE KAFKA_CLUSTER_ID KAFKA_HOST_PORT POSTGRES_HOST_PORT "
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
    for infra in ("kafka", "postgres", "kafka-topics"):
        if infra not in services:
            problems.append(f"compose: no {infra} service")
    kafka = services.get("kafka", {})
    if "apache/kafka" not in str(kafka.get("image", "")):
        problems.append("compose: kafka does not run the apache/kafka image")
    if "controller" not in str(kafka.get("environment", {}).get("KAFKA_PROCESS_ROLES", "")):
        problems.append("compose: kafka is not in KRaft mode (process.roles without controller)")
    pg = services.get("postgres", {})
    if not re.search(r"postgres:1[5-9]", str(pg.get("image", ""))):
        problems.append("compose: postgres is not PostgreSQL 15+")
    if not any(str(v).split(":")[0] in cfg.get("volumes", {}) for v in pg.get("volumes", [])):
        problems.append("compose: postgres data is not on a named volume")
    if "pg_isready" not in " ".join(map(str, pg.get("healthcheck", {}).get("test", []))):
        problems.append("compose: postgres has no pg_isready healthcheck")
    for svc in ("kafka", "postgres"):
        if not services.get(svc, {}).get("healthcheck", {}).get("test"):
            problems.append(f"compose: {svc} has no healthcheck")
    topics = services.get("kafka-topics", {})
    if topics.get("depends_on", {}).get("kafka", {}).get("condition") != "service_healthy":
        problems.append("compose: kafka-topics does not wait for a healthy kafka")

    published = {
        int(p["published"]) if isinstance(p, dict) else int(str(p).split(":")[-2])
        for s in services.values()
        for p in s.get("ports", [])
    }
    for name, port in SERVICES.items():
        s = services.get(name)
        if s is None:
            problems.append(f"compose: no {name} service")
            continue
        build = s.get("build", {})
        if not str(build.get("dockerfile", "")).endswith("deploy/Dockerfile"):
            problems.append(f"compose: {name} is not built from deploy/Dockerfile")
        if build.get("args", {}).get("SERVICE") != name:
            problems.append(f"compose: {name} build arg SERVICE is not {name}")
        env = s.get("environment", {})
        for key, want in (("HTTP_PORT", str(port)), ("HTTP_HOST", "0.0.0.0"), ("KAFKA_BROKERS", "kafka:9092"),
                          ("POSTGRES_HOST", "postgres")):  # fmt: skip
            if str(env.get(key)) != want:
                problems.append(f"compose: {name} {key} is {env.get(key)!r}, expected {want!r}")
        deps = s.get("depends_on", {})
        if not isinstance(deps, dict):
            problems.append(f"compose: {name} depends_on has no conditions")
            deps = {}
        if deps.get("postgres", {}).get("condition") != "service_healthy":
            problems.append(f"compose: {name} does not wait for a healthy postgres")
        if deps.get("kafka-topics", {}).get("condition") != "service_completed_successfully":
            problems.append(f"compose: {name} does not wait for the topics")
        for dep, d in deps.items():
            if d.get("condition") == "service_healthy" and not services.get(dep, {}).get("healthcheck"):
                problems.append(f"compose: {name} waits for {dep} to be healthy, but {dep} has no healthcheck")
        if not s.get("healthcheck", {}).get("test"):
            problems.append(f"compose: {name} has no healthcheck")
    for name in ("feed", "admin", "analytics"):
        if SERVICES[name] not in published:
            problems.append(f"compose: {name} port {SERVICES[name]} is not published")
    admin_env = services.get("admin", {}).get("environment", {})
    if admin_env.get("ANALYTICS_URL") != "http://analytics:8083":
        problems.append("compose: admin ANALYTICS_URL does not point at analytics")
    if admin_env.get("REPORTS_TOKEN") != services.get("analytics", {}).get("environment", {}).get("REPORTS_TOKEN"):
        problems.append("compose: admin and analytics disagree on REPORTS_TOKEN")
    return problems


@pytest.fixture(scope="module")
def compose_cfg():
    result = compose_config(COMPOSE)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def test_compose_config_passes(compose_cfg):
    assert set(SERVICES) | {"kafka", "kafka-topics", "postgres"} <= set(compose_cfg["services"])


def test_compose_invariants(compose_cfg):
    assert check_compose(compose_cfg) == []


def test_compose_demo_defaults(compose_cfg):
    s = compose_cfg["services"]
    assert s["admin"]["environment"]["ADMIN_EMAIL"] == "admin@example.edu"
    assert s["admin"]["environment"]["ADMIN_PASSWORD"] == "itour-demo"
    assert s["analytics"]["environment"]["REPORTS_TOKEN"] == "itour-demo-token"
    assert all(s[n]["environment"]["ITOUR_DEMO"] == "1" for n in SERVICES)


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
    assert cfg["services"]["feed"]["environment"]["ITOUR_DEMO"] == "0"


def test_compose_topics_service_runs_the_shared_script():
    raw = yaml.safe_load(COMPOSE.read_text())
    topics = raw["services"]["kafka-topics"]
    assert any("deploy/kafka/create-topics.sh" in v for v in topics["volumes"])
    assert "/opt/itour/create-topics.sh" in topics["command"]


def test_compose_checker_notices_missing_healthcheck(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    del raw["services"]["postgres"]["healthcheck"]
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(raw))
    result = compose_config(broken)
    assert result.returncode == 0, result.stderr  # valid syntax, wrong wiring
    problems = check_compose(yaml.safe_load(result.stdout))
    assert "compose: postgres has no healthcheck" in problems
    assert any("waits for postgres to be healthy, but postgres has no healthcheck" in p for p in problems)


def test_compose_checker_notices_missing_condition(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    raw["services"]["feed"]["depends_on"] = ["postgres", "kafka-topics"]
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(raw))
    result = compose_config(broken)
    assert result.returncode == 0, result.stderr
    problems = check_compose(yaml.safe_load(result.stdout))
    assert "compose: feed does not wait for the topics" in problems


def test_compose_config_rejects_an_invalid_file(tmp_path):
    raw = yaml.safe_load(COMPOSE.read_text())
    raw["services"]["feed"]["depends_on"]["postgres"]["condition"] = "service_ready_eventually"
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(raw))
    assert compose_config(broken).returncode != 0


# ---------------------------------------------------------------------------------------------
# Dockerfile (static checks: nothing here can run `docker build`)


def dockerfile_stages(text: str) -> dict[str, list[str]]:
    """Instructions per stage, continuation lines joined, comments dropped."""
    lines, buf = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        lines.append(buf + line)
        buf = ""
    stages: dict[str, list[str]] = {"<global>": []}
    current = "<global>"
    for line in lines:
        m = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", line, re.I)
        if m:
            current = m.group(2) or f"<final:{m.group(1)}>"
            stages[current] = [line]
        else:
            stages[current].append(line)
    return stages


def check_dockerfile(text: str) -> list[str]:
    problems = []
    stages = dockerfile_stages(text)
    glob_args = " ".join(stages["<global>"])
    if "ARG SERVICE" not in glob_args:
        problems.append("Dockerfile: no global ARG SERVICE")
    build = " ".join(stages.get("build", []))
    if not re.search(r"FROM \S*swift:6\.\d", build) and "SWIFT_IMAGE" not in build:
        problems.append("Dockerfile: build stage is not an official swift image")
    if not re.search(r"ARG SWIFT_IMAGE=swift:6\.\d+-bookworm", glob_args):
        problems.append("Dockerfile: SWIFT_IMAGE is not an official swift:6.x-bookworm image")
    if "librdkafka-dev" not in build:
        problems.append("Dockerfile: build stage does not install librdkafka-dev")
    if not re.search(r"swift build -c release --product \"?\$\{?SERVICE\}?\"? --static-swift-stdlib", build):
        problems.append("Dockerfile: no release, static-stdlib build of --product $SERVICE")
    if "itour_*.resources" not in build:
        problems.append("Dockerfile: the resource bundles are not copied")
    runtime = " ".join(stages.get("runtime", []))
    if not re.search(r"ARG RUNTIME_IMAGE=debian:(bookworm|trixie)-slim", glob_args):
        problems.append("Dockerfile: runtime is not a Debian slim image")
    if "librdkafka1" not in runtime or "ge 2.3" not in runtime:
        problems.append("Dockerfile: runtime does not install and check librdkafka1 >= 2.3")
    if "ca-certificates" not in runtime:
        problems.append("Dockerfile: runtime lacks ca-certificates")
    if "useradd" not in runtime or "itour" not in runtime:
        problems.append("Dockerfile: no itour user")
    user = re.findall(r"^USER\s+(\S+)", "\n".join(stages.get("runtime", [])), re.M)
    if not user or user[-1].split(":")[0] in ("root", "0"):
        problems.append("Dockerfile: runtime does not switch to a non-root USER")
    if not re.search(r"HEALTHCHECK .*itour-healthcheck.*/health", runtime):
        problems.append("Dockerfile: no HEALTHCHECK on /health")
    if "HTTP_HOST=0.0.0.0" not in runtime:
        problems.append("Dockerfile: HTTP_HOST is not 0.0.0.0")
    if "COPY --from=build /staging/ /app/" not in runtime:
        problems.append("Dockerfile: the staged binary and bundles are not copied")
    for name, port in SERVICES.items():
        st = stages.get(f"service-{name}")
        if st is None:
            problems.append(f"Dockerfile: no service-{name} stage")
            continue
        body = " ".join(st)
        if f"EXPOSE {port}" not in body or f"HTTP_PORT={port}" not in body:
            problems.append(f"Dockerfile: service-{name} does not set and expose port {port}")
        if f'ENTRYPOINT ["/app/{name}"]' not in body:
            problems.append(f"Dockerfile: service-{name} does not run /app/{name}")
    finals = [k for k in stages if k.startswith("<final:")]
    if finals != ["<final:service-${SERVICE}>"]:
        problems.append("Dockerfile: the last stage is not FROM service-${SERVICE}")
    for src in re.findall(r"^COPY\s+(?!--from)(\S+)", "\n".join(sum(stages.values(), [])), re.M):
        if not (ROOT / src).exists() and src != "Package.swift":
            problems.append(f"Dockerfile: COPY source {src} does not exist in the repository")
    return problems


def test_dockerfile_invariants():
    assert check_dockerfile(DOCKERFILE.read_text()) == []


def test_dockerfile_documents_expected_sizes():
    text = DOCKERFILE.read_text()
    assert "Expected sizes" in text
    assert re.search(r"total ~\d+-\d+ MB uncompressed", text)


def test_dockerfile_checker_notices_problems():
    text = DOCKERFILE.read_text()
    broken = text.replace("USER 10001:10001", "USER root")
    assert "Dockerfile: runtime does not switch to a non-root USER" in check_dockerfile(broken)
    broken = re.sub(r"HEALTHCHECK[^\n]*\\\n[^\n]*\n", "", text)
    assert "Dockerfile: no HEALTHCHECK on /health" in check_dockerfile(broken)
    broken = text.replace(" --static-swift-stdlib", "")
    assert "Dockerfile: no release, static-stdlib build of --product $SERVICE" in check_dockerfile(broken)


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


# ---------------------------------------------------------------------------------------------
# The topic script, with a stand-in for kafka-topics.sh that records its calls


def _run_topics_script(tmp_path: Path, **env) -> list[list[str]]:
    log = tmp_path / "calls"
    fake = tmp_path / "kafka-topics.sh"
    fake.write_text(f'#!/bin/bash\nprintf "%s\\n" "$*" >> "{log}"\n')
    fake.chmod(0o755)
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KAFKA_TOPICS_BIN": str(fake), **env}
    r = subprocess.run(["bash", str(TOPICS_SCRIPT)], env=full, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return [line.split() for line in log.read_text().splitlines()]


def _creates(calls) -> dict[str, list[str]]:
    out = {}
    for c in calls:
        if "--create" in c:
            out[c[c.index("--topic") + 1]] = c
    return out


def _opt(call, flag):
    return [call[i + 1] for i, a in enumerate(call) if a == flag]


def test_topics_script_creates_every_topic(tmp_path):
    creates = _creates(_run_topics_script(tmp_path, BOOTSTRAP_SERVERS="kafka:9092"))
    assert set(creates) == TOPICS
    for call in creates.values():
        assert "--if-not-exists" in call
        assert _opt(call, "--bootstrap-server") == ["kafka:9092"]
        assert _opt(call, "--replication-factor") == ["1"]
        assert "min.insync.replicas=1" in _opt(call, "--config")
    assert _opt(creates["tracking.events"], "--partitions") == ["12"]
    assert "cleanup.policy=compact" in _opt(creates["catalog.events"], "--config")


def test_topics_script_prefix_and_replication(tmp_path):
    creates = _creates(
        _run_topics_script(tmp_path, BOOTSTRAP_SERVERS="b:9092", REPLICATION_FACTOR="3", KAFKA_TOPIC_PREFIX="stg.")
    )
    assert set(creates) == {f"stg.{t}" for t in TOPICS}
    for call in creates.values():
        assert _opt(call, "--replication-factor") == ["3"]
        assert "min.insync.replicas=2" in _opt(call, "--config")


def test_topics_script_requires_bootstrap_servers(tmp_path):
    r = subprocess.run(["bash", str(TOPICS_SCRIPT)], env={"PATH": os.environ.get("PATH", "")},
                       capture_output=True, text=True, timeout=30)  # fmt: skip
    assert r.returncode != 0 and "BOOTSTRAP_SERVERS" in r.stderr


def test_self_test_copy_is_independent(manifests):
    """The broken copies are made from a copy; the real manifests stay valid."""
    snapshot = copy.deepcopy(manifests)
    assert check_kubernetes(snapshot) == []
