#!/usr/bin/env bash
# The operator console in a real Chromium (pnpm test:browser): Debian's chromium-headless-shell,
# installed once (idempotent), driven by playwright-core. CI=1 makes a missing browser a failure,
# never a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium-headless-shell >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null
fi
export CHROMIUM_PATH="${CHROMIUM_PATH:-$(command -v chromium-headless-shell)}"
CI=1 pnpm test:browser
