# What the bench scripts share; sourced by them (`. "$(dirname "$0")/bench-lib.sh"`), never run.
#
# here            the checkout the script belongs to
# release BIN     builds gatekit's BIN in release mode and prints the binary's path
#                 (GATEKIT_BIN_DIR=DIR: the BIN already built in DIR, say a debug build, instead)
# suite_keys SPEC SUITE KEY=VALUE...  adds keys (floor, watch) to SUITE's table in SPEC, as TOML strings
# floors OUT...   each gatekit report's floors and warm reruns, in a line each
# scratch NAME    makes the scratch folder $work, removed when the script exits unless KEEP=1
# stamp           the UTC time and the load averages, for a bench's start and end lines
# selftest PY     runs a bench helper's offline self-test, and stops the bench when it fails

here=$(cd "$(dirname "$0")/.." && pwd)

release() {
  if [ -n "${GATEKIT_BIN_DIR:-}" ]; then
    echo "using gatekit's $1 from $GATEKIT_BIN_DIR" >&2
    echo "$GATEKIT_BIN_DIR/$1"
    return
  fi
  echo "building gatekit's $1 (release)" >&2
  cargo build --quiet --release -p "$1" --manifest-path "$here/Cargo.toml"
  echo "$here/target/release/$1"
}

scratch() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
  echo "scratch: $work" >&2
}

stamp() { echo "$(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"; }

selftest() {
  local out
  if ! out=$(python3 "$here/scripts/$1" 2>&1); then
    echo "$out" >&2
    echo "the translation's self-test failed: nothing measured" >&2
    exit 1
  fi
}

suite_keys() {
  python3 - "$@" <<'PY'
import json, sys
spec, suite, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(spec, encoding="utf-8").read()
head = f"[suites.{suite}]\n"
assert head in text, f"no [suites.{suite}] in {spec}"
keys = "".join(f"{k} = {json.dumps(v)}\n" for k, v in (p.split("=", 1) for p in pairs) if v)
open(spec, "w", encoding="utf-8").write(text.replace(head, head + keys, 1))
PY
}

floors() {
  python3 - "$@" <<'PY'
import json, sys
from collections import Counter
outcomes, costs, floors = Counter(), [], []
for out in sys.argv[1:]:
    try:
        r = json.load(open(f"{out}/mutants.json"))
    except OSError:
        continue
    for b in r["baseline"]:
        if b.get("floor"):
            floors.append(b["floor"])
    for m in r["mutants"]:
        w = (m.get("run") or {}).get("warm")
        outcomes[w["outcome"] if w else "cold"] += 1
for f in floors:
    x = f"{f['multiple']:.2f}x" if f.get("multiple") is not None else "-"
    secs = f"{f['secs']:.2f}s" if f.get("secs") is not None else f"failed ({f['failed']})"
    per = f"{f['per_mutant_secs']:.2f}s" if f.get("per_mutant_secs") is not None else "-"
    print(f"gatekit's floor (median of {len(f['runs'])}): {secs}; its time per mutant in one job slot {per}, {x} the floor")
print("how gatekit judged: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())))
PY
}
