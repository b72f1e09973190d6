#!/bin/bash
# Creates the iTour topics (DESIGN.md, "Topics") if they do not exist yet. Runs inside the
# apache/kafka image (kafka-topics.sh): as the one-shot `kafka-topics` service of
# docker-compose.yml, and as the Kubernetes Job in deploy/kubernetes/kafka-topics-job.yaml,
# which carries a copy of this file in a ConfigMap (tests/deploy checks the two are identical).
#
# Environment:
#   BOOTSTRAP_SERVERS   broker list, e.g. kafka:9092 (required)
#   REPLICATION_FACTOR  1 for the single-node compose broker, 3 in production (default 1)
#   MIN_INSYNC_REPLICAS default: 1 when REPLICATION_FACTOR is 1, else 2 (acks=all needs it)
#   KAFKA_TOPIC_PREFIX  prepended to every topic name, as the services do (default empty)
#   KAFKA_TOPICS_BIN    path of kafka-topics.sh (default /opt/kafka/bin/kafka-topics.sh)
#
# Existing topics are left alone (their partition counts and configs are not changed).
set -euo pipefail

: "${BOOTSTRAP_SERVERS:?set BOOTSTRAP_SERVERS, e.g. kafka:9092}"
rf=${REPLICATION_FACTOR:-1}
if [[ $rf -gt 1 ]]; then default_isr=2; else default_isr=1; fi
isr=${MIN_INSYNC_REPLICAS:-$default_isr}
prefix=${KAFKA_TOPIC_PREFIX:-}
topics_bin=${KAFKA_TOPICS_BIN:-/opt/kafka/bin/kafka-topics.sh}

# name | partitions | extra configs (comma separated, may be empty)
topics=(
  "catalog.commands|6|"
  "catalog.command-results|6|"
  "catalog.events|6|cleanup.policy=compact,min.compaction.lag.ms=60000"
  "tracking.events|12|retention.ms=604800000"
  "dead-letters|3|retention.ms=2592000000"
)

echo "waiting for the broker at ${BOOTSTRAP_SERVERS}"
for attempt in $(seq 1 60); do
  if "$topics_bin" --bootstrap-server "$BOOTSTRAP_SERVERS" --list >/dev/null 2>&1; then
    break
  fi
  if [[ $attempt -eq 60 ]]; then
    echo "broker not reachable after 60 attempts" >&2
    exit 1
  fi
  sleep 2
done

for spec in "${topics[@]}"; do
  IFS='|' read -r name partitions configs <<<"$spec"
  args=(--bootstrap-server "$BOOTSTRAP_SERVERS" --create --if-not-exists
        --topic "${prefix}${name}" --partitions "$partitions" --replication-factor "$rf"
        --config "min.insync.replicas=${isr}")
  if [[ -n $configs ]]; then
    IFS=',' read -r -a extra <<<"$configs"
    for c in "${extra[@]}"; do args+=(--config "$c"); done
  fi
  echo "topic ${prefix}${name}: ${partitions} partitions, replication ${rf}${configs:+, ${configs}}"
  "$topics_bin" "${args[@]}"
done

"$topics_bin" --bootstrap-server "$BOOTSTRAP_SERVERS" --describe \
  --topic "^${prefix//./\\.}(catalog\\..*|tracking\\.events|dead-letters)$" 2>/dev/null || true
echo "topics ready"
