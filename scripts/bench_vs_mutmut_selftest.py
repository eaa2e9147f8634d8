#!/usr/bin/env python3
"""Checks of the translation of bench_vs_mutmut.py and bench_vs_stryker.py on small cases,
without mutmut, Stryker or a network: scripts/bench-vs-mutmut.sh and bench-vs-stryker.sh run
this first and stop if it fails, and .ci/run runs it.

  python3 scripts/bench_vs_mutmut_selftest.py
"""

import json
import os
import sys
import tempfile
import tomllib

# Importing the sibling helpers leaves no __pycache__ in the checkout.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vs_mutmut as bvm  # noqa: E402
import bench_vs_stryker as bvs  # noqa: E402


def check(cond, what):
    if not cond:
        sys.exit(f"bench_vs_mutmut_selftest: FAILED: {what}")
    print(f"ok: {what}")


def applied(orig, found):
    anchor, replace = found
    return orig.replace(anchor, replace, 1)


def main():
    src = ("def f(a, b):\n    if a < b:\n        return a\n    return b\n\n\n"
           "def g(a, b):\n    if a < b:\n        return a\n    return a - b\n")
    # The same line twice in the file: the anchor grows until it is unique.
    mut = src.replace("    return b\n", "    return None\n", 1)
    found = bvm.anchor_for(src, mut)
    check(found is not None and bvm.occurrences(src, found[0]) == 1,
          "an anchor whose line repeats grows until it occurs once")
    check(applied(src, found) == mut, "the anchor and its replace make exactly the mutant")
    # The second function's copy of the repeated line.
    mut = src.replace("if a < b:\n        return a\n    return a - b",
                      "if a <= b:\n        return a\n    return a - b")
    found = bvm.anchor_for(src, mut)
    check(found is not None and applied(src, found) == mut and found[0].count("\n") >= 1,
          "a change inside a repeated block is anchored by a line that tells the copies apart")
    # A unique line needs no growing: the anchor is that line, whole.
    mut = src.replace("a - b", "a + b")
    check(bvm.anchor_for(src, mut) == ("    return a - b", "    return a + b"),
          "a unique line is its own anchor, whole")
    # Deleting a whole statement, and an edit at the file's last byte.
    mut = src.replace("    return b\n", "", 1)
    found = bvm.anchor_for(src, mut)
    check(found is not None and applied(src, found) == mut, "a deleted line translates")
    tail = "x = 1\ny = 2"
    check(applied(tail, bvm.anchor_for(tail, "x = 1\ny = 3")) == "x = 1\ny = 3",
          "an edit at the end of a file without a final newline translates")
    check(bvm.anchor_for(src, src) is None, "no edit, no mutant")
    check(bvm.anchor_for("a\na\n", "a\nb\n") is None or
          applied("a\na\n", bvm.anchor_for("a\na\n", "a\nb\n")) == "a\nb\n",
          "a file of repeated lines gives a correct anchor or none")
    check(bvm.occurrences("aaa", "aa") == 2, "overlapping occurrences are counted")
    # TOML strings hold the exact text.
    text = 'q"\\\n\t\x7f\x00 é 😀 \'\'\''
    parsed = tomllib.loads(f"s = {bvm.toml_str(text)}\n")
    check(parsed["s"] == text, "toml_str round-trips quotes, backslashes, controls and non-ASCII")
    # mutmut's results, in gatekit's words.
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("    a.x_f__mutmut_1: killed\n    a.x_f__mutmut_2: survived\n"
                "    a.x_g__mutmut_1: no tests\n    a.x_g__mutmut_2: timeout\n")
    got = bvm.mutmut_verdicts(f.name)
    os.unlink(f.name)
    check(got == {"a.x_f__mutmut_1": "killed", "a.x_f__mutmut_2": "SURVIVED",
                  "a.x_g__mutmut_1": "not covered", "a.x_g__mutmut_2": "killed (hang)"},
          "mutmut's results read in gatekit's words")

    stryker()


def stryker():
    """A listing report of three mutants: two at one place (one nested in the other), one
    elsewhere; the pick of at least 2 takes the first place and both mutants inside it."""
    source = "export function f(a, b) {\n  return a < b\n}\nexport const g = (a) => a < 1\n"
    def loc(l1, c1, l2, c2):
        return {"start": {"line": l1, "column": c1}, "end": {"line": l2, "column": c2}}
    mutants = [
        {"id": "1", "mutatorName": "EqualityOperator", "replacement": "a <= b",
         "location": loc(2, 10, 2, 15)},
        {"id": "2", "mutatorName": "ConditionalExpression", "replacement": "true",
         "location": loc(2, 10, 2, 15)},
        {"id": "3", "mutatorName": "EqualityOperator", "replacement": "a >= 1",
         "location": loc(4, 27, 4, 32)},
    ]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        with open(report, "w") as f:
            json.dump({"files": {"src/m.ts": {"source": source, "mutants": mutants}}}, f)
        picked, spec = os.path.join(tmp, "picked.json"), os.path.join(tmp, "mutants.toml")
        bvs.pick(report, "src/m.ts", 2, picked, spec, "npx vitest run")
        got = json.load(open(picked))
        check(got["mutate"] == ["src/m.ts:2:9-2:14"],
              "Stryker's range: lines from 1, columns from 0, the node's exact place")
        spec = tomllib.load(open(spec, "rb"))
        after = [source.replace(m["anchor"], m["replace"], 1) for m in spec["mutant"]]
        check(after == [source.replace("a < b", "true"), source.replace("a < b", "a <= b")],
              "each mutant inside the range, its replacement put at its place")
        bvs.parts(tmp, 1)
        check(open(os.path.join(tmp, "part-1.txt")).read().count("\n") == 2,
              "a part names the mutants inside its ranges")


if __name__ == "__main__":
    main()
