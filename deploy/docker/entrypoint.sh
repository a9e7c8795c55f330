#!/bin/sh
# Container entrypoint: start one of the platform apps.
#   entrypoint.sh <app> [extra node args for the app...]
set -eu

APPS="gateway authz orgs-teams contracts-licensing billing-dashboard metricsproxy marketplace-listener clusters"

usage() {
  echo "usage: <image> <app> [args...]" >&2
  echo "  <app> is one of: $APPS" >&2
}

if [ "$#" -lt 1 ] || [ -z "$1" ]; then
  echo "error: no app given: the first container argument must name the app to run." >&2
  usage
  exit 64
fi

app="$1"
shift

case " $APPS " in
  *" $app "*) ;;
  *)
    echo "error: unknown app '$app'." >&2
    usage
    exit 64
    ;;
esac

main="/app/dist/apps/$app/main.js"
if [ ! -f "$main" ]; then
  echo "error: $main is missing from the image (was it built?)." >&2
  exit 70
fi

# exec: node becomes PID 1 and receives SIGTERM directly from the runtime.
exec node "$main" "$@"
