#!/usr/bin/env python3
"""The helper of scripts/bench-vs-mutmut.sh: mutmut's own mutants as exact anchors, and the
comparison of the two tools' verdicts and times.

  VENV-PYTHON bench_vs_mutmut.py translate PROJECT FILE N SPEC NAMES SUITE_RUN
      (in a copy of the project whose setup.cfg has a [mutmut] section, with mutmut 3 installed)
      asks mutmut to generate its mutants of FILE, picks N of them spread evenly over mutmut's
      own order (every k-th), and writes gatekit's spec (one [[mutant]] each, named as mutmut
      names it) and the list of names, one a line.
  python3 bench_vs_mutmut.py compare WORK
      reads WORK/runs.txt and each run's results, prints the verdicts mutant by mutant, the wall
      time per mutant of each tool and the ratio; exits 1 when a verdict disagrees.

A mutant is translated through mutmut's own files: the unmutated copy and the mutant of the
function mutmut writes into mutants/ (what `mutmut show` diffs and `mutmut apply` writes back),
put in place of the function in the original file as `mutmut apply` does, but in memory. The
anchor is the changed span of the file, widened to whole lines and then grown by a line on each
side until it occurs once in the file (`anchor_for`, which bench_vs_mutmut_selftest.py checks).
"""

import json
import os
import sys

# Importing the sibling helper leaves no __pycache__ in the checkout.
sys.dont_write_bytecode = True
import bench_parts  # noqa: E402

# mutmut's status words as the bench reads them (`mutmut results --all true`), in gatekit's words.
VERDICT_OF_MUTMUT = {
    "killed": "killed",
    "survived": "SURVIVED",
    "suspicious": "killed (hang)",
    "timeout": "killed (hang)",
    "no tests": "not covered",
    "segfault": "killed",
    "caught by type check": "killed",
}


# Verdicts that agree: a mutant some test kills, whether or not another test hangs on it
# (mutmut stops at the first failure and runs only the tests that reach the function; gatekit
# runs the whole suite, so a hanging test it reaches makes its word killed (hang)); and one no
# test kills (mutmut's "no tests" is SURVIVED for gatekit, which runs the whole suite).
CLASS = {"killed": "killed", "killed (hang)": "killed", "SURVIVED": "survived",
         "not covered": "survived"}


def occurrences(text, part):
    """How many times `part` occurs in `text`, overlapping ones counted (as an anchor must
    occur once, whatever overlaps)."""
    count, at = 0, text.find(part)
    while at != -1:
        count += 1
        at = text.find(part, at + 1)
    return count


def anchor_for(orig, mutated, max_grow=20):
    """(anchor, replace) for the edit turning `orig` into `mutated`: the changed span widened
    to whole lines, then a line more on each side until it occurs once in `orig`; None when
    the two are equal or no such span is found."""
    if orig == mutated:
        return None
    p = 0
    limit = min(len(orig), len(mutated))
    while p < limit and orig[p] == mutated[p]:
        p += 1
    s = 0
    while s < limit - p and orig[-1 - s] == mutated[-1 - s]:
        s += 1
    lo = orig.rfind("\n", 0, p) + 1
    hi = orig.find("\n", len(orig) - s)
    hi = len(orig) if hi == -1 else hi
    delta = len(mutated) - len(orig)
    for _ in range(max_grow + 1):
        anchor = orig[lo:hi]
        if anchor and occurrences(orig, anchor) == 1:
            return anchor, mutated[lo:hi + delta]
        if lo == 0 and hi == len(orig):
            return None
        lo = orig.rfind("\n", 0, max(lo - 1, 0)) + 1 if lo > 0 else 0
        nxt = orig.find("\n", hi + 1) if hi < len(orig) else -1
        hi = len(orig) if nxt == -1 else nxt
    return None


def toml_str(s):
    """A TOML basic string holding exactly `s`."""
    out = []
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def translate(project, rel, n, spec_path, names_path, suite_run):
    # mutmut reads its settings from the folder it starts in.
    os.chdir(project)
    from pathlib import Path

    import libcst as cst
    import mutmut.__main__ as mm
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import find_top_level_function_or_method, \
        read_functions_from_index
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key

    os.makedirs("mutants", exist_ok=True)
    mm.copy_src_dir()
    mm.copy_also_copy_files()
    mm.create_mutants(2)
    data = SourceFileMutationData(path=Path(rel))
    data.load()
    names = list(data.exit_code_by_key)
    with open(rel, encoding="utf-8") as f:
        orig = f.read()
    module = cst.parse_module(orig)

    def same_named(name):
        found = []
        for child in module.body:
            if isinstance(child, cst.FunctionDef) and child.name.value == name:
                found.append(child)
            if isinstance(child, cst.ClassDef) and isinstance(child.body, cst.IndentedBlock):
                found += [m for m in child.body.body
                          if isinstance(m, cst.FunctionDef) and m.name.value == name]
        return found

    def mutated_file(name):
        """The file as `mutmut apply NAME` would write it, or a reason it cannot be had."""
        func, _ = orig_function_and_class_names_from_key(name)
        func = func.rpartition(".")[-1]
        if len(same_named(func)) != 1:
            return None, f"{func} is not the only function of its name (mutmut apply may pick another)"
        original = find_top_level_function_or_method(module, func)
        pair = read_functions_from_index(name, Path(rel))
        if pair is None:
            return None, "no line index in mutants/"
        copy, mutant = pair
        if cst.Module([copy]).code != cst.Module([original]).code:
            return None, "mutmut's unmutated copy differs from the function in the file"
        mutant = mutant.with_changes(name=cst.Name(func))
        return module.deep_replace(original, mutant).code, None

    picked, left_out = [], []
    # Every k-th of mutmut's own order; one that cannot be translated gives way to the next.
    step = max(1, len(names) // n)
    for start in range(0, len(names), step):
        if len(picked) == n:
            break
        for name in names[start:start + step]:
            text, why = mutated_file(name)
            found = anchor_for(orig, text) if text is not None else None
            if found is None:
                left_out.append((name, why or "no unique anchor"))
                continue
            picked.append((name, found))
            break
    with open(spec_path, "w", encoding="utf-8") as f:
        f.write("[suites.pytest]\n")
        f.write(f"run = {toml_str(suite_run)}\n")
        for name, (anchor, replace) in picked:
            f.write("\n[[mutant]]\n")
            f.write(f"name = {toml_str(name)}\n")
            f.write(f"file = {toml_str(rel)}\n")
            f.write(f"anchor = {toml_str(anchor)}\n")
            f.write(f"replace = {toml_str(replace)}\n")
            f.write(f"undoes = {toml_str('mutmut: ' + name)}\n")
            f.write('suite = "pytest"\n')
    with open(names_path, "w") as f:
        f.writelines(name + "\n" for name, _ in picked)
    for name, why in left_out:
        print(f"left out: {name}: {why}", file=sys.stderr)
    print(f"{len(picked)} of mutmut's {len(names)} mutants of {rel} translated "
          f"(every {step}th)", file=sys.stderr)


def mutmut_verdicts(path):
    """`mutmut results --all true` lines ("    NAME: STATUS") as {NAME: gatekit's word}."""
    out = {}
    for line in open(path):
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            out[name] = VERDICT_OF_MUTMUT.get(status, f"? {status}")
    return out


def compare(work):
    """Prints the verdicts and times; returns the number of disagreements."""
    def read_peer(part):
        # Each run starts with mutants/ removed, so its results name every other part's
        # mutants "not checked": only this part's are its own.
        mine = {line.strip() for line in open(os.path.join(work, f"part-{part}.txt"))}
        got = mutmut_verdicts(os.path.join(work, f"mm-{part}.results"))
        return {k: v for k, v in got.items() if k in mine}

    gm, mm, per = bench_parts.table(work, "mutmut", read_peer)
    names = [line.strip() for line in open(os.path.join(work, "names.txt"))]
    print()
    print(f"{'mutant':55} {'mutmut':14} {'gatekit':14}")
    agree = exact = 0
    for name in names:
        m, g = mm.get(name, "(no result)"), gm.get(name, "(no result)")
        exact += m == g
        same = CLASS.get(m, m) == CLASS.get(g, g)
        agree += same
        print(f"{name:55} {m:14} {g:14}{'' if same else '  DISAGREE'}")
    print()
    tally = {}
    for name in names:
        tally.setdefault(mm.get(name, "(no result)"), 0)
        tally[mm.get(name, "(no result)")] += 1
    print("mutmut's verdicts: " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    print(f"verdicts agree on {agree} of {len(names)} (killed and killed (hang) as one, not "
          f"covered and SURVIVED as one); the very words on {exact}")
    print(bench_parts.ratio_line("mutmut", per, "mutmut"))
    return len(names) - agree


if __name__ == "__main__":
    if sys.argv[1] == "translate":
        p, rel, n, spec, names_out, run = sys.argv[2:8]
        translate(p, rel, int(n), spec, names_out, run)
    elif sys.argv[1] == "compare":
        sys.exit(1 if compare(sys.argv[2]) else 0)
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")
