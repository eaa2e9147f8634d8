#!/usr/bin/env bash
# gatekit's `mutants` beside mutmut 3 on a real pure-Python package, on mutmut's own mutants.
#
#   scripts/bench-vs-mutmut.sh [N]        # N of mutmut's mutants (default 60), concurrency 2 both
#
# What it does (scratch folder printed, removed unless KEEP=1; what it installs is kept in
# ~/.cache/gatekit/bench-vs-mutmut, nothing lands in the checkout; it needs only PyPI):
#   1. makes a virtualenv there with mutmut $MUTMUT_VERSION (default 3.8.1) and pytest
#      $PYTEST_VERSION (default 9.2.0) from PyPI, and downloads the sdist of more-itertools
#      $PACKAGE_VERSION (default 10.4.0), which ships its tests (tests/, unittest-style, run by
#      pytest); the venv is on PATH for both tools, as an activated venv is for a user;
#   2. asks mutmut to generate its mutants of $FILE (default more_itertools/recipes.py), picks
#      N spread over mutmut's order (every k-th) and translates each into an exact anchor
#      (bench_vs_mutmut.py: the changed span widened to whole lines, then grown a line on each
#      side until it occurs once), named as mutmut names it; the suite is `$SUITE` (default
#      `python -m pytest -q tests`, the whole suite, as the project's users run it);
#   3. runs both tools on those mutants with concurrency $JOBS (default 2): gatekit as
#      `mutants run SPEC --jobs 2` in a git repository of the package, mutmut as
#      `mutmut run --max-children 2 NAME...` in a copy with a [mutmut] section in setup.cfg
#      (source_paths = more_itertools, only_mutate = $FILE), its mutants/ folder removed first
#      so each run is a first run. The mutants are split into $PARTS parts (default 2), run
#      gatekit then mutmut on odd parts and mutmut then gatekit on even ones, so each tool
#      judges every mutant once and a load that rises or falls favours neither;
#   4. prints the verdicts mutant by mutant (mutmut's killed = killed, survived = SURVIVED,
#      suspicious or timeout = killed (hang), no tests = not covered, which gatekit calls
#      SURVIVED since it runs the whole suite), each run's wall time with the load average
#      before and after, the wall time per mutant of each (whole command, setup included, over
#      its mutants) and the ratio; then the floor: the suite's own run, once, and pytest's
#      start-up (collection with no test selected).
# INCREMENTAL=1 then measures `--incremental` (see there).
# PYTHONDONTWRITEBYTECODE is unset: users' machines write bytecode. Exit 1 when a verdict
# disagrees. A ratio counts only because both sides ran here, in this invocation.
set -euo pipefail

N=${1:-60}
JOBS=${JOBS:-2}
PARTS=${PARTS:-2}
MUTMUT_VERSION=${MUTMUT_VERSION:-3.8.1}
PYTEST_VERSION=${PYTEST_VERSION:-9.2.0}
PACKAGE=${PACKAGE:-more-itertools}
PACKAGE_VERSION=${PACKAGE_VERSION:-10.4.0}
FILE=${FILE:-more_itertools/recipes.py}
# `-x`: pytest stops at its first failure, as mutmut runs it; gatekit's `fail_fast` (on by
# default) needs `-v` to name a failed test as it ends, and `-x` does the same job in pytest.
SUITE=${SUITE:-python -m pytest -x -q tests}
# The covering tests first (coverage.py's contexts per test id; mutmut's venv has coverage.py):
# SELECT= (empty) leaves the key out of gatekit's spec, so every mutant runs the whole suite.
SELECT=${SELECT-python -m pytest -x -q {tests}}
# The suite's floor: pytest started and collecting, no test selected (exit 5, "no tests ran",
# is that floor passing). FLOOR= (empty) leaves the key out of gatekit's spec.
FLOOR=${FLOOR-python -m pytest -q tests -k gatekit_selects_no_test; test \$? -eq 5}
. "$(dirname "$0")/bench-lib.sh"
cache="$HOME/.cache/gatekit/bench-vs-mutmut"
helper="$here/scripts/bench_vs_mutmut.py"
unset PYTHONDONTWRITEBYTECODE

echo "start: $(stamp)"
selftest bench_vs_mutmut_selftest.py

# --- what is installed, kept in the cache ---------------------------------------------------
venv="$cache/venv-mutmut-$MUTMUT_VERSION-pytest-$PYTEST_VERSION"
if [ ! -x "$venv/bin/mutmut" ]; then
  echo "installing mutmut $MUTMUT_VERSION and pytest $PYTEST_VERSION into $venv (from PyPI)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "mutmut==$MUTMUT_VERSION" "pytest==$PYTEST_VERSION"
fi
sdist="$cache/dl/$PACKAGE-$PACKAGE_VERSION"
if [ ! -d "$sdist/src" ]; then
  echo "downloading the sdist of $PACKAGE $PACKAGE_VERSION (from PyPI)" >&2
  rm -rf "$sdist" && mkdir -p "$sdist/src"
  python3 -m pip download --quiet --no-deps --no-binary :all: "$PACKAGE==$PACKAGE_VERSION" \
    -d "$sdist" && tar xzf "$sdist"/*.tar.gz -C "$sdist/src" --strip-components 1 \
    || { rm -rf "$sdist"; echo "the download from PyPI failed" >&2; exit 1; }
fi
[ -d "$sdist/src/tests" ] || { echo "$PACKAGE $PACKAGE_VERSION's sdist has no tests/" >&2; exit 1; }
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
gm=$(release mutants)

scratch bench-vs-mutmut
# gatekit's cache, if it keeps one, lives in the scratch folder too.
export GATEKIT_CACHE_DIR="$work/cache"
g=(git -c user.name=bench -c user.email=bench@example.invalid)
# gatekit's tree: a git repository of the package as published.
cp -a "$sdist/src" "$work/gk"
(
  cd "$work/gk"
  printf '__pycache__/\n.pytest_cache/\nmutants/\n' > .gitignore
  "${g[@]}" init -q -b main && "${g[@]}" add -A && "${g[@]}" commit -q -m "$PACKAGE $PACKAGE_VERSION"
)
# mutmut's: the same files, with the [mutmut] section a user would add.
mutmut_tree() { # DIR
  cp -a "$sdist/src" "$1"
  printf '\n[mutmut]\nsource_paths = %s\nonly_mutate = %s\n' "${FILE%%/*}" "$FILE" >> "$1/setup.cfg"
}
mutmut_tree "$work/gen"
mutmut_tree "$work/mm"

echo "generating mutmut's mutants of $FILE and translating $N of them ($(stamp))" >&2
"$venv/bin/python" "$helper" translate "$work/gen" "$FILE" "$N" "$work/mutants.toml" \
  "$work/names.txt" "$SUITE" > "$work/translate.log" 2>&1 || { cat "$work/translate.log" >&2; exit 1; }
grep -E "^(left out|[0-9]+ of mutmut)" "$work/translate.log" >&2 || true
suite_keys "$work/mutants.toml" pytest "floor=$FLOOR" "select=$SELECT"
"$gm" check "$work/mutants.toml" --dir "$work/gk" > "$work/check.log" \
  || { cat "$work/check.log" >&2; exit 1; }
rm -rf "$work/gen"
total=$(wc -l < "$work/names.txt")

# The parts: names.txt split into PARTS runs of consecutive mutants.
per=$(( (total + PARTS - 1) / PARTS ))
for p in $(seq 1 "$PARTS"); do
  sed -n "$(( (p - 1) * per + 1 )),$(( p * per ))p" "$work/names.txt" > "$work/part-$p.txt"
done
run_mm() { # PART
  rm -rf "$work/mm/mutants"
  (cd "$work/mm" && mutmut run --max-children "$JOBS" $(cat "$work/part-$1.txt") > "$work/mm-$1.log" 2>&1) || true
  (cd "$work/mm" && mutmut results --all true > "$work/mm-$1.results" 2>&1) || true
}
gk_dir="$work/gk"
interleave mutmut run_mm

floor_times "$work/gk" "$SUITE" "python -m pytest -q tests -k no_test_is_named_this"
rm -rf "$work/gk/.pytest_cache"

# INCREMENTAL=1: a full run of every mutant, then after each of three one-line changes (a
# comment in a test file, in another module, in the mutated file), `--incremental` against it:
# how many mutants each change judges again, and its time over the full run's.
incremental=()
if [ "${INCREMENTAL:-0}" = 1 ]; then
  # The spec holds just the N mutants (and --only cannot go with --incremental).
  echo "incremental: a full run of $total mutants ($(stamp))" >&2
  t0=$(seconds)
  "$gm" run "$work/mutants.toml" --dir "$work/gk" --jobs "$JOBS" --out "$work/gk-full" \
    > "$work/gk-full.log" 2>&1 || true
  full=$(since "$t0")
  incremental+=("the full run: $total mutants in ${full}s")
  for changed in tests/test_more.py more_itertools/more.py "$FILE"; do
    (cd "$work/gk" && echo "# a one-line change" >> "$changed" \
      && "${g[@]}" commit -qam "one line in $changed")
    echo "incremental: after one line in $changed ($(stamp))" >&2
    t0=$(seconds)
    "$gm" run "$work/mutants.toml" --dir "$work/gk" --jobs "$JOBS" --out "$work/gk-full" \
      --incremental > "$work/gk-incr.log" 2>&1 || true
    took=$(since "$t0")
    said=$(python3 -c "import json; m = json.load(open('$work/gk-full/mutants.json'))['mutants']; \
n = sum(1 for r in m if r.get('reused')); print(f'{len(m) - n} judged now, {n} reused')")
    incremental+=("one line in $changed: $said, ${took}s: $(python3 -c "print(f'{$took / $full:.2f}')")x the full run")
  done
fi

echo
echo "mutmut $MUTMUT_VERSION, pytest $PYTEST_VERSION, $PACKAGE $PACKAGE_VERSION ($FILE), suite \`$SUITE\`, concurrency $JOBS"
status=0
python3 "$helper" compare "$work" || status=$?
echo "mutmut's own mutation phase (its 'mutations/second' line, after its setup):" \
  "$(grep -ho '[0-9.]* mutations/second' "$work"/mm-*.log | tr '\n' ' ')"
floors "$work"/gk-*
echo "the floor: the suite's own run ${suite_secs}s ($(tail -1 "$work/floor.log")); pytest's start-up, no test selected, ${startup_secs}s"
for line in "${incremental[@]}"; do echo "incremental: $line"; done
echo "end: $(stamp)"
exit $status
