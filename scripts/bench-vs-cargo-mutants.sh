#!/usr/bin/env bash
# gatekit's `mutants` beside cargo-mutants on a real crate nobody here wrote, in one run.
#
#   scripts/bench-vs-cargo-mutants.sh [N]        # N mutants (default 30), --jobs 2 both
#
# What it does, all inside one scratch folder (printed; removed unless KEEP=1):
#   1. takes cargo-mutants from $CARGO_MUTANTS, or from ~/.cache/gatekit/cargo-mutants, or
#      installs it there from crates.io (version $CARGO_MUTANTS_VERSION, default 27.1.0);
#   2. takes the registry package of $CRATE $CRATE_VERSION (default semver 1.0.28) from
#      static.crates.io and commits it to a new git repository;
#   3. lists cargo-mutants' own mutants of it (`--list --json --diff`), picks N spread over the
#      list, and translates each into an exact anchor for gatekit (the lines its diff removes,
#      widened by neighbouring lines until they occur once in the file);
#   4. runs both tools on those N mutants with --jobs $JOBS over $ROUNDS rounds (default 3).
#      Each round is a first run (gatekit's cache and cargo-mutants' output wiped, so it is a
#      true first run) and then a repeat run on the same tree, as a reviewer re-runs a spec.
#      The order alternates (odd rounds cargo-mutants first, even rounds gatekit first), so a
#      load that rises or falls during the benchmark does not favour either tool;
#   5. checks that the two tools' verdicts agree on every mutant in every run (cargo-mutants'
#      "unviable", a mutant that does not build, is gatekit's "killed": its suite fails), and
#      prints each round's wall times with the load average at the start of each run, and the
#      median over the rounds of the per-round ratio gatekit/cargo-mutants, first and repeat.
# GATEKIT_JOBSERVER=0 runs gatekit with --no-jobserver (its builds and suites share no
# jobserver), to measure what the shared pool changes.
# A ratio counts only because both sides ran here, in this invocation, on this machine.
set -euo pipefail

N=${1:-30}
JOBS=${JOBS:-2}
ROUNDS=${ROUNDS:-3}
CRATE=${CRATE:-semver}
CRATE_VERSION=${CRATE_VERSION:-1.0.28}
CARGO_MUTANTS_VERSION=${CARGO_MUTANTS_VERSION:-27.1.0}
. "$(dirname "$0")/bench-lib.sh"

cm=${CARGO_MUTANTS:-$HOME/.cache/gatekit/cargo-mutants/bin/cargo-mutants}
if [ ! -x "$cm" ]; then
  echo "installing cargo-mutants $CARGO_MUTANTS_VERSION into ~/.cache/gatekit/cargo-mutants" >&2
  cargo install --locked --quiet cargo-mutants --version "$CARGO_MUTANTS_VERSION" \
    --root "$HOME/.cache/gatekit/cargo-mutants"
fi
gm=$(release mutants)

scratch bench-vs-cargo-mutants
# gatekit's [worktree] cache lives in the scratch folder too: the repeat run uses what the first
# run saved, and nothing is left in ~/.cache for a repository that is deleted at the end.
export GATEKIT_CACHE_DIR="$work/cache"

curl -sSfL "https://static.crates.io/crates/$CRATE/$CRATE-$CRATE_VERSION.crate" \
  | tar xz -C "$work"
src="$work/$CRATE-$CRATE_VERSION"
(
  cd "$src"
  printf 'target/\nmutants.out*/\n' > .gitignore
  git init -q -b main
  git -c user.name=bench -c user.email=bench@example.invalid add -A
  git -c user.name=bench -c user.email=bench@example.invalid commit -q -m "$CRATE $CRATE_VERSION"
  cargo fetch --quiet
)

"$cm" mutants --dir "$src" --list --json --diff > "$work/list.json"

# Picks N mutants spread over the list and writes gatekit's spec plus cargo-mutants' filter.
python3 - "$work/list.json" "$src" "$N" "$work/mutants.toml" "$work/names.txt" <<'PY'
import json, sys
listing, src, n, spec_path, names_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
mutants = json.load(open(listing))

def removed_added(diff):
    """The lines a unified diff of one hunk removes and adds, and the line it starts at."""
    old, new, start = [], [], None
    for line in diff.splitlines():
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:])
        elif start is None or line.startswith(("---", "+++")):
            continue
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
    return old, new

def anchor(text, old, new):
    """The smallest run of whole lines around the removed block that occurs once in the file."""
    lines = text.split("\n")
    block = "\n".join(old)
    at = [i for i in range(len(lines)) if "\n".join(lines[i:i + len(old)]) == block]
    if len(at) != 1 and text.count(block) == 1:
        return block, "\n".join(new)
    for i in at:
        for k in range(0, 12):
            lo, hi = max(0, i - k), min(len(lines), i + len(old) + k)
            cand = "\n".join(lines[lo:hi])
            if text.count(cand) == 1:
                return cand, "\n".join(lines[lo:i] + new + lines[i + len(old):hi])
    return None

picked, step = [], max(1, len(mutants) / n)
candidates = [m for m in mutants if m.get("diff")]
i = 0.0
while len(picked) < n and int(i) < len(candidates):
    m = candidates[int(i)]
    i += step
    old, new = removed_added(m["diff"])
    if not old:
        continue
    text = open(f"{src}/{m['file']}").read()
    found = anchor(text, old, new)
    if found is None:
        continue
    picked.append((m, found))

def toml_str(s):
    return "'''\n" + s + "'''" if "'''" not in s and not s.endswith("'") else json.dumps(s)

with open(spec_path, "w") as f:
    f.write('[suites.cargo]\nrun = "cargo test"\ntimeout = "300s"\n')
    for m, (a, r) in picked:
        f.write("\n[[mutant]]\n")
        f.write(f"name = {json.dumps(m['name'])}\n")
        f.write(f"file = {json.dumps(m['file'])}\n")
        f.write(f"anchor = {json.dumps(a)}\n")
        f.write(f"replace = {json.dumps(r)}\n")
        f.write(f"undoes = {json.dumps('cargo-mutants: ' + m['name'])}\n")
        f.write('suite = "cargo"\n')
with open(names_path, "w") as f:
    for m, _ in picked:
        f.write(m["name"] + "\n")
print(f"{len(picked)} of {len(mutants)} cargo-mutants mutants translated", file=sys.stderr)
PY

"$gm" check "$work/mutants.toml" --dir "$src" > /dev/null
regex=$(python3 -c 'import re,sys; print("^(" + "|".join(re.escape(l.rstrip("\n")) for l in open(sys.argv[1])) + ")$")' "$work/names.txt")

seconds() { python3 -c 'import time; print(f"{time.monotonic():.3f}")'; }
load() { cut -d' ' -f1 /proc/loadavg; }
gm_flags=()
if [ "${GATEKIT_JOBSERVER:-1}" = 0 ]; then gm_flags+=(--no-jobserver); fi

# Each prints "SECONDS LOAD": the wall time and the 1-minute load average at its start.
run_cm() { # $1: label (first-R or repeat-R)
  local t0 t1 l
  l=$(load)
  t0=$(seconds)
  "$cm" mutants --dir "$src" --jobs "$JOBS" --re "$regex" --output "$work/cm-$1" \
    --no-shuffle --timeout 300 > "$work/cm-$1.log" 2>&1 || true
  t1=$(seconds)
  python3 -c "print(f'{$t1 - $t0:.1f} $l')"
}
run_gm() { # $1: label
  local t0 t1 l
  l=$(load)
  t0=$(seconds)
  "$gm" run "$work/mutants.toml" --dir "$src" --jobs "$JOBS" --out "$work/gm-$1" \
    "${gm_flags[@]}" > "$work/gm-$1.log" 2>&1 || true
  t1=$(seconds)
  python3 -c "print(f'{$t1 - $t0:.1f} $l')"
}
# One run of each tool, in the round's order; prints "CM_SECS CM_LOAD GM_SECS GM_LOAD".
pair() { # $1: label, $2: round number
  local c g
  if [ $(($2 % 2)) = 1 ]; then c=$(run_cm "$1"); g=$(run_gm "$1")
  else g=$(run_gm "$1"); c=$(run_cm "$1"); fi
  echo "$c $g"
}

results="$work/rounds.txt"
: > "$results"
for r in $(seq 1 "$ROUNDS"); do
  # A true first run: no build outputs kept by gatekit, no earlier output of either tool.
  rm -rf "$GATEKIT_CACHE_DIR" "$work"/cm-*-"$r" "$work"/gm-*-"$r"
  echo "round $r of $ROUNDS: first run ($( [ $((r % 2)) = 1 ] && echo cargo-mutants first || echo gatekit first ))" >&2
  first=$(pair "first-$r" "$r")
  echo "round $r of $ROUNDS: repeat run" >&2
  repeat=$(pair "repeat-$r" "$r")
  echo "$r $first $repeat" >> "$results"
done

python3 - "$work" "$results" <<'PY'
import json, statistics, sys
work, results = sys.argv[1], sys.argv[2]
def cm_verdicts(label):
    out = {}
    path = f"{work}/cm-{label}/mutants.out/outcomes.json"
    for o in json.load(open(path))["outcomes"]:
        sc = o["scenario"]
        if not isinstance(sc, dict) or "Mutant" not in sc:
            continue
        s = o["summary"]
        out[sc["Mutant"]["name"]] = {"CaughtMutant": "killed", "Unviable": "killed",
                                     "Timeout": "killed (hang)", "MissedMutant": "SURVIVED"}.get(s, s)
    return out
def gm_verdicts(label):
    report = json.load(open(f"{work}/gm-{label}/mutants.json"))
    return {m["name"]: m["verdict"] for m in report["mutants"]}
rounds = []
for line in open(results):
    r, c1, cl1, g1, gl1, c2, cl2, g2, gl2 = line.split()
    rounds.append((int(r), float(c1), cl1, float(g1), gl1, float(c2), cl2, float(g2), gl2))
bad = 0
for r, *_ in rounds:
    for kind in ("first", "repeat"):
        label = f"{kind}-{r}"
        c, g = cm_verdicts(label), gm_verdicts(label)
        for name in sorted(set(c) | set(g)):
            if c.get(name) != g.get(name):
                bad += 1
                print(f"DISAGREE ({label}): {name}: cargo-mutants {c.get(name)}, gatekit {g.get(name)}")
        print(f"{label}: {len(g)} mutants, verdicts agree on {sum(c.get(k) == v for k, v in g.items())}")
print()
print(f"{'round':6} {'run':7} {'cargo-mutants':>14} {'load':>5} {'gatekit':>9} {'load':>5} {'ratio':>6}")
ratios = {"first": [], "repeat": []}
for r, c1, cl1, g1, gl1, c2, cl2, g2, gl2 in rounds:
    for kind, c, cl, g, gl in (("first", c1, cl1, g1, gl1), ("repeat", c2, cl2, g2, gl2)):
        ratios[kind].append(g / c)
        print(f"{r:<6} {kind:7} {c:13.1f}s {cl:>5} {g:8.1f}s {gl:>5} {g / c:6.2f}")
print()
for kind, goal in (("first", 0.9), ("repeat", 0.5)):
    m = statistics.median(ratios[kind])
    print(f"median ratio, {kind} run: {m:.2f} over {len(ratios[kind])} round(s) (goal <= {goal})")
sys.exit(1 if bad else 0)
PY
