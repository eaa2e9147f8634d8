#!/usr/bin/env python3
"""Checks of bench_vs_mutmut.py's translation on small cases, without mutmut or a network:
scripts/bench-vs-mutmut.sh runs this first and stops if it fails, and .ci/run runs it.

  python3 scripts/bench_vs_mutmut_selftest.py
"""

import os
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vs_mutmut as bvm  # noqa: E402


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


if __name__ == "__main__":
    main()
