#!/usr/bin/env bash
# Installs what CI needs beside the workspace into .tools/: Node 22 (the npm package `node@22`,
# never touching the system Node; the workspace's own Node 24, the production runtime, comes with
# `pnpm install` as the root devDependency `node`) for the floor CI tests on too, and the official
# MCP conformance suite. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
NODE22_VERSION="${NODE22_VERSION:-22}"
CONFORMANCE_VERSION="0.2.0-alpha.12"

mkdir -p "$tools"
if [ ! -x "$tools/node22/node_modules/node/bin/node" ]; then
  echo "installing node@$NODE22_VERSION into .tools/node22"
  npm install --prefix "$tools/node22" --no-audit --no-fund --loglevel=error "node@$NODE22_VERSION" >/dev/null
fi
if [ ! -f "$tools/conformance/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into .tools/conformance"
  npm install --prefix "$tools/conformance" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >/dev/null
fi
echo "node22: $("$tools/node22/node_modules/node/bin/node" --version)"
