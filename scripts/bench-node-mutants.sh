#!/usr/bin/env bash
# gatekit's per-mutant cost on a Node project with real npm dependencies, beside the suite's own
# run time, in one invocation.
#
#   scripts/bench-node-mutants.sh [RUNS]      # RUNS timings of the bare suite (default 5)
#
# In a scratch folder (printed; removed unless KEEP=1) it makes a small Node project that
# depends on real npm packages (semver and lodash, installed with `npm install` from the
# registry), with a `node --test` suite and 8 mutants that the suite kills. Then it times:
#   - the suite alone in the project (`node --test`, RUNS times, median): what one mutant must
#     cost at least;
#   - `mutants run --jobs 1` with `[worktree] link = ["node_modules"]`, once with all 8 mutants
#     and once with `--only` the first: the difference over 7 is the wall time a mutant costs
#     once the working copy is set up (swap, suite, restore, proof of restore, reports), with
#     the checkout, the link and the baseline, which both runs pay, taken out.
# It prints both, their ratio (the issue's goal: within 1.15x) and the machine's load average.
set -euo pipefail

RUNS=${1:-5}
. "$(dirname "$0")/bench-lib.sh"
gm=$(release mutants)

scratch bench-node-mutants
export GATEKIT_CACHE_DIR="$work/cache"
p="$work/project"
mkdir -p "$p/src" "$p/test"
cat > "$p/package.json" <<'JSON'
{ "name": "bench-node-mutants", "version": "1.0.0", "private": true, "type": "commonjs",
  "dependencies": { "semver": "7.6.3", "lodash": "4.17.21" } }
JSON
cat > "$p/src/release.js" <<'JS'
const semver = require("semver");
const _ = require("lodash");

function nextVersion(current, kind) {
  if (!semver.valid(current)) return null;
  return semver.inc(current, kind);
}

function newest(versions) {
  const valid = versions.filter((v) => semver.valid(v));
  if (valid.length === 0) return null;
  return valid.sort(semver.rcompare)[0];
}

function byMajor(versions) {
  return _.groupBy(versions.filter((v) => semver.valid(v)), (v) => semver.major(v));
}

function isBreaking(from, to) {
  return semver.major(to) > semver.major(from);
}

module.exports = { nextVersion, newest, byMajor, isBreaking };
JS
cat > "$p/test/release.test.js" <<'JS'
const test = require("node:test");
const assert = require("node:assert");
const { nextVersion, newest, byMajor, isBreaking } = require("../src/release");

test("next versions", () => {
  assert.strictEqual(nextVersion("1.2.3", "patch"), "1.2.4");
  assert.strictEqual(nextVersion("1.2.3", "minor"), "1.3.0");
  assert.strictEqual(nextVersion("nope", "patch"), null);
});
test("newest", () => {
  assert.strictEqual(newest(["1.0.0", "2.1.0", "x", "2.0.5"]), "2.1.0");
  assert.strictEqual(newest(["x"]), null);
});
test("by major", () => {
  assert.deepStrictEqual(byMajor(["1.0.0", "1.2.0", "2.0.0", "bad"]), { 1: ["1.0.0", "1.2.0"], 2: ["2.0.0"] });
});
test("breaking", () => {
  assert.strictEqual(isBreaking("1.9.9", "2.0.0"), true);
  assert.strictEqual(isBreaking("1.0.0", "1.9.0"), false);
});
JS
printf 'node_modules/\nmutants-out/\n' > "$p/.gitignore"
cat > "$p/mutants.toml" <<'TOML'
[worktree]
link = ["node_modules"]

[suites.node]
run = "node --test test/"
timeout = "60s"

[[mutant]]
name = "invalid accepted"
file = "src/release.js"
anchor = "if (!semver.valid(current)) return null;"
replace = "if (!semver.valid(current)) return current;"
suite = "node"

[[mutant]]
name = "kind ignored"
file = "src/release.js"
anchor = "return semver.inc(current, kind);"
replace = "return semver.inc(current, \"patch\");"
suite = "node"

[[mutant]]
name = "oldest first"
file = "src/release.js"
anchor = "valid.sort(semver.rcompare)[0]"
replace = "valid.sort(semver.compare)[0]"
suite = "node"

[[mutant]]
name = "empty newest"
file = "src/release.js"
anchor = "if (valid.length === 0) return null;"
replace = "if (valid.length === 0) return undefined;"
suite = "node"

[[mutant]]
name = "invalid grouped"
file = "src/release.js"
anchor = "_.groupBy(versions.filter((v) => semver.valid(v))"
replace = "_.groupBy(versions"
suite = "node"

[[mutant]]
name = "grouped by minor"
file = "src/release.js"
anchor = "(v) => semver.major(v));"
replace = "(v) => semver.minor(v));"
suite = "node"

[[mutant]]
name = "breaking at equal"
file = "src/release.js"
anchor = "semver.major(to) > semver.major(from)"
replace = "semver.major(to) >= semver.major(from)"
suite = "node"

[[mutant]]
name = "breaking never"
file = "src/release.js"
anchor = "return semver.major(to) > semver.major(from);"
replace = "return false;"
suite = "node"
TOML
(
  cd "$p"
  npm install --silent --no-audit --no-fund > /dev/null
  git init -q -b main
  git -c user.name=bench -c user.email=bench@example.invalid add -A
  git -c user.name=bench -c user.email=bench@example.invalid commit -q -m "bench project"
)

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "load before the bare suite: $(load)" >&2
suite=$(cd "$p" && python3 - "$RUNS" <<'PY'
import subprocess, sys, time, statistics
times = []
for _ in range(int(sys.argv[1])):
    t = time.monotonic()
    subprocess.run(["node", "--test", "test/"], check=True, capture_output=True)
    times.append(time.monotonic() - t)
print(f"{statistics.median(times):.3f}")
PY
)
wall() { # ARGS...: the wall seconds of one `mutants run`
  local out="$work/out-$RANDOM"
  python3 - "$gm" "$p" "$out" "$@" <<'PY'
import subprocess, sys, time
gm, project, out, *extra = sys.argv[1:]
t = time.monotonic()
r = subprocess.run([gm, "run", "mutants.toml", "--jobs", "1", "--out", out, *extra],
                   cwd=project, capture_output=True, text=True)
took = time.monotonic() - t
if r.returncode != 0:
    sys.exit(f"mutants run did not hold:\n{r.stdout}{r.stderr}")
print(f"{took:.3f}")
PY
}
echo "load before the mutants runs: $(load)" >&2
one=$(wall --only "invalid accepted")
all=$(wall)
one2=$(wall --only "invalid accepted")
all2=$(wall)
python3 - "$suite" "$one" "$all" "$one2" "$all2" <<'PY'
import sys, statistics
suite, one, all_, one2, all2 = map(float, sys.argv[1:])
per = statistics.median([(all_ - one) / 7, (all2 - one2) / 7])
print(f"suite alone (median):         {suite:.3f} s")
print(f"mutants run, 1 mutant:        {one:.2f} s, {one2:.2f} s")
print(f"mutants run, 8 mutants:       {all_:.2f} s, {all2:.2f} s")
print(f"wall per mutant ((8 - 1) / 7): {per:.3f} s   ratio {per / suite:.2f}  (goal <= 1.15)")
PY
echo "load after: $(load)" >&2
