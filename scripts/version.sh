#!/usr/bin/env bash
# The suite's version: the release line below and the commit, e.g. 0.2.0-g1a2b3c4d5e6f (with
# -dirty for uncommitted changes). Images are tagged with it and carry it as ITOUR_VERSION, which
# /health, itour_build_info and the admin's System Status show.
set -euo pipefail
cd "$(dirname "$0")/.."
release=0.2.0
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=$(git diff --quiet HEAD 2>/dev/null || echo -dirty)
echo "$release-g$commit$dirty"
