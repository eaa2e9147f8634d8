#!/usr/bin/env python3
"""The helper of scripts/bench-vs-stryker.sh: Stryker's own mutants as exact anchors, and the
comparison of the two tools' verdicts and times.

  python3 bench_vs_stryker.py pick REPORT FILE N PICKED_JSON SPEC SUITE_RUN
      REPORT is the JSON report of a Stryker run that listed FILE's mutants (a command runner
      that runs nothing). Picks the places of single-line mutants spread evenly over the file,
      as few as hold at least N mutants, and writes to PICKED_JSON the `--mutate` ranges of
      those exact locations and every mutant of the listing that lies inside one of them (the
      set Stryker itself will run: its instrumenter mutates each node a range includes), each
      translated; SPEC gets gatekit's spec of those mutants.
  python3 bench_vs_stryker.py compare WORK
      reads WORK/runs.txt, WORK/picked.json and each run's results; prints the verdicts mutant
      by mutant, the wall time per mutant and the ratio; exits 1 when a verdict disagrees.

A mutant is Stryker's `replacement` put in place of the text at its `location` (lines and
columns from 1) in the report's copy of the file, then anchored by bench_vs_mutmut.anchor_for:
the changed span widened to whole lines and grown a line at a time until it occurs once. A
mutant is known across runs by its mutator, location and replacement (Stryker's ids are
counters, different in each run).
"""

import json
import os
import sys

# Importing the sibling helpers leaves no __pycache__ in the checkout.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_parts  # noqa: E402
from bench_vs_mutmut import anchor_for, toml_str  # noqa: E402

# Stryker's statuses and gatekit's verdicts, each in one of three classes.
CLASS_OF_STRYKER = {"Killed": "killed", "Timeout": "killed", "Survived": "survived",
                    "NoCoverage": "survived", "CompileError": "error", "RuntimeError": "error"}
CLASS_OF_GATEKIT = {"killed": "killed", "killed (hang)": "killed", "SURVIVED": "survived",
                    "error": "error", "unviable": "error"}


def key(m):
    loc = m["location"]
    return (f'{m["mutatorName"]} {loc["start"]["line"]}:{loc["start"]["column"]}-'
            f'{loc["end"]["line"]}:{loc["end"]["column"]} {m.get("replacement", "")}')


def offset(starts, pos):
    return starts[pos["line"] - 1] + pos["column"] - 1


def included(outer, inner):
    """Stryker's rule (locationIncluded): `inner` lies inside `outer`, ends included."""
    s, e, a, b = outer["start"], outer["end"], inner["start"], inner["end"]
    start_in = s["line"] < a["line"] or (s["line"] == a["line"] and s["column"] <= a["column"])
    end_in = e["line"] > b["line"] or (e["line"] == b["line"] and e["column"] >= b["column"])
    return start_in and end_in


def pick(report_path, rel, n, picked_path, spec_path, suite_run):
    report = json.load(open(report_path))
    entry = report["files"][rel]
    source = entry["source"]
    starts = [0]
    for line in source.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    mutants = sorted(entry["mutants"], key=lambda m: (m["location"]["start"]["line"],
                                                      m["location"]["start"]["column"], key(m)))
    single = [m for m in mutants if m["location"]["start"]["line"] == m["location"]["end"]["line"]]
    # The fewest places, spread evenly over the file's single-line mutants, whose ranges hold
    # at least n mutants (each place brings every mutant of its node and the nodes inside).
    for count in range(1, len(single) + 1):
        ranges = [single[i * len(single) // count]["location"] for i in range(count)]
        inside = [m for m in mutants if any(included(r, m["location"]) for r in ranges)]
        if len(inside) >= n:
            break
    keys = [key(m) for m in mutants]
    out, left_out = [], []
    for m in mutants:
        if not any(included(r, m["location"]) for r in ranges):
            continue
        if keys.count(key(m)) != 1:
            left_out.append((key(m), "another mutant has the same mutator, place and replacement"))
            continue
        a, b = offset(starts, m["location"]["start"]), offset(starts, m["location"]["end"])
        if not source[a:b].isascii():
            left_out.append((key(m), "non-ASCII text: Stryker's columns count UTF-16 units"))
            continue
        found = anchor_for(source, source[:a] + m["replacement"] + source[b:])
        if found is None:
            left_out.append((key(m), "no unique anchor"))
            continue
        name = f'{len(out) + 1:03d} {m["mutatorName"]} line {m["location"]["start"]["line"]}'
        out.append({"name": name, "key": key(m), "location": m["location"],
                    "anchor": found[0], "replace": found[1]})
    # Stryker's --mutate range: lines from 1, columns from 0, the end column included.
    mutate = [f'{rel}:{r["start"]["line"]}:{r["start"]["column"] - 1}-'
              f'{r["end"]["line"]}:{r["end"]["column"] - 1}' for r in ranges]
    json.dump({"mutate": mutate, "ranges": ranges, "mutants": out}, open(picked_path, "w"),
              indent=1)
    with open(spec_path, "w", encoding="utf-8") as f:
        f.write(f'[suites.vitest]\nrun = {toml_str(suite_run)}\n\n[worktree]\n'
                f'link = ["node_modules"]\n')
        for m in out:
            f.write("\n[[mutant]]\n")
            f.write(f"name = {toml_str(m['name'])}\n")
            f.write(f"file = {toml_str(rel)}\n")
            f.write(f"anchor = {toml_str(m['anchor'])}\n")
            f.write(f"replace = {toml_str(m['replace'])}\n")
            f.write(f"undoes = {toml_str('Stryker: ' + m['key'])}\n")
            f.write('suite = "vitest"\n')
    for k, why in left_out:
        print(f"left out: {k}: {why}", file=sys.stderr)
    print(f"{len(out)} of Stryker's {len(mutants)} mutants of {rel} translated: every mutant "
          f"inside {len(ranges)} ranges (single-line mutants' places spread over the file)",
          file=sys.stderr)


def parts(work, count):
    """Splits the ranges into `count` parts: WORK/ranges-P.json (Stryker's `mutate`) and
    WORK/part-P.txt (the names of the mutants inside them, each in the first part holding it)."""
    picked = json.load(open(os.path.join(work, "picked.json")))
    per = -(-len(picked["ranges"]) // count)
    taken = set()
    for p in range(count):
        ranges = picked["ranges"][p * per:(p + 1) * per]
        json.dump(picked["mutate"][p * per:(p + 1) * per],
                  open(os.path.join(work, f"ranges-{p + 1}.json"), "w"))
        with open(os.path.join(work, f"part-{p + 1}.txt"), "w") as f:
            for m in picked["mutants"]:
                if m["name"] not in taken and any(included(r, m["location"]) for r in ranges):
                    taken.add(m["name"])
                    f.write(m["name"] + "\n")


def compare(work):
    picked = json.load(open(os.path.join(work, "picked.json")))
    name_of = {m["key"]: m["name"] for m in picked["mutants"]}
    def read_peer(part):
        report = json.load(open(os.path.join(work, f"st-{part}.json")))
        return {name_of[key(m)]: m["status"]
                for entry in report["files"].values()
                for m in entry["mutants"] if key(m) in name_of}

    gm, st, per = bench_parts.table(work, "stryker", read_peer)
    print()
    print(f"{'mutant':34} {'Stryker':12} {'gatekit':14}")
    agree, tally = 0, {}
    for m in picked["mutants"]:
        s, g = st.get(m["name"], "(none)"), gm.get(m["name"], "(none)")
        tally[s] = tally.get(s, 0) + 1
        same = CLASS_OF_STRYKER.get(s, s) == CLASS_OF_GATEKIT.get(g, g)
        agree += same
        print(f"{m['name']:34} {s:12} {g:14}{'' if same else '  DISAGREE'}")
    print()
    print("Stryker's verdicts: " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    print(f"verdicts agree on {agree} of {len(picked['mutants'])}")
    print(bench_parts.ratio_line("Stryker", per, "stryker"))
    return len(picked["mutants"]) - agree


if __name__ == "__main__":
    if sys.argv[1] == "pick":
        report, rel, n, picked, spec, run = sys.argv[2:8]
        pick(report, rel, int(n), picked, spec, run)
    elif sys.argv[1] == "parts":
        parts(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "compare":
        sys.exit(1 if compare(sys.argv[2]) else 0)
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")
