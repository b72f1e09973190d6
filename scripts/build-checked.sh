#!/usr/bin/env bash
# swift build --build-tests, failing on a compiler warning in the project's own code (issue 47: a clean build
# prints none, and this keeps it so). Warnings from packages under .build/ are theirs, not counted. An incremental
# build warns only about what it recompiles; CI builds a clean clone, so there it checks everything.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
swift build --build-tests "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
((rc == 0)) || exit "$rc"
warnings=$(grep -E "^$root/(Services|Shared|Tests|Benchmarks|Package\.swift)[^:]*:[0-9]+:[0-9]+: warning:" "$out" | sort -u)
if [[ -n $warnings ]]; then
  echo
  echo "build-checked: the build printed $(wc -l <<<"$warnings") compiler warning(s) in the project's code; a clean build prints none:"
  echo "$warnings"
  exit 1
fi
