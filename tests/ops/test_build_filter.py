"""Issue 49: a second `make containers` (and so a second `make test`) in the same checkout failed, because
scripts/containers.sh filtered the release build's output with `grep | tail` under `set -o pipefail`, and an
up-to-date build prints no line the filter shows: grep's "no match" became the script's failure.

The filter is `build_summary` in scripts/common.sh now. These tests feed it output with and without
matching lines, and run the staging step of scripts/containers.sh twice in a copy of the scripts with a
stand-in `swift` (first a build that compiles, then an up-to-date one that prints nothing the filter
shows, then a failing one): no release build, a second or two in all.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

UP_TO_DATE = "[0/1] Planning build\n"   # matches nothing build_summary shows


def summary(text: str, producer_status: int = 0) -> subprocess.CompletedProcess:
    """`<producer printing text, exiting producer_status> | build_summary` in a script under set -euo pipefail."""
    script = (
        "set -euo pipefail\n"
        'source scripts/common.sh\n'
        'produce() { printf "%s" "$1"; return "$2"; }\n'
        'produce "$1" "$2" | build_summary\n'
        'echo "after the build"\n'
    )
    return subprocess.run(["bash", "-c", script, "summary", text, str(producer_status)], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)


def test_no_matching_line_is_not_a_failure():
    result = summary(UP_TO_DATE)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after the build\n"


def test_the_line_the_issue_saw_is_shown():
    result = summary("Building for production...\nBuild of product 'catalog' complete! (13.39s)\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Build of product 'catalog' complete! (13.39s)\nafter the build\n"


def test_the_last_three_matching_lines_are_shown():
    lines = "".join(f"Compiling itour_Shared File{i}.swift\n" for i in range(10)) + "Build complete! (200.0s)\n"
    result = summary(lines)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Compiling itour_Shared File8.swift", "Compiling itour_Shared File9.swift",
                                          "Build complete! (200.0s)", "after the build"]


def test_a_failing_build_still_fails():
    for text in ("error: no such module 'Foo'\n", UP_TO_DATE):
        result = summary(text, producer_status=1)
        assert result.returncode == 1, result.stdout
        assert "after the build" not in result.stdout


FAKE_SWIFT = """#!/bin/bash
# Stand-in for `swift build -c release ... [--product NAME | --show-bin-path]`, as FAKE_SWIFT_MODE says.
set -euo pipefail
product=
for ((i = 1; i <= $#; i++)); do
  [[ ${!i} == --show-bin-path ]] && { echo "$FAKE_BIN"; exit 0; }
  if [[ ${!i} == --product ]]; then j=$((i + 1)); product=${!j}; fi
done
mkdir -p "$FAKE_BIN"
case $FAKE_SWIFT_MODE in
  compile) printf 'Building for production...\\nCompiling itour_%s main.swift\\nBuild of product %s complete! (9.0s)\\n' "$product" "$product"
           printf '#!/bin/sh\\n' >"$FAKE_BIN/$product"; chmod +x "$FAKE_BIN/$product" ;;
  up-to-date) printf '[0/1] Planning build\\n' ;;
  fail) printf 'error: compile command failed\\n'; exit 1 ;;
esac
"""


@pytest.fixture()
def staging_copy(tmp_path: Path) -> tuple[Path, dict]:
    """The scripts containers.sh stage needs, in a directory of their own, with stand-ins for swift, strip,
    the version and the staged libraries."""
    if not Path("/usr/share/javascript/leaflet/leaflet.js").exists():
        pytest.skip("libjs-leaflet is not installed (scripts/install.sh installs it)")
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("containers.sh", "common.sh"):
        shutil.copy2(ROOT / "scripts" / name, root / "scripts" / name)
    (root / "scripts" / "version.sh").write_text("#!/bin/sh\necho 0.0.0-test\n")
    (root / "scripts" / "version.sh").chmod(0o755)
    (root / "deploy" / "postgres").mkdir(parents=True)
    shutil.copy2(ROOT / "deploy" / "healthcheck.sh", root / "deploy" / "healthcheck.sh")
    shutil.copy2(ROOT / "deploy" / "postgres" / "entrypoint.sh", root / "deploy" / "postgres" / "entrypoint.sh")
    (root / "deploy" / "demo").mkdir()
    (root / "deploy" / "demo" / "demo.json").write_text("{}\n")
    for rel in (".local/lib/librdkafka.so.1", ".local/bin/tansu"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("stand-in\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "swift").write_text(FAKE_SWIFT)
    (tools / "strip").write_text("#!/bin/sh\nexit 0\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "RELEASE_SCRATCH_PATH")}
    env.update(PATH=f"{tools}:{env.get('PATH', '/usr/bin:/bin')}", FAKE_BIN=str(tmp_path / "scratch" / "release"),
               RELEASE_SCRATCH_PATH=str(tmp_path / "scratch"))
    return root, env


def stage(root: Path, env: dict, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(root / "scripts" / "containers.sh"), "stage"], cwd=root,
                          env={**env, "FAKE_SWIFT_MODE": mode}, capture_output=True, text=True, timeout=60)


def test_staging_twice_in_one_checkout(staging_copy):
    root, env = staging_copy
    first = stage(root, env, "compile")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Build of product catalog complete!" in first.stdout
    staged = root / ".run" / "containers" / "context" / "services"
    assert sorted(p.name for p in staged.iterdir()) == ["admin", "analytics", "catalog", "feed"]

    # The second run finds the build up to date: swift prints nothing the filter shows (the issue's failure).
    second = stage(root, env, "up-to-date")
    assert second.returncode == 0, second.stdout + second.stderr
    assert (staged / "catalog" / "catalog").exists()

    # And a failing build still stops the staging.
    failed = stage(root, env, "fail")
    assert failed.returncode != 0, failed.stdout
    assert "error: compile command failed" in failed.stdout
