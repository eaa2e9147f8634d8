#!/usr/bin/env bash
# Installs the third-party MCP clients that probe's interop tests drive against `probe serve`:
#   - the official Python SDK (`mcp` on PyPI), into the current python3's environment;
#   - the MCP Inspector CLI (`@modelcontextprotocol/inspector` on npm), into
#     $GATEKIT_CLIENTS_DIR (default: $HOME/.cache/gatekit/mcp-clients), where the tests look for
#     node_modules/.bin/mcp-inspector.
# The tests skip with a printed notice when these are missing, so CI must run this script first
# for them to count. Safe to run twice.
set -euo pipefail

dir="${GATEKIT_CLIENTS_DIR:-$HOME/.cache/gatekit/mcp-clients}"

python3 -m pip install --quiet --disable-pip-version-check 'mcp>=1.2'

mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
    printf '{ "name": "gatekit-mcp-clients", "private": true }\n' > "$dir/package.json"
fi
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector

python3 -c 'import mcp, importlib.metadata as m; print("mcp (python)", m.version("mcp"))'
echo "inspector: $dir/node_modules/.bin/mcp-inspector"
