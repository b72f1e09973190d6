#!/bin/bash
# Container HEALTHCHECK for the iTour images: GET PATH (default /health) from the service in this
# container; exit 0 on a 200, 1 otherwise. Plain bash (/dev/tcp), so the runtime image needs
# neither curl nor wget.
#
# Port: $HTTP_PORT, else the service's default port ($ITOUR_SERVICE). Host: 127.0.0.1, unless
# HTTP_HOST names one specific address (then the service listens only there).
set -u

path=${1:-/health}

port=${HTTP_PORT:-}
if [[ -z $port ]]; then
  case ${ITOUR_SERVICE:-} in
    feed) port=8080 ;;
    admin) port=8081 ;;
    catalog) port=8082 ;;
    analytics) port=8083 ;;
    *) echo "itour-healthcheck: set HTTP_PORT or ITOUR_SERVICE" >&2; exit 1 ;;
  esac
fi

host=${HTTP_HOST:-127.0.0.1}
case $host in
  0.0.0.0 | "" ) host=127.0.0.1 ;;
  :: | "[::]" ) host=::1 ;;
esac

if ! { exec 3<>"/dev/tcp/${host}/${port}"; } 2>/dev/null; then
  echo "itour-healthcheck: cannot connect to ${host}:${port}" >&2
  exit 1
fi

printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: itour-healthcheck\r\nConnection: close\r\n\r\n' \
  "$path" >&3

status=""
IFS= read -r -t 5 status <&3
exec 3<&-
status=${status%$'\r'}

case $status in
  "HTTP/1."?" 200"*) exit 0 ;;
esac
echo "itour-healthcheck: ${host}:${port}${path} answered '${status:-nothing}'" >&2
exit 1
