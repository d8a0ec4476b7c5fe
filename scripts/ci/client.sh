#!/usr/bin/env bash
# The client's CI needs, run after the build and before the tests: tmux for the prompt tests
# (they drive the real CLI in a pseudo-terminal), and one stand-alone run of the scripted tour
# (`pnpm demo --spawn`: its own two gateways and two workers; non-zero if any step misbehaves).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v tmux >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi
tmux -V
node --conditions=@mcp-tasks/source --import tsx tooling/demo/src/demo.ts --spawn
