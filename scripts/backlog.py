"""What analytics has not yet counted of tracking.events, exactly: the broker's high watermark of each
partition (from a fetch of its last batch: tansu's ListOffsets answer falls short) against the offset analytics stored with its
aggregates (analytics.consumer_offsets). For scripts/drain.sh.

    .venv/bin/python scripts/backlog.py --brokers HOST:PORT --pg-port PORT [--pg-db DB] [--prefix P]

Prints one line: `backlog=N beyond=M partitions=K detail=...` where N is the events waiting in partitions
whose stored offset is within the log, M the events in partitions whose stored offset lies beyond the
log's end (a log that moved under analytics: it would wait there and never count them). Exit 0, or 1
when either figure could not be read (then the line says why).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--brokers", required=True)
    parser.add_argument("--pg-port", required=True)
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-db", default="itour")
    parser.add_argument("--prefix", default="")
    args = parser.parse_args()
    topic = args.prefix + "tracking.events"
    try:
        from confluent_kafka import Consumer, TopicPartition
        consumer = Consumer({"bootstrap.servers": args.brokers, "group.id": "itour-backlog-probe",
                             "enable.auto.commit": False, "socket.timeout.ms": 5000})
        metadata = consumer.list_topics(topic, timeout=5).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            print(f"backlog=0 beyond=0 partitions=0 detail={topic}-missing")
            return 0
        listed = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5, cached=False)
                  for p in sorted(metadata.partitions)}
        # tansu 0.6 answers ListOffsets(latest) with the last batch's base offset + 1, not the log's end
        # (13 messages in two batches of 10 and 3: 11). A fetch response carries the true high watermark:
        # read the last batch of every non-empty partition, then take librdkafka's figure from that fetch.
        marks = dict(listed)
        reading = {p for p, (low, high) in listed.items() if high > low}
        if reading:
            consumer.assign([TopicPartition(topic, p, listed[p][1] - 1) for p in reading])
            deadline = time.monotonic() + 5
            while reading and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    reading.discard(message.partition())
            for p in listed:
                if listed[p][1] > listed[p][0] and p not in reading:
                    low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), cached=True)
                    if high >= listed[p][1]:
                        marks[p] = (listed[p][0], high)
        consumer.close()
    except Exception as error:  # noqa: BLE001
        print(f"backlog=? beyond=? partitions=? detail=broker:{str(error).replace(' ', '_')[:120]}")
        return 1
    try:
        rows = subprocess.run(["psql", "-h", args.pg_host, "-p", str(args.pg_port), "-U", "itour", "-d", args.pg_db, "-tA",
                               "-F", " ", "-c", f"SELECT partition, next_offset FROM analytics.consumer_offsets WHERE topic = '{topic}'"],
                              capture_output=True, text=True, timeout=20, check=True).stdout.split("\n")
        stored = {int(p): int(o) for p, o in (r.split() for r in rows if r.strip())}
    except (subprocess.SubprocessError, OSError, ValueError) as error:
        print(f"backlog=? beyond=? partitions={len(marks)} detail=postgres:{str(error).replace(' ', '_')[:120]}")
        return 1
    backlog = beyond = 0
    moved = []
    for p, (low, high) in marks.items():
        at = stored.get(p, low)
        if at > high:
            beyond += high - low
            moved.append(f"p{p}:stored{at}>end{high}")
        else:
            backlog += high - max(at, low)
    shown = ",".join(moved[:3]) + (f",+{len(moved) - 3}-more" if len(moved) > 3 else "")
    print(f"backlog={backlog} beyond={beyond} partitions={len(marks)} detail={shown or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
