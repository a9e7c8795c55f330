#!/bin/sh
# Container entrypoint: start one of the platform apps, or apply every app's migrations and exit.
#   entrypoint.sh <app> [extra node args for the app...]
#   entrypoint.sh cli <command> [options]   the admin CLI (docs/operations.md), e.g. cli reset-password admin
#   entrypoint.sh migrate [app...]
#                               the apps named (default: all) in migrate-only mode (RUN_MIGRATIONS_ONLY=true),
#                               one after the other; exits with the first failure's code (the chart's
#                               migration Job)
# The image root is found from this script's place (/app in the image), so the production-topology test
# runs this same script on the built bundles outside a container.
set -eu

APPS="gateway authz orgs-teams contracts-licensing billing-dashboard metricsproxy marketplace-listener clusters"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

usage() {
  echo "usage: <image> <app> [args...] | <image> migrate [app...] | <image> cli <command> [options]" >&2
  echo "  <app> is one of: $APPS" >&2
}

bundle() {
  main="$ROOT/dist/apps/$1/main.js"
  if [ ! -f "$main" ]; then
    echo "error: $main is missing from the image (was it built?)." >&2
    exit 70
  fi
  echo "$main"
}

if [ "$#" -lt 1 ] || [ -z "$1" ]; then
  echo "error: no app given: the first container argument must name the app to run." >&2
  usage
  exit 64
fi

app="$1"
shift

if [ "$app" = cli ]; then
  main="$ROOT/dist/deploy/cli/main.js"
  if [ ! -f "$main" ]; then
    echo "error: $main is missing from the image (was it built?)." >&2
    exit 70
  fi
  exec node "$main" "$@"
fi

if [ "$app" = migrate ]; then
  # Each app applies only its own schema's migrations.
  for each in ${*:-$APPS}; do
    case " $APPS " in
      *" $each "*) ;;
      *)
        echo "error: unknown app '$each'." >&2
        usage
        exit 64
        ;;
    esac
    main=$(bundle "$each")
    echo "migrate: $each" >&2
    RUN_MIGRATIONS_ONLY=true node "$main" || {
      code=$?
      echo "error: the migrations of $each failed (exit code $code)." >&2
      exit "$code"
    }
  done
  exit 0
fi

case " $APPS " in
  *" $app "*) ;;
  *)
    echo "error: unknown app '$app'." >&2
    usage
    exit 64
    ;;
esac

main=$(bundle "$app")
# exec: node becomes PID 1 and receives SIGTERM directly from the runtime.
exec node "$main" "$@"
