#!/usr/bin/env bash
# `make up` as a newcomer meets it: a fresh clone on a fresh Debian 12 + Swift machine, in a
# container, timed. README's "make up" figure comes from this.
#
#   scripts/fresh-up.sh [REV]    REV (default HEAD) of this repository, cloned inside the container
#
# The machine: Debian 12 (scripts/containers.sh base) with what a machine of this kind has before
# anyone installs anything: git, make, gcc, Python 3, the Swift toolchain's system libraries (the list
# swift.org's Debian 12 image installs), /opt/swift and the package mirror /opt/swift-packages
# (mounted read-only, git pointed at it as on the host) and
# the host's CA bundle, which the registries' TLS proxy here needs (pip, apt over https). Preparing that image is not timed; the
# clone and `make up` are, from `git clone` to "iTour is up". Nothing of the host's .build, .venv or
# apt cache is used. Needs the test tools (podman, debootstrap): scripts/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
# netavark and runc, as make containers runs them (docs/PLATFORM.md).
export CONTAINERS_CONF=$PWD/deploy/podman/containers.conf

rev=$(git rev-parse "${1:-HEAD}")
image=localhost/itour/fresh-machine:bookworm
base_image=localhost/itour/base:bookworm

scripts/containers.sh base >/dev/null
if ! podman image exists "$image"; then
  echo "==> $image (Debian 12 with what a machine of this kind has; not timed)"
  podman build --format docker -t "$image" -f - . >"$run_dir/fresh-machine-build.log" 2>&1 <<EOF || {
FROM $base_image
RUN export DEBIAN_FRONTEND=noninteractive && apt-get update -q \\
 && apt-get install -y -q --no-install-recommends ca-certificates git make gcc g++ python3 gnupg2 unzip tzdata \\
      binutils-gold libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev libsqlite3-0 \\
      libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config zlib1g-dev \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN git config --system url./opt/swift-packages/.insteadOf https://github.com/
ENV PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
    echo "fresh-up.sh: building $image failed; see $run_dir/fresh-machine-build.log" >&2; exit 1; }
fi

echo "==> make up in a fresh container, clone of ${rev:0:12} ($(nproc) cores on the host)"
ca=/etc/ssl/certs/ca-certificates.crt
podman run --rm \
  -v "$ca":/host-ca.crt:ro -e PIP_CERT=/host-ca.crt -e SSL_CERT_FILE=/host-ca.crt -e REQUESTS_CA_BUNDLE=/host-ca.crt \
  -e CURL_CA_BUNDLE=/host-ca.crt -e GIT_SSL_CAINFO=/host-ca.crt \
  -v /opt/swift:/opt/swift:ro -v /opt/swift-packages:/opt/swift-packages:ro -v "$PWD/.git":/src.git:ro \
  "$image" bash -c "
    set -e
    t0=\$(date +%s)
    git clone -q /src.git /itour && cd /itour && git checkout -q $rev
    make up
    echo \"fresh-up: clone + make up took \$(( \$(date +%s) - t0 )) s\"
  "
