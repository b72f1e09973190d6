"""The suite's Kafka topics, as Shared/Core/Messages/Topics.swift declares them, on a broker.

    .venv/bin/python scripts/topics.py ensure|check|list|delete|recreate --brokers HOST:PORT [--prefix P] [TOPIC...]

ensure:   create the missing ones with their partition counts; a topic that exists with another count
          is reported (exit 1 only for check).
check:    exit 1 when one is missing or has another partition count.
list:     each topic's partition count (or "missing").
delete:   delete the topics named (default: none; names without the prefix).
recreate: delete the topics named, then create them with their declared counts.
TOPIC names are without the prefix (e.g. tracking.events); default for ensure/check/list: all.
Uses the confluent_kafka AdminClient of the project's venv (librdkafka 2.x).
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPICS_SWIFT = ROOT / "Shared" / "Core" / "Messages" / "Topics.swift"


def declared_topics(path: Path = TOPICS_SWIFT) -> dict[str, int]:
    """{topic name: partitions} from Topics.swift's `Topic.all`."""
    text = path.read_text()
    constants = dict(re.findall(r'static let (\w+)\s*=\s*"([^"]+)"', text))
    out = {}
    for ref, partitions in re.findall(r'KafkaTopicSpec\(name:\s*(\w+|"[^"]+")\s*,\s*partitions:\s*(\d+)', text):
        name = ref.strip('"') if ref.startswith('"') else constants[ref]
        out[name] = int(partitions)
    if not out:
        raise RuntimeError(f"no KafkaTopicSpec found in {path}")
    return out


def admin(brokers: str):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": brokers, "socket.timeout.ms": 5000})


def partition_counts(brokers: str, names: list[str], client=None) -> dict[str, int | None]:
    """{full topic name: partition count, or None when the broker does not have it}."""
    client = client or admin(brokers)
    metadata = client.list_topics(timeout=10)
    out = {}
    for name in names:
        topic = metadata.topics.get(name)
        out[name] = None if topic is None or topic.error is not None else len(topic.partitions)
    return out


def create(brokers: str, wanted: dict[str, int], client=None) -> dict[str, str]:
    """Creates each {full name: partitions}; {name: "created" | "exists" | error text}."""
    from confluent_kafka.admin import NewTopic
    client = client or admin(brokers)
    futures = client.create_topics([NewTopic(name, count) for name, count in wanted.items()], operation_timeout=10,
                                   request_timeout=15)
    out = {}
    for name, future in futures.items():
        try:
            future.result()
            out[name] = "created"
        except Exception as error:  # noqa: BLE001 (KafkaException carries the broker's code)
            out[name] = "exists" if "TOPIC_ALREADY_EXISTS" in str(error) or "already exists" in str(error) else str(error)
    return out


def delete(brokers: str, names: list[str], client=None) -> dict[str, str]:
    client = client or admin(brokers)
    futures = client.delete_topics(names, operation_timeout=10, request_timeout=15)
    out = {}
    for name, future in futures.items():
        try:
            future.result()
            out[name] = "deleted"
        except Exception as error:  # noqa: BLE001
            out[name] = str(error)
    return out


def ensure(brokers: str, prefix: str = "", only: list[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """Creates the missing topics; ({name: what was done}, [problems: wrong counts, errors])."""
    declared = declared_topics()
    names = only or list(declared)
    client = admin(brokers)
    counts = partition_counts(brokers, [prefix + n for n in names], client)
    missing = {prefix + n: declared[n] for n in names if counts[prefix + n] is None}
    done = create(brokers, missing, client) if missing else {}
    problems = []
    after = partition_counts(brokers, [prefix + n for n in names], client)
    for n in names:
        have = after[prefix + n]
        if have is None:
            problems.append(f"{prefix + n}: missing ({done.get(prefix + n, 'not created')})")
        elif have != declared[n]:
            problems.append(f"{prefix + n}: {have} partitions, {declared[n]} declared")
        done.setdefault(prefix + n, "exists")
    return done, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["ensure", "check", "list", "delete", "recreate"])
    parser.add_argument("--brokers", required=True)
    parser.add_argument("--prefix", default="")
    parser.add_argument("topics", nargs="*")
    args = parser.parse_intermixed_args()
    declared = declared_topics()
    unknown = [t for t in args.topics if t not in declared]
    if unknown:
        print(f"topics.py: not declared in Topics.swift: {unknown}", file=sys.stderr)
        return 2
    p = args.prefix
    if args.command in ("ensure", "check"):
        if args.command == "ensure":
            done, problems = ensure(args.brokers, p, args.topics or None)
            created = [n for n, what in done.items() if what == "created"]
            print(f"topics: {len(created)} created" + (f" ({', '.join(created)})" if created else "")
                  + f", {len(done) - len(created)} already there")
        else:
            names = args.topics or list(declared)
            counts = partition_counts(args.brokers, [p + n for n in names])
            problems = [f"{p + n}: " + ("missing" if counts[p + n] is None else f"{counts[p + n]} partitions, {declared[n]} declared")
                        for n in names if counts[p + n] != declared[n]]
        for problem in problems:
            print(f"topics: WARNING {problem} (tansu auto-creates a topic on first produce, with 4 partitions; "
                  "a service was faster than this script)" if "partitions" in problem else f"topics: WARNING {problem}",
                  file=sys.stderr)
        return 1 if problems and args.command == "check" else 0
    if args.command == "list":
        names = args.topics or list(declared)
        for name, count in partition_counts(args.brokers, [p + n for n in names]).items():
            print(f"{name}\t{'missing' if count is None else count}")
        return 0
    if not args.topics:
        print("topics.py: name the topics to delete", file=sys.stderr)
        return 2
    started = time.monotonic()
    result = delete(args.brokers, [p + n for n in args.topics])
    print("topics: " + ", ".join(f"{n} {what}" for n, what in result.items()))
    if args.command == "recreate":
        result = create(args.brokers, {p + n: declared[n] for n in args.topics})
        print("topics: " + ", ".join(f"{n} {what}" for n, what in result.items())
              + f" ({time.monotonic() - started:.2f}s after the delete)")
        return 0 if all(what == "created" for what in result.values()) else 1
    return 0 if all(what == "deleted" for what in result.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
