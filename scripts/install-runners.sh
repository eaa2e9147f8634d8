#!/usr/bin/env bash
# Installs the real test runners whose closing lines report::counts reads, so the counts tests
# run each one live on a small project (and can recapture the checked-in fixtures):
#   - pytest (PyPI), into the current python3's environment; go (Debian's golang-go);
#   - jest (with jest-junit, its JUnit reporter), vitest (with @vitest/coverage-v8), mocha, tape, and Deno and Bun from their npm packages, into
#     $GATEKIT_RUNNERS_DIR (default: $HOME/.cache/gatekit/runners), where the tests look for
#     node_modules/.bin/NAME.
# node's own test runner, unittest, cargo test and cargo-nextest come with the machine. A runner
# that is missing makes its live test skip with a notice; its checked-in fixture is still read.
# Safe to run twice. Versions are pinned (override with e.g. JEST_VERSION=...).
set -uo pipefail

dir="${GATEKIT_RUNNERS_DIR:-$HOME/.cache/gatekit/runners}"
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{ "name": "gatekit-runners", "private": true }\n' > "$dir/package.json"

# go test, from Debian's packages (the only registry that has Go here).
if ! command -v go >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -q golang-go >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q golang-go >/dev/null 2>&1; }) || echo "go: not installed"
fi
python3 -m pip install --quiet --disable-pip-version-check "pytest==${PYTEST_VERSION:-9.2.0}" || echo "pytest: not installed"
# vitest's coverage provider goes with vitest at the same version: mutants' vitest coverage maps
# run each test file with it.
for pkg in "jest@${JEST_VERSION:-29.7.0}" "vitest@${VITEST_VERSION:-3.2.4}" "@vitest/coverage-v8@${VITEST_VERSION:-3.2.4}" "mocha@${MOCHA_VERSION:-11.1.0}" "tape@${TAPE_VERSION:-5.10.2}" "jest-junit@${JEST_JUNIT_VERSION:-16.0.0}"; do
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" || echo "$pkg: not installed"
done
# Deno and Bun ship their binaries as npm packages too; where the platform package cannot be
# fetched the live tests for them skip.
for pkg in "deno@${DENO_VERSION:-2.2.12}" "bun@${BUN_VERSION:-1.2.15}"; do
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" || echo "$pkg: not installed"
done
for bin in jest vitest mocha tape deno bun; do
    if "$dir/node_modules/.bin/$bin" --version >/dev/null 2>&1; then
        echo "$bin $("$dir/node_modules/.bin/$bin" --version 2>&1 | head -1)"
    else
        echo "$bin: not runnable"
    fi
done
python3 -m pytest --version 2>&1 | head -1
go version 2>&1 | head -1
