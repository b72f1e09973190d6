#!/usr/bin/env bash
# make bench: every benchmark with its figures and ratios, one after the other on private Postgres and
# broker instances (never the ones `make up` runs), with release binaries built once:
#
#   scripts/bench.sh            (ITOUR_BIN_DIR=DIR takes binaries from DIR instead of building)
#
#   1. scripts/bench-feed.sh       issue 4: GETs vs nginx and Postgres, near/search on 100 000 POIs,
#                                  POST /v1/events vs a raw producer, RSS and rebuild
#   2. scripts/bench-analytics.sh  issue 5: ingest vs COPY, report p95 over 90 days x 1 000 000 events, lag
# Each prints its own summary last; both summaries are repeated at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
mkdir -p "$log_dir"

if [[ -z ${ITOUR_BIN_DIR:-} ]]; then
  echo "==> swift build -c release"
  swift build -c release 2>&1 | build_summary
  ITOUR_BIN_DIR=$(swift build -c release --show-bin-path)
fi
export ITOUR_BIN_DIR

for bench in feed analytics; do
  echo "==> scripts/bench-$bench.sh (log $log_dir/bench-$bench.log)"
  scripts/bench-$bench.sh 2>&1 | tee "$log_dir/bench-$bench.log"
done

echo
echo "==================== benchmark summaries ===================="
sed -n '/^=== feed benchmarks/,$p' "$log_dir/bench-feed.log"
sed -n '/^==> analytics benchmark/,$p' "$log_dir/bench-analytics.log"
