#!/usr/bin/env bash
# Installs the Claude Code CLI that `probe bracket --client claude` and probe's real-client test
# drive: install-clients.sh's claude, pinned to the version the thresholds were measured on
# (override with CLAUDE_VERSION). Kept for the callers that name it; it installs into
# $GATEKIT_CLAUDE_DIR when that is set, else install-clients.sh's folder
# ($HOME/.cache/gatekit/clients/claude), where probe finds it.
set -euo pipefail
exec "$(dirname "$0")/install-clients.sh" claude
