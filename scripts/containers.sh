#!/usr/bin/env bash
# make containers: the suite built into images and run from them, as operators run it.
#
#   scripts/containers.sh            everything below, in order, then removes what it started
#   scripts/containers.sh base       the Debian 12 base image (made once, reused)
#   scripts/containers.sh stage      release binaries and runtime files in .run/containers/context
#   scripts/containers.sh images     base + stage + the four service images, tansu and Postgres
#   scripts/containers.sh down       remove the containers, pods and volumes a run left behind
#
# The run: the shipped docker-compose.yml with deploy/compose/local-images.yml (tansu and Debian's
# Postgres, made here, instead of images from Docker Hub), the demo loaded, every /ready waited
# for, then scripts/container_checks.py over HTTP (the demo tour on the feed, an event posted and
# counted by the Reports API, the admin's System Status with four services up at this version);
# then `podman kube play` of deploy/kubernetes with every pod ready (scripts/kube_play.py). Host
# ports: CONTAINERS_PORT_BASE (18080) + 0..3 for feed, admin, catalog, analytics, so a `make up`
# on 8080.. can run beside it. Timings of each step at the end. The release build goes to
# .build-release (RELEASE_SCRATCH_PATH), apart from the tests' debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
root=$PWD

export CONTAINERS_CONF=$root/deploy/podman/containers.conf
version=$(scripts/version.sh)
tag=$version
base_image=localhost/itour/base:bookworm
ctx=$run_dir/containers/context
project=itour-containers
port_base=${CONTAINERS_PORT_BASE:-18080}
compose=("$root/.venv/bin/podman-compose" -p "$project" -f docker-compose.yml -f deploy/compose/local-images.yml)
timings=()
t0=$(now)

step() { echo; echo "==> $*"; }
timed() { # timed LABEL CMD...: runs CMD, records its duration
  local label=$1 t; shift; t=$(now)
  "$@"
  timings+=("$(printf '%-34s %s' "$label" "$(since "$t")")")
}

install() {
  scripts/install.sh
}

# The Debian mirror this host's apt uses (the registry CI reaches), else deb.debian.org.
host_mirror() {
  local uri
  uri=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
        | head -n 1 | grep -oE 'https?://[^ ]+' || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# Debian 12 from the Debian mirror (no registry is reachable here), trimmed of docs and caches.
base() {
  if podman image exists "$base_image"; then
    echo "base image $base_image: present ($(podman image inspect -f '{{.Created}}' "$base_image" | cut -c1-19))"
    return
  fi
  local dir=$run_dir/containers/rootfs mirror=${DEBIAN_MIRROR:-$(host_mirror)}
  rm -rf "$dir"; mkdir -p "$dir"
  echo "debootstrap --variant=minbase bookworm ($mirror)"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$run_dir/containers/debootstrap.log" 2>&1 || {
    tail -n 20 "$run_dir/containers/debootstrap.log" >&2; exit 1; }
  # Security updates too, as a FROM debian:bookworm would have them.
  cat >"$dir/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
EOF
  # Keep images small: no man pages, docs or translations from later installs either.
  cat >"$dir/etc/dpkg/dpkg.cfg.d/01-itour-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/usr/share/locale/* \
         "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/log/*
  tar --numeric-owner -C "$dir" -c . | podman import -q \
    --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' - "$base_image" >/dev/null
  rm -rf "$dir"
  echo "base image $base_image: made ($(podman image inspect -f '{{.Size}}' "$base_image" | numfmt --to=iec))"
}

# Release binaries (static Swift runtime) and everything the Dockerfiles copy.
stage() {
  local scratch=${RELEASE_SCRATCH_PATH:-$root/.build-release}
  local build=(swift build -c release --static-swift-stdlib --scratch-path "$scratch")
  echo "swift build -c release --static-swift-stdlib ($scratch)"
  # build_summary (common.sh): an up-to-date build prints no line it shows, and that is no failure (issue 49).
  for s in "${services[@]}"; do "${build[@]}" --product "$s" 2>&1 | build_summary; done
  local bin; bin=$("${build[@]}" --show-bin-path)
  rm -rf "$ctx"; mkdir -p "$ctx/lib" "$ctx/services"
  for s in "${services[@]}"; do
    mkdir -p "$ctx/services/$s"
    cp "$bin/$s" "$ctx/services/$s/"
    # Debug info out, symbols kept: backtraces still name functions.
    strip --strip-debug "$ctx/services/$s/$s"
  done
  # Resource bundles (SQL migrations) go with the service whose target made them.
  local target
  for s in "${services[@]}"; do
    target=$(tr '[:lower:]' '[:upper:]' <<<"${s:0:1}")${s:1}
    [[ -d $bin/itour_$target.resources ]] && cp -R "$bin/itour_$target.resources" "$ctx/services/$s/"
  done
  cp -L .local/lib/librdkafka.so.1 "$ctx/lib/"
  cp -L .local/bin/tansu "$ctx/tansu"
  cp deploy/healthcheck.sh "$ctx/healthcheck.sh"
  cp -R deploy/demo "$ctx/demo"
  # The admin serves Leaflet (its map) from Debian's libjs-leaflet, installed on this host by install.sh.
  mkdir -p "$ctx/leaflet/images"
  cp /usr/share/javascript/leaflet/leaflet.js /usr/share/javascript/leaflet/leaflet.css "$ctx/leaflet/"
  cp /usr/share/javascript/leaflet/images/*.png "$ctx/leaflet/images/"
  cp deploy/postgres/entrypoint.sh "$ctx/entrypoint.sh"
  du -sh "$ctx"/services/* | sed 's/^/  /'
  # On CI the release build is not used again once staged; its space goes to the images.
  if [[ -n ${CI:-} ]]; then rm -rf "$scratch"; fi
}

images() {
  local build=(podman build --format docker --layers --build-arg "BASE_IMAGE=$base_image")
  for s in "${services[@]}"; do
    "${build[@]}" -q -f deploy/Dockerfile --build-arg "SERVICE=$s" --build-arg "ITOUR_VERSION=$version" \
      -t "localhost/itour/$s:$tag" "$ctx" >/dev/null
    echo "localhost/itour/$s:$tag"
  done
  "${build[@]}" -q -f deploy/tansu/Dockerfile -t "localhost/itour/tansu:$tag" "$ctx" >/dev/null
  echo "localhost/itour/tansu:$tag"
  "${build[@]}" -q -f deploy/postgres/Dockerfile -t "localhost/itour/postgres:15" "$ctx" >/dev/null
  echo "localhost/itour/postgres:15"
}

# Sizes as a registry would store them (gzip of each layer) and as unpacked on disk.
sizes() {
  local s size gz
  for s in "${services[@]}" tansu; do
    size=$(podman image inspect -f '{{.Size}}' "localhost/itour/$s:$tag")
    gz=$(podman save "localhost/itour/$s:$tag" 2>/dev/null | gzip -1 | wc -c)
    printf '  %-10s %6s unpacked, %6s compressed\n' "$s" "$(numfmt --to=iec "$size")" "$(numfmt --to=iec "$gz")"
  done
}

compose_env() {
  export ITOUR_VERSION=$tag ITOUR_IMAGE_PREFIX=localhost/ ITOUR_BIND=127.0.0.1
  export FEED_HOST_PORT=$port_base ADMIN_HOST_PORT=$((port_base + 1))
  export CATALOG_HOST_PORT=$((port_base + 2)) ANALYTICS_HOST_PORT=$((port_base + 3))
  export POSTGRES_HOST_PORT=$((port_base + 10)) KAFKA_HOST_PORT=$((port_base + 11))
  # podman-compose 1.x fills a service's ${...} from that service's own environment when the shell does not set the
  # name: postgres' ${POSTGRES_USER:-itour} would read its own POSTGRES_USER (the superuser), and no services' role
  # would be made. Set here, the shell's values win (docker-compose.yml, postgres).
  export POSTGRES_USER=${POSTGRES_USER:-itour} POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-itour-demo-db}
  # One pseudonyms' key for compose and the pods after it: they share analytics' database, whose key fingerprint
  # refuses a replica with another key (docs/PRIVACY.md).
  export ANALYTICS_ID_KEY=${ANALYTICS_ID_KEY:-itour-containers-analytics-id-key}
}

compose_up() {
  compose_env
  local t; t=$(now)
  "${compose[@]}" up -d >"$run_dir/containers/compose-up.log" 2>&1 || {
    tail -n 30 "$run_dir/containers/compose-up.log" >&2; exit 1; }
  local s port deadline=$((SECONDS + ${READY_TIMEOUT:-180}))
  for s in feed admin catalog analytics; do
    case $s in feed) port=$port_base ;; admin) port=$((port_base + 1)) ;;
               catalog) port=$((port_base + 2)) ;; analytics) port=$((port_base + 3)) ;; esac
    until curl -fsS -o /dev/null -m 2 "http://127.0.0.1:$port/ready" 2>/dev/null; do
      if ((SECONDS > deadline)); then
        echo "containers.sh: $s not ready. The services' logs:" >&2
        local other
        for other in catalog demo feed analytics admin; do
          echo "--- $other" >&2
          podman logs --tail 30 "${project}_${other}_1" >&2 || true
        done
        exit 1
      fi
      sleep 1
    done
  done
  echo "all four ready $(since "$t") after compose up"
  timings+=("$(printf '%-34s %s' "compose up -> all ready" "$(since "$t")")")
}

checks() {
  compose_env
  .venv/bin/python scripts/container_checks.py --version "$version" --port-base "$port_base"
}

kube() {
  compose_env
  # The four services of compose make way for the pods; Postgres and the broker stay.
  "${compose[@]}" stop demo catalog feed analytics admin >/dev/null 2>&1 || true
  .venv/bin/python scripts/kube_play.py --tag "$tag" --network "${project}_default" \
    --postgres-password "${POSTGRES_PASSWORD:-itour-demo-db}"
}

down() {
  compose_env
  .venv/bin/python scripts/kube_play.py --down >/dev/null 2>&1 || true
  "${compose[@]}" down -v >/dev/null 2>&1 || true
  # podman-compose 1.x leaves the network when a container of it is still starting.
  podman network rm -f "${project}_default" >/dev/null 2>&1 || true
  # Images of earlier versions (each commit tags its own) and layers no tag holds any more; this
  # version's images, the base and Postgres stay for the next run.
  local image
  for image in $(podman images --format '{{.Repository}}:{{.Tag}}' | grep -E '^localhost/itour/(catalog|feed|analytics|admin|tansu):' || true); do
    [[ $image == *":$tag" ]] || podman rmi -f "$image" >/dev/null 2>&1 || true
  done
  podman image prune -f >/dev/null 2>&1 || true
  echo "removed the containers, pods, volumes and network of $project, and images of other versions"
}

mkdir -p "$run_dir/containers"
case ${1:-all} in
  base) install; base ;;
  stage) stage ;;
  images) install; base; stage; images; sizes ;;
  down) down ;;
  all)
    step "install (podman, runc, debootstrap, podman-compose)"; timed "install" install
    step "base image"; timed "base image" base
    step "release build and staging"; timed "release build + staging" stage
    step "images (version $version)"; timed "images" images
    sizes
    trap 'echo; echo "==> down"; down' EXIT
    step "compose up (docker-compose.yml + deploy/compose/local-images.yml)"; compose_up
    step "checks over HTTP"; timed "checks" checks
    step "podman kube play deploy/kubernetes"; timed "kube play -> all pods ready" kube
    echo; echo "==> timings"; printf '  %s\n' "${timings[@]}"
    echo "make containers: passed in $(since "$t0")"
    ;;
  *) echo "usage: scripts/containers.sh [all|base|stage|images|down]" >&2; exit 64 ;;
esac
