#!/usr/bin/env bash
# Installs what CI needs beside the workspace into .tools/: Node 24 (the npm package `node@24`,
# never touching the system Node; the workspace's own Node 22 comes with `pnpm install` as the
# root devDependency `node`) for the second runtime CI tests on, and the official MCP conformance
# suite. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
NODE24_VERSION="${NODE24_VERSION:-24}"
CONFORMANCE_VERSION="0.2.0-alpha.12"

mkdir -p "$tools"
if [ ! -x "$tools/node24/node_modules/node/bin/node" ]; then
  echo "installing node@$NODE24_VERSION into .tools/node24"
  npm install --prefix "$tools/node24" --no-audit --no-fund --loglevel=error "node@$NODE24_VERSION" >/dev/null
fi
if [ ! -f "$tools/conformance/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into .tools/conformance"
  npm install --prefix "$tools/conformance" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >/dev/null
fi
echo "node24: $("$tools/node24/node_modules/node/bin/node" --version)"
