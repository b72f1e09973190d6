"""`podman kube play` of deploy/kubernetes, the part of `make containers` after compose
(scripts/containers.sh): every pod started from the images built and waited for until ready.

podman runs Deployments, ConfigMaps and Secrets.
It cannot run Namespaces, Services, PodDisruptionBudgets and HorizontalPodAutoscalers; those are
checked instead against the Kubernetes API schemas (kubernetes-validate, Kubernetes 1.31), as is
every other document. What a cluster would provide is put in for the play only, in a copy
(.run/containers/kube-play.yaml):
  - images: itour/<service>:dev -> localhost/itour/<service>:<tag>
  - one replica each, its port published on 127.0.0.1 (podman 4.3 publishes every containerPort
    on the host, so replicas of one pod would collide);
  - Postgres and the broker: the ones compose started (POSTGRES_HOST=postgres, KAFKA_BROKERS=kafka:9092
    on the compose network);
  - Service names: <name>.itour.svc.cluster.local -> the pod's address on that network;
  - the Secret: secret.template.yaml with the test values below instead of CHANGE-ME, made as a
    podman secret beforehand (podman 4.3 cannot read back a Secret it played itself).

  .venv/bin/python scripts/kube_play.py --tag TAG --network itour-containers_default
  .venv/bin/python scripts/kube_play.py --down
"""
from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
PLAY = ROOT / ".run" / "containers" / "kube-play.yaml"
SERVICES = {"catalog": 8082, "feed": 8080, "analytics": 8083, "admin": 8081}
PLAYABLE = {"Deployment", "ConfigMap", "Secret"}
SCHEMA_VERSION = "1.31.0"


def manifests() -> list[dict]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = list(kustomization["resources"]) + ["secret.template.yaml"]
    docs = []
    for name in files:
        docs += [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    return docs


def validate(docs: list[dict]) -> list[str]:
    """Every document against the Kubernetes schemas; returns the problems."""
    import kubernetes_validate

    problems = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, SCHEMA_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {error.message}")
    return problems


def playable(docs: list[dict], tag: str, host_port_base: int) -> list[dict]:
    out = []
    host_ports = iter(range(host_port_base, host_port_base + 100))
    for original in docs:
        if original["kind"] not in PLAYABLE:
            continue
        doc = copy.deepcopy(original)
        doc["metadata"].pop("namespace", None)
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "itour-config":
            doc["data"].update(POSTGRES_HOST="postgres", KAFKA_BROKERS="kafka:9092")
        if doc["kind"] == "Secret":
            continue  # made by make_secret: podman 4.3 stores a played Secret as YAML, then reads it as JSON
        if doc["kind"] == "Deployment":
            # podman 4.3 publishes every containerPort on the host (hostPort defaults to it), so a
            # second replica, or a `make up` on the same machine, would collide: one pod each, on
            # loopback ports of their own.
            doc["spec"]["replicas"] = 1
            for container in doc["spec"]["template"]["spec"]["containers"]:
                for port in container.get("ports", []):
                    port.update(hostIP="127.0.0.1", hostPort=next(host_ports))
                image = container["image"]
                name = image.split("/")[-1].split(":")[0]
                container["image"] = f"localhost/itour/{name}:{tag}"
                for variable in container.get("env", []):
                    value = variable.get("value")
                    if isinstance(value, str) and ".itour.svc.cluster.local" in value:
                        # The (one) pod of a Deployment NAME is NAME-pod-0 in podman, reachable by that name.
                        variable["value"] = value.replace(".itour.svc.cluster.local", "-pod-0")
        out.append(doc)
    return out


def podman(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, input=input)


def make_secret(template: dict, values: dict[str, str]) -> None:
    """The Secret as the podman secret kube play looks up, with the template's keys (only those, so a
    key the template lacks shows up as a pod that cannot start)."""
    keys = set(template.get("stringData", {})) | set(template.get("data", {}))
    missing = keys - set(values)
    if missing:
        sys.exit(f"kube play: no test value for the Secret's keys {sorted(missing)}")
    # podman 4.3 reads a secret for secretKeyRef as a JSON object of key -> base64 value.
    content = {k: base64.b64encode(values[k].encode()).decode() for k in sorted(keys)}
    name = template["metadata"]["name"]
    podman("secret", "rm", name, check=False)
    podman("secret", "create", name, "-", input=json.dumps(content))


def wait_ready(timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = dict(SERVICES)
    while pending and time.monotonic() < deadline:
        for name in list(pending):
            container = f"{name}-pod-0-{name}"
            state = podman("inspect", "-f", "{{.State.Status}}", container, check=False).stdout.strip()
            if state == "running" and podman("exec", container, "/usr/local/bin/itour-healthcheck", "/ready",
                                             check=False).returncode == 0:
                print(f"  pod {name}-pod-0: ready")
                del pending[name]
        time.sleep(1)
    if pending:
        for name in pending:
            print(f"kube play: {name}-pod-0 not ready; its log:", file=sys.stderr)
            print(podman("logs", "--tail", "20", f"{name}-pod-0-{name}", check=False).stdout, file=sys.stderr)
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag")
    parser.add_argument("--network")
    parser.add_argument("--postgres-password", default="itour-demo-db")
    parser.add_argument("--down", action="store_true")
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--host-port-base", type=int, default=18100)
    args = parser.parse_args()
    if args.down:
        if PLAY.exists():
            podman("kube", "down", str(PLAY), check=False)
        podman("secret", "rm", "itour-secrets", check=False)
        return

    docs = manifests()
    problems = validate(docs)
    if problems:
        sys.exit("kube play: manifests do not match the Kubernetes schemas:\n  " + "\n  ".join(problems))
    kinds = sorted({d["kind"] for d in docs})
    print(f"schemas (Kubernetes {SCHEMA_VERSION}): {len(docs)} documents valid ({', '.join(kinds)})")
    skipped = sorted({f"{d['kind']}/{d['metadata']['name']}" for d in docs if d["kind"] not in PLAYABLE})
    print(f"podman cannot run, checked by schema only: {', '.join(skipped)}")

    secrets = {"POSTGRES_PASSWORD": args.postgres_password, "ADMIN_EMAIL": "owner@example.edu",
               "ADMIN_PASSWORD": "kube-play-password", "REPORTS_TOKEN": "kube-play-reports-token", "METRICS_TOKEN": "",
               "CATALOG_COMMAND_KEY": "kube-play-command-key", "CATALOG_COMMAND_KEY_PREVIOUS": "",
               # The pseudonyms' key of the database it shares with compose (analytics refuses another key there).
               "ANALYTICS_ID_KEY": os.environ.get("ANALYTICS_ID_KEY", "kube-play-analytics-id-key"), "ERASURE_TOKEN": "kube-play-erasure-token"}
    # No SASL on the broker kube play runs: its credentials empty, which the services take as unset.
    secrets |= {"KAFKA_SASL_USERNAME": "", "KAFKA_SASL_PASSWORD": ""}
    for template in (d for d in docs if d["kind"] == "Secret"):
        make_secret(template, secrets)
    PLAY.parent.mkdir(parents=True, exist_ok=True)
    PLAY.write_text(yaml.safe_dump_all(playable(docs, args.tag, args.host_port_base), sort_keys=False))
    played = podman("kube", "play", "--replace", "--network", args.network, str(PLAY), check=False)
    if played.returncode != 0:
        sys.exit(f"podman kube play failed:\n{played.stdout}\n{played.stderr}")
    wait_ready(args.timeout)


if __name__ == "__main__":
    main()
