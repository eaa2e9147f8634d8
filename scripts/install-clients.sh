#!/usr/bin/env bash
# Installs the agent CLIs that probe's presets drive (`probe bracket --client NAME`, `probe
# clients`, and probe's real-client tests), each pinned to the version its limit was measured on
# and overridable by its variable (CODEX_VERSION=latest, ...). Each goes into its own npm folder
# under $GATEKIT_CLIENTS_CACHE (default: $HOME/.cache/gatekit/clients), so
# $GATEKIT_CLIENTS_CACHE/NAME/node_modules/.bin/BIN is where probe looks when --bin is not given.
#
#   scripts/install-clients.sh                 # every client
#   scripts/install-clients.sh codex gemini    # some of them
#
# The packages ship native binaries (codex, opencode, cline, claude, copilot) or plain JavaScript
# (gemini, qwen, continue); on Node 20 npm warns about some engines and the installs still work.
# opencode installs @opencode-ai/plugin into its config folder in the background on every start;
# the script seeds that folder once ($GATEKIT_CLIENTS_CACHE/opencode/config), and probe copies it
# into each run's scratch config, so the background install finds it done and makes no request.
# A client whose install fails is reported and skipped; the exit code is 1 when any failed.
set -uo pipefail

cache="${GATEKIT_CLIENTS_CACHE:-$HOME/.cache/gatekit/clients}"

# name  package  version  binary
clients=(
    "claude   @anthropic-ai/claude-code  ${CLAUDE_VERSION:-2.1.332}  claude"
    "codex    @openai/codex              ${CODEX_VERSION:-0.171.0}   codex"
    "gemini   @google/gemini-cli         ${GEMINI_VERSION:-0.61.0}   gemini"
    "qwen     @qwen-code/qwen-code       ${QWEN_VERSION:-0.24.4}     qwen"
    "opencode opencode-ai                ${OPENCODE_VERSION:-1.18.33} opencode"
    "cline    cline                      ${CLINE_VERSION:-3.0.65}    cline"
    "copilot  @github/copilot            ${COPILOT_VERSION:-1.0.102} copilot"
    "continue @continuedev/cli           ${CONTINUE_VERSION:-1.5.47} cn"
)

wanted=("$@")
is_wanted() {
    [ ${#wanted[@]} -eq 0 ] && return 0
    local w
    for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
    return 1
}

npm_install() { # DIR PACKAGE@VERSION
    mkdir -p "$1"
    if [ ! -f "$1/package.json" ]; then
        printf '{ "name": "gatekit-client", "private": true }\n' > "$1/package.json"
    fi
    npm install --prefix "$1" --no-audit --no-fund --loglevel=error "$2"
}

failed=0
for line in "${clients[@]}"; do
    read -r name package version bin <<< "$line"
    is_wanted "$name" || continue
    dir="$cache/$name"
    # install-claude.sh's folder, for callers that set it.
    if [ "$name" = claude ] && [ -n "${GATEKIT_CLAUDE_DIR:-}" ]; then dir="$GATEKIT_CLAUDE_DIR"; fi
    echo "== $name: $package@$version into $dir"
    if ! npm_install "$dir" "$package@$version"; then
        echo "$name: npm install $package@$version failed" >&2
        failed=1
        continue
    fi
    if [ "$name" = opencode ]; then
        # The plugin at the client's own version, as the client would fetch it.
        installed=$(node -p "require('$dir/node_modules/$package/package.json').version" 2>/dev/null || echo "$version")
        if ! npm_install "$dir/config" "@opencode-ai/plugin@$installed"; then
            echo "opencode: seeding @opencode-ai/plugin@$installed failed" >&2
            failed=1
        fi
    fi
    path="$dir/node_modules/.bin/$bin"
    if [ -x "$path" ]; then
        # A scratch HOME, as probe runs it: copilot unpacks 235 MB into ~/.cache on first start.
        scratch=$(mktemp -d)
        echo "$name: $path ($(HOME="$scratch" "$path" --version 2>/dev/null | head -1))"
        rm -rf "$scratch"
    else
        echo "$name: no binary at $path" >&2
        failed=1
    fi
done
exit "$failed"
