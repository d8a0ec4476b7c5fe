#!/usr/bin/env bash
# Every Debian package the CI checks use, in one apt-get (run by .ci/run before anything else, so
# the checks that then run at once never race for dpkg's lock; each check's script still installs
# its own when run alone). Idempotent: only what is missing is installed.
#   tmux: the CLI's prompt tests · nginx, docker-compose, python3: the deployment checks and the
#   stack's proxy · chromium-headless-shell: the console in a browser · postgresql-15: pgbench and
#   the failover drill's initdb / pg_basebackup · pgbouncer: the pooler tests (its service kept
#   from starting: the tests start their own).
set -euo pipefail
wanted=(tmux nginx docker-compose python3 chromium-headless-shell postgresql-15 pgbouncer)
missing=()
for pkg in "${wanted[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "all present: ${wanted[*]}"
  exit 0
fi
echo "apt-get install ${missing[*]}"
# No service start during the install (pgbouncer, nginx, postgresql): policy-rc.d 101 tells
# invoke-rc.d to leave them stopped; the checks start their own instances.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
