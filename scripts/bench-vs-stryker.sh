#!/usr/bin/env bash
# gatekit's `mutants` beside Stryker on a real npm package with a vitest suite, on Stryker's own
# mutants.
#
#   scripts/bench-vs-stryker.sh [N]       # at least N of Stryker's mutants (default 50), concurrency 2
#
# What it does (scratch folder printed, removed unless KEEP=1; what it installs is kept in
# ~/.cache/gatekit/bench-vs-stryker, nothing lands in the checkout; it needs only the npm
# registry):
#   1. installs there, from npm, Stryker $STRYKER_VERSION (default 9.6.1) with its vitest runner,
#      vitest $VITEST_VERSION (default 3.2.4, which runs on Node 20) and what the package's tests
#      import (jsdom, @testing-library/react with react and react-dom: its tests use `waitFor`);
#      takes the published tarball of @tanstack/query-core $PACKAGE_VERSION (default 5.59.13),
#      which ships its vitest tests in src/__tests__, and gives it the vitest config of its
#      repository (jsdom, mocks restored after each test), since the tarball has none;
#   2. lists Stryker's own mutants of $FILE (default src/utils.ts) with a command runner that
#      runs nothing, picks the places of single-line ones spread evenly over the file, as few
#      as hold N mutants, and takes every mutant Stryker makes inside those exact locations (the
#      set its `--mutate` ranges give it), each translated into an exact anchor
#      (bench_vs_stryker.py);
#   3. runs both tools on those mutants with concurrency $JOBS (default 2): gatekit as
#      `mutants run SPEC --jobs 2` (suite `$SUITE`, default `npx vitest run`, with
#      `[worktree] link = ["node_modules"]`) in a git repository of the package, Stryker as
#      `stryker run` with the vitest runner, perTest coverage (its default), the ranges as
#      `mutate` and a JSON report. The ranges are split into $PARTS parts (default 2), gatekit
#      then Stryker on odd parts and Stryker then gatekit on even ones;
#   4. prints the verdicts mutant by mutant (Killed and Timeout = killed or killed (hang);
#      Survived and NoCoverage = SURVIVED; CompileError and RuntimeError = error or unviable),
#      each run's wall time with the load average before and after, the wall time per mutant of
#      each (whole command over its mutants) and the ratio; then the floor: the suite's own run,
#      once, and vitest's start-up (no test file matched, --passWithNoTests); gatekit's own
#      floor (the suite's `floor` key, $FLOOR) with its time per mutant as a multiple of it,
#      and, with WATCH set, how many mutants its warm runner (`watch`) killed, confirmed cold or
#      left to a cold run.
# Exit 1 when a verdict disagrees. A ratio counts only because both sides ran here, in this
# invocation.
set -euo pipefail

N=${1:-50}
JOBS=${JOBS:-2}
PARTS=${PARTS:-2}
STRYKER_VERSION=${STRYKER_VERSION:-9.6.1}
VITEST_VERSION=${VITEST_VERSION:-3.2.4}
PACKAGE=${PACKAGE:-@tanstack/query-core}
PACKAGE_VERSION=${PACKAGE_VERSION:-5.59.13}
FILE=${FILE:-src/utils.ts}
# `--bail=1`: vitest stops at its first failed test, as Stryker's vitest runner does.
# SELECT="npx vitest run --bail=1 {files}" adds the covering test files first, from gatekit's
# vitest coverage map (each test file run alone with @vitest/coverage-v8, once; part 2 reads the
# map kept in the cache). On this package it is slower (4.57x Stryker's time against 2.34x
# without, docs/benchmarks.md): every test file imports src/utils.ts, so a mutant's selection is
# 12 to 15 of the 15 files, a survivor runs them and then the whole suite, and each selection is
# first checked on the unmutated code. So it is off by default.
SUITE=${SUITE:-npx vitest run --bail=1}
SELECT=${SELECT-}
# The suite's floor (vitest started, every file collected, no test selected); FLOOR= (empty)
# leaves the key out of gatekit's spec. WATCH="npx vitest --watch" adds the warm runner: on this
# suite it is slower than cold runs that stop at their first failure (31.6 s a mutant against
# 8.7 s, docs/benchmarks.md), so it is off by default.
FLOOR=${FLOOR-"npx vitest run --passWithNoTests -t '^\$'"}
WATCH=${WATCH-}
. "$(dirname "$0")/bench-lib.sh"
cache="$HOME/.cache/gatekit/bench-vs-stryker"
helper="$here/scripts/bench_vs_stryker.py"

echo "start: $(stamp)"
selftest bench_vs_mutmut_selftest.py

# --- what is installed, kept in the cache ---------------------------------------------------
deps="$cache/deps-stryker-$STRYKER_VERSION-vitest-$VITEST_VERSION-coverage"
if [ ! -x "$deps/node_modules/.bin/stryker" ] || [ ! -x "$deps/node_modules/.bin/vitest" ]; then
  echo "installing Stryker $STRYKER_VERSION and vitest $VITEST_VERSION into $deps (from npm)" >&2
  rm -rf "$deps" && mkdir -p "$deps"
  echo '{"private": true}' > "$deps/package.json"
  (cd "$deps" && npm install --silent --no-audit --no-fund \
    "@stryker-mutator/core@$STRYKER_VERSION" "@stryker-mutator/vitest-runner@$STRYKER_VERSION" \
    "vitest@$VITEST_VERSION" "@vitest/coverage-v8@$VITEST_VERSION" jsdom@26.1.0 @testing-library/react@16.3.0 \
    @testing-library/dom@10.4.0 react@18.3.1 react-dom@18.3.1)
fi
tarball="$cache/dl/${PACKAGE//\//_}-$PACKAGE_VERSION"
if [ ! -d "$tarball/src" ]; then
  echo "downloading $PACKAGE $PACKAGE_VERSION's tarball (from npm)" >&2
  rm -rf "$tarball" && mkdir -p "$tarball/src"
  (cd "$tarball" && npm pack --silent "$PACKAGE@$PACKAGE_VERSION" > /dev/null) \
    && tar xzf "$tarball"/*.tgz -C "$tarball/src" --strip-components 1 \
    || { rm -rf "$tarball"; echo "the download from npm failed" >&2; exit 1; }
fi
ls "$tarball"/src/src/__tests__/*.test.* > /dev/null 2>&1 \
  || { echo "$PACKAGE $PACKAGE_VERSION's tarball ships no tests" >&2; exit 1; }
gm=$(release mutants)

scratch bench-vs-stryker
export GATEKIT_CACHE_DIR="$work/cache"
g=(git -c user.name=bench -c user.email=bench@example.invalid)
st="$work/pkg"
cp -a "$tarball/src" "$st"
rm -rf "$st/build"   # the published bundle: the tests import the sources
cat > "$st/vitest.config.ts" <<'TS'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: { dir: './src', watch: false, environment: 'jsdom', restoreMocks: true },
})
TS
printf 'node_modules/\nreports/\n.stryker-tmp/\n' > "$st/.gitignore"
(cd "$st" && "${g[@]}" init -q -b main && "${g[@]}" add -A \
  && "${g[@]}" commit -q -m "$PACKAGE $PACKAGE_VERSION")
cp -a "$deps/node_modules" "$st/node_modules"
stryker="$st/node_modules/.bin/stryker"

echo "listing Stryker's mutants of $FILE ($(stamp))" >&2
cat > "$work/list.json" <<JSON
{"testRunner": "command", "commandRunner": {"command": "true"}, "coverageAnalysis": "off",
 "mutate": ["$FILE"], "reporters": ["json"], "jsonReporter": {"fileName": "$work/list-report.json"},
 "tempDirName": ".stryker-tmp", "concurrency": $JOBS, "plugins": [], "checkers": []}
JSON
(cd "$st" && "$stryker" run "$work/list.json" > "$work/list.log" 2>&1) \
  || { tail -20 "$work/list.log" >&2; exit 1; }
python3 "$helper" pick "$work/list-report.json" "$FILE" "$N" "$work/picked.json" \
  "$work/mutants.toml" "$SUITE" 2> "$work/pick.log" || { cat "$work/pick.log" >&2; exit 1; }
cat "$work/pick.log" >&2
suite_keys "$work/mutants.toml" vitest "floor=$FLOOR" "watch=$WATCH" "select=$SELECT"
"$gm" check "$work/mutants.toml" --dir "$st" > "$work/check.log" || { cat "$work/check.log" >&2; exit 1; }

# Part P: the ranges of part P (Stryker's mutate) and the mutants inside them (gatekit's --only).
python3 "$helper" parts "$work" "$PARTS"

run_st() { # PART
  python3 - "$work" "$1" "$JOBS" <<'PY'
import json, sys
work, part, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
json.dump({"testRunner": "vitest", "vitest": {"configFile": "vitest.config.ts"},
           "coverageAnalysis": "perTest", "mutate": json.load(open(f"{work}/ranges-{part}.json")),
           "reporters": ["json"], "jsonReporter": {"fileName": f"{work}/st-{part}.json"},
           "tempDirName": ".stryker-tmp", "concurrency": jobs, "incremental": False,
           "plugins": ["@stryker-mutator/vitest-runner"], "checkers": []},
          open(f"{work}/stryker-{part}.json", "w"))
PY
  (cd "$st" && "$stryker" run "$work/stryker-$1.json" > "$work/st-$1.log" 2>&1) || true
}
gk_dir="$st"
interleave stryker run_st

floor_times "$st" "$SUITE" "npx vitest run --passWithNoTests no_file_is_named_this"

echo
echo "Stryker $STRYKER_VERSION (vitest runner), vitest $VITEST_VERSION, $PACKAGE $PACKAGE_VERSION ($FILE), suite \`$SUITE\`, concurrency $JOBS, node $(node --version)"
status=0
python3 "$helper" compare "$work" || status=$?
floors "$work"/gk-*
echo "the floor: the suite's own run ${suite_secs}s ($(grep -a 'Tests ' "$work/floor.log" | tail -1 | tr -s ' ')); vitest's start-up, no test file, ${startup_secs}s"
echo "end: $(stamp)"
exit $status
