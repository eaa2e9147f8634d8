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
# seconds, load   a monotonic clock (seconds) and the 1-minute load average
# since T0        the seconds since T0 (a `seconds` value), two decimals
# run_gatekit PART DIR  gatekit's `mutants run` of $work/mutants.toml in DIR on part PART's
#                 mutants ($work/part-PART.txt, one name a line), --jobs $JOBS, into $work/gk-PART
# interleave PEER RUN_PEER  times each part ($work/part-1.txt ...) with gatekit and the peer
#                 (RUN_PEER PART runs it), gatekit first on odd parts and the peer first on even
#                 ones, so a load that rises or falls favours neither; a line each in
#                 $work/runs.txt: "TOOL PART N SECONDS LOAD_BEFORE LOAD_AFTER"
# floor_times DIR SUITE STARTUP  the suite's own run once, then the runner's start-up (the
#                 command STARTUP), in DIR: sets suite_secs and startup_secs; logs in $work

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

seconds() { python3 -c 'import time; print(f"{time.monotonic():.3f}")'; }
load() { cut -d' ' -f1 /proc/loadavg; }
since() { python3 -c "import time; print(f'{time.monotonic() - $1:.2f}')"; }

run_gatekit() {
  local only=() name
  while read -r name; do only+=(--only "$name"); done < "$work/part-$1.txt"
  "$gm" run "$work/mutants.toml" --dir "$2" --jobs "$JOBS" --out "$work/gk-$1" "${only[@]}" \
    > "$work/gk-$1.log" 2>&1 || true
}

interleave() {
  local peer=$1 run_peer=$2 p
  : > "$work/runs.txt"
  for p in $(seq 1 "$PARTS"); do
    [ -s "$work/part-$p.txt" ] || continue
    if [ $((p % 2)) = 1 ]; then timed_part gatekit "$p"; timed_part "$peer" "$p" "$run_peer"
    else timed_part "$peer" "$p" "$run_peer"; timed_part gatekit "$p"; fi
  done
}

timed_part() { # TOOL PART [RUN_PEER]
  local l0 t0 n
  n=$(wc -l < "$work/part-$2.txt")
  echo "part $2: $1 on $n mutants ($(stamp))" >&2
  l0=$(load)
  t0=$(seconds)
  if [ "$1" = gatekit ]; then run_gatekit "$2" "$gk_dir"; else "$3" "$2"; fi
  echo "$1 $2 $n $(since "$t0") $l0 $(load)" >> "$work/runs.txt"
}

floor_times() {
  local t0
  echo "the floor: the suite once, then the runner's start-up ($(stamp))" >&2
  t0=$(seconds)
  (cd "$1" && sh -c "$2" > "$work/floor.log" 2>&1) || true
  suite_secs=$(since "$t0")
  t0=$(seconds)
  (cd "$1" && sh -c "$3" > "$work/startup.log" 2>&1) || true
  startup_secs=$(since "$t0")
}

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
