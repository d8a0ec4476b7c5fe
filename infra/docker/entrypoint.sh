#!/bin/sh
# The image's one entry point: the first argument picks the role. `exec` so tini's child is Node
# itself and SIGTERM reaches the app's graceful shutdown.
set -eu
role="${1:-gateway}"
case "$role" in
  gateway) exec node apps/gateway/dist/main.js ;;
  worker) exec node apps/worker/dist/main.js ;;
  migrate) exec node packages/store/dist/cli/migrate.js ;;
  *)
    echo "unknown role \"$role\": use gateway, worker or migrate" >&2
    exit 64
    ;;
esac
