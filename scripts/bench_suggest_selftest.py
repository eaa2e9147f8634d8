#!/usr/bin/env python3
"""Checks of bench_suggest_compare.py on small real cases: scripts/bench-suggest.sh runs this
first and stops if it fails, so a broken comparison never prints a figure.

  python3 scripts/bench_suggest_selftest.py
"""

import difflib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_suggest_compare as bsc  # noqa: E402

OLD = "def f(a, b):\n    if a < b:\n        return a\n    return b\n"
NEW = "def f(a, b):\n    if a <= b:\n        return a + 0\n    return b\n\n\ndef g():\n    return 1\n"


def check(cond, what):
    if not cond:
        sys.exit(f"bench_suggest_selftest: FAILED: {what}")
    print(f"ok: {what}")


def repo_with_change(root):
    g = ["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", root], check=True)
    with open(os.path.join(root, "m.py"), "w") as f:
        f.write(OLD)
    subprocess.run(g + ["add", "-A"], check=True)
    subprocess.run(g + ["commit", "-q", "-m", "old"], check=True)
    with open(os.path.join(root, "m.py"), "w") as f:
        f.write(NEW)
    subprocess.run(g + ["commit", "-q", "-am", "new"], check=True)


def main():
    check(bsc.effect("a <= b") == bsc.effect("a<=b\n"), "an effect ignores whitespace")
    check(bsc.effect("a <= b") != bsc.effect("a < b"), "an effect keeps every other byte")

    diff = "".join(difflib.unified_diff(OLD.splitlines(True), NEW.splitlines(True), "a", "b", n=1))
    check(bsc.apply_unified(OLD, diff) == NEW, "a unified diff applies to the file it was made on")
    check(bsc.apply_unified(NEW, diff) is None, "a unified diff that does not fit is refused")
    insert = "".join(difflib.unified_diff(["a\n", "b\n"], ["a\n", "x\n", "b\n"], n=0))
    check(bsc.apply_unified("a\nb\n", insert) == "a\nx\nb\n",
          "a hunk with an empty old side (-1,0) inserts after its line")

    check([p for p in ["src/a.py", "tests/t.py", "pkg/test_a.py", "pkg/a_test.py", "conftest.py",
                       "src/__tests__/x.ts", "src/a.test.tsx", "lib/a.spec.mjs", "lib/contest.js",
                       "src/testing.py"] if not bsc.is_test_path(p)]
          == ["src/a.py", "lib/contest.js", "src/testing.py"], "test paths known by one rule")
    check(bsc.stryker_ranges({"lib/a.js": [3, 4, 5, 9], "test/a.js": [1], "a.py": [1]})
          == "lib/a.js:3-5,lib/a.js:9-9", "Stryker's ranges: runs of added lines of sources")
    text = "x = '\U0001F600' + y\n"
    # Babel counts the emoji as two UTF-16 units: `y`, the 11th character, is at column 12 (1-based) for Stryker.
    pos = {"start": {"line": 1, "column": 12}, "end": {"line": 1, "column": 13}}
    check(bsc.span_swap(text, pos, "z", bsc.utf16_cut)[0] == "x = '\U0001F600' + z\n",
          "a Stryker span past a non-BMP character lands on the right character")

    if os.path.isdir(os.path.join(bsc.stryker_modules(), "@babel", "generator")):
        a, b, c, bad = bsc.syntax_keys([("a.js", "x = h[0xC0 | (c >> 6)]; // one"),
                                        ("a.js", "x = h[0xC0 | c >> 6];"),
                                        ("a.js", "x = h[0xC0 & c >> 6];"),
                                        ("a.js", "x = (;")])
        check(a == b and a != c, "syntax keys: comments and redundant parentheses aside, "
              "operators kept")
        check(bad is None, "syntax keys: a text that does not parse has none")
    else:
        print("skipped: syntax keys (Stryker's Babel is not installed yet)")

    with tempfile.TemporaryDirectory() as root:
        repo_with_change(root)
        check(bsc.changed_lines(root) == {"m.py": [2, 3, 5, 6, 7, 8]},
              "changed lines are the new side's added lines")

        mutated = [NEW.replace("a <= b", "a < b"), NEW.replace("a <= b", "a > b"),
                   NEW.replace("return 1", "return None")]
        peer = [{"file": "m.py", "line": 2, "what": "k", "text": "t", "effect": bsc.effect(t)}
                for t in mutated]
        # Two more gatekit does not propose: one on line 1, which the change does not add, and
        # one spanning lines 1-2, which touches an added line.
        peer.append({"file": "m.py", "line": 1, "last": 1, "what": "k", "text": "t",
                     "effect": bsc.effect(NEW.replace("f(a, b)", "f(b, a)"))})
        peer.append({"file": "m.py", "line": 1, "last": 2, "what": "k", "text": "t",
                     "effect": bsc.effect(NEW.replace("a, b):\n    if", "b, a):\n    if not"))})
        with open(os.path.join(root, "peer.json"), "w") as f:
            json.dump(peer, f)

        def mutant(line, anchor, replace, operator="boundary"):
            return {"name": anchor, "site": None, "file": "m.py", "line": line, "anchor": anchor,
                    "replace": replace, "operator": operator, "description": "d",
                    "undoes": "TODO: x", "suite": "s", "expect": "kill"}
        suggest = {"version": 1, "mutants": [
            mutant(2, "if a <= b:", "if  a<b :"),            # the peer's first, spaced apart
            mutant(8, "return 1", "return None", "return-value"),   # the peer's third
            mutant(3, "return a + 0", "return a +"),          # gatekit's own, does not compile
            mutant(4, "return", "pass", "remove-call"),       # not unique: 3 times in the file
            mutant(5, "nowhere", "x", "remove-call"),         # not unique either: absent
            mutant(1, "def f(a, b):", "def f(a, b):  # c", "control")],
            "files": [], "suites": {}, "counts": {}}
        with open(os.path.join(root, "suggest.json"), "w") as f:
            json.dump(suggest, f)
        os.environ["BUILD_SAMPLE"] = "0"
        bsc.compare(os.path.join(root, "row.json"), os.path.join(root, "suggest.json"), root,
                    os.path.join(root, "peer.json"), "python", "t", "mutmut", 0, 60)
        row = json.load(open(os.path.join(root, "row.json")))
        check((row["peer_mutants"], row["matched"]) == (5, 2), "recall counts by effect: 2 of 5")
        check(row["missed_off_added_lines"] == 1, "one peer mutant missed is off the added lines")
        check(row["lacks"] == 3, "the peer lacks gatekit's 3 other proposals")
        check((row["anchors"], row["not_unique"]) == (6, 2),
              "two anchors of 6 are not unique: one 3 times in the file, one absent")
        check(row["controls"] == 1 and row["proposals"] == 5, "the control is not a proposal")
        # `return a +` does not compile; the two whose anchors are not unique cannot be applied.
        check((row["build"]["built"], row["build"]["tried"]) == (2, 5),
              "2 of 5 proposals build (py_compile): an anchor not unique never does")
        check(subprocess.run(["git", "-C", root, "status", "--porcelain", "m.py"],
                             capture_output=True, text=True).stdout == "",
              "the repository's file is unchanged by the build check")


if __name__ == "__main__":
    main()
