#!/usr/bin/env bash
# Installs the Claude Code CLI that `probe bracket --client claude` and probe's real-client test
# drive, pinned to the version the thresholds were measured on (override with CLAUDE_VERSION).
# The npm package ships a native binary; on Node 20 npm warns about the engine and the install
# still works (an unpinned install on Node 20 resolves to an older release, hence the pin).
# Installs into $GATEKIT_CLAUDE_DIR (default: $HOME/.cache/gatekit/claude); the binary is then
# $GATEKIT_CLAUDE_DIR/node_modules/.bin/claude, where the test looks for it.
set -euo pipefail

version="${CLAUDE_VERSION:-2.1.332}"
dir="${GATEKIT_CLAUDE_DIR:-$HOME/.cache/gatekit/claude}"

mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
    printf '{ "name": "gatekit-claude", "private": true }\n' > "$dir/package.json"
fi
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version"
"$dir/node_modules/.bin/claude" --version
