#!/usr/bin/env bash
# PgBouncer for the tests that put a real transaction pooler in front of Postgres (issue 26):
# Debian's package, installed once. The tests start their own instances (own ini, free port, run
# as the postgres user); the packaged service is never used, so it is kept from starting.
set -euo pipefail
if [ ! -x /usr/sbin/pgbouncer ]; then
  # No service start during the install: policy-rc.d 101 tells invoke-rc.d to leave it stopped.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
fi
/usr/sbin/pgbouncer --version | head -n1
