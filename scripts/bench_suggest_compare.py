#!/usr/bin/env python3
"""The comparison behind scripts/bench-suggest.sh (Python 3.11, standard library only).

Every mutant, gatekit's or a peer's, is reduced to its effect: the bytes of its file after the
swap with all whitespace removed, hashed. Two mutants are the same when their effects are, so a
peer that renders `a<=b` where gatekit keeps `a <= b` still matches, and nothing is matched on
names, operators or line numbers.

  changed REPO                          the lines HEAD adds or changes against HEAD~1, as JSON
  stryker-ranges CHANGED                Stryker's --mutate for those lines of source files
  peer-cargo-mutants LIST REPO OUT      effects of `cargo mutants --list --json --diff` entries
  peer-stryker REPORT REPO OUT          effects of Stryker's mutation-testing JSON report
  compare ROW SUGGEST REPO PEER BUILD   one row: recall, what the peer lacks, anchors, builds
  table ROW...                          the rows as a table, with the goals

The mutmut lister runs inside mutmut's own environment (it needs libcst) and imports `effect`
from here, so all three peers are normalized by the same function.
"""

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

WHITESPACE = re.compile(r"\s+")


def effect(text):
    """The identity of a mutated file: its text with every whitespace character removed, hashed."""
    return hashlib.sha256(WHITESPACE.sub("", text).encode()).hexdigest()


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def changed_lines(repo):
    """{file: [line, ...]}: the lines of HEAD that `git diff HEAD~1 HEAD` adds (new side)."""
    out, current = {}, None
    for line in git(repo, "diff", "-U0", "--no-renames", "HEAD~1", "HEAD").splitlines():
        if line.startswith("+++ "):
            current = None if line == "+++ /dev/null" else line[6:]
        elif line.startswith("@@") and current is not None:
            new = line.split()[2][1:]
            start, _, count = new.partition(",")
            count = int(count) if count else 1
            out.setdefault(current, []).extend(range(int(start), int(start) + count))
    return {f: sorted(set(ls)) for f, ls in out.items() if ls}


# Test code is not mutated, by gatekit or by a reviewer asking a peer (mutmut's source_paths
# name the package, Stryker's --mutate the sources): one rule for every peer here.
TEST_PATH = re.compile(r"(^|/)(tests?|__tests__)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$"
                       r"|\.(test|spec)\.[cm]?[jt]sx?$")


def is_test_path(path):
    return bool(TEST_PATH.search(path))


def stryker_ranges(changed):
    """Stryker's --mutate value for the added lines of source files: FILE:FIRST-LAST,..."""
    out = []
    for f, lines in sorted(changed.items()):
        if not re.search(r"\.([cm]?js|jsx|[cm]?ts|tsx)$", f) or is_test_path(f):
            continue
        start = prev = None
        for n in lines + [None]:
            if n is not None and prev is not None and n == prev + 1:
                prev = n
                continue
            if start is not None:
                out.append(f"{f}:{start}-{prev}")
            start = prev = n
    return ",".join(out)


def read(repo, path):
    with open(os.path.join(repo, path), encoding="utf-8", newline="") as f:
        return f.read()


def apply_unified(text, diff):
    """Applies a one-file unified diff (as cargo-mutants prints it) to text; None if it does not
    fit, so a peer's mutant is never compared in a shape it does not have."""
    lines = text.splitlines(keepends=True)
    out, at, in_hunk, last = [], 0, False, None
    for raw in diff.splitlines(keepends=True):
        if raw.startswith("@@"):
            old = raw.split()[1][1:]
            first, _, count = old.partition(",")
            # An empty old side (`-a,0`) inserts after line a; otherwise the hunk starts at a.
            start = int(first) if count == "0" else int(first) - 1
            if start < at:
                return None
            out.extend(lines[at:start])
            at, in_hunk = start, True
        elif not in_hunk:
            continue
        elif raw.startswith("\\"):
            # "\ No newline at end of file" after an added line: that line ends the file bare.
            if last == "+" and out and out[-1].endswith("\n"):
                out[-1] = out[-1][:-1]
        else:
            sign, body = raw[:1], raw[1:]
            last = sign
            if sign in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\n") != body.rstrip("\n"):
                    return None
                if sign == " ":
                    out.append(lines[at])
                at += 1
            elif sign == "+":
                out.append(body if body.endswith("\n") else body + "\n")
    out.extend(lines[at:])
    return "".join(out)


def write_effects(path, effects):
    with open(path, "w") as f:
        json.dump(effects, f)


CARGO_MUTANTS_MARK = " /* ~ changed by cargo-mutants ~ */"


def span_swap(text, span, replacement, column_of):
    """text with the span (1-based lines and columns, end exclusive) swapped for replacement."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(pos):
        return starts[pos["line"] - 1] + column_of(lines[pos["line"] - 1], pos["column"] - 1)

    a, b = offset(span["start"]), offset(span["end"])
    return text[:a] + replacement + text[b:], text[a:b], [a, b, replacement]


def peer_cargo_mutants(listing, repo, out_path):
    """cargo-mutants' span and replacement (columns count characters) make the effect; its
    diff, with the comment it marks the line with taken out, must agree, or the listing is not
    read as this script thinks and the run stops."""
    effects, disagree = [], []
    for m in json.load(open(listing)):
        text = read(repo, m["file"])
        mutated, was, cut = span_swap(text, m["span"], m["replacement"], lambda line, col: col)
        by_diff = apply_unified(text, (m.get("diff") or "").replace(CARGO_MUTANTS_MARK, ""))
        if by_diff is None or effect(by_diff) != effect(mutated):
            disagree.append(m["name"])
        effects.append({"file": m["file"], "line": m["span"]["start"]["line"],
                        "last": m["span"]["end"]["line"],
                        "what": m.get("genre", "?"), "cut": cut,
                        "text": f"{was[:60]!r} -> {m['replacement'][:60]!r}",
                        "effect": effect(mutated)})
    if disagree:
        sys.exit(f"cargo-mutants: {len(disagree)} mutant(s) whose span and diff disagree, "
                 f"first: {disagree[0]}")
    write_effects(out_path, effects)


def utf16_cut(line, column):
    """Babel counts columns in UTF-16 code units (JavaScript string indices)."""
    units = line.encode("utf-16-le")[: 2 * column]
    return len(units.decode("utf-16-le", errors="ignore"))


# Stryker writes each replacement with Babel's printer, which drops redundant parentheses and
# carries a trailing comment into the replacement, so some of its mutants differ from the same
# edit made in place by more than whitespace. A second, looser figure compares syntax trees:
# each mutated file parsed and printed again by Babel (Stryker's own), comments left out.
BABEL_CANON = r"""
const { parse } = require("@babel/parser");
const generate = require("@babel/generator").default;
let input = "";
process.stdin.on("data", (d) => (input += d)).on("end", () => {
  const out = JSON.parse(input).map(([file, text]) => {
    const plugins = /\.tsx$/.test(file) ? ["typescript", "jsx"]
      : /\.[cm]?ts$/.test(file) ? ["typescript"] : ["jsx"];
    try {
      const ast = parse(text, { sourceType: "unambiguous", plugins });
      return generate(ast, { comments: false, compact: true }).code;
    } catch (e) {
      return null;
    }
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def stryker_modules():
    return os.environ.get("STRYKER_MODULES", os.path.expanduser(
        "~/.cache/gatekit/bench-suggest/stryker/node_modules"))


def syntax_keys(pairs):
    """[(file, text)] -> the effect of each text as Babel prints it again (None: no parse)."""
    modules = stryker_modules()
    r = subprocess.run(["node", "-e", BABEL_CANON], input=json.dumps(pairs), text=True,
                       capture_output=True, env=dict(os.environ, NODE_PATH=modules), check=True)
    return [effect(code) if code is not None else None for code in json.loads(r.stdout)]


def peer_stryker(report, repo, out_path):
    effects, texts = [], []
    for path, entry in json.load(open(report))["files"].items():
        rel = os.path.relpath(path, repo) if os.path.isabs(path) else path
        text = read(repo, rel)
        for m in entry["mutants"]:
            mutated, was, cut = span_swap(text, m["location"], m["replacement"], utf16_cut)
            texts.append((rel, mutated))
            effects.append({"file": rel, "line": m["location"]["start"]["line"],
                            "last": m["location"]["end"]["line"],
                            "what": m["mutatorName"], "cut": cut,
                            "text": f"{was[:60]!r} -> {m['replacement'][:60]!r}",
                            "effect": effect(mutated)})
    for e, key in zip(effects, syntax_keys(texts) if texts else []):
        e["syntax"] = key
    write_effects(out_path, effects)


TSCONFIG = {
    "compilerOptions": {
        "strict": True, "target": "es2022", "lib": ["es2022", "dom"], "module": "esnext",
        "moduleResolution": "bundler", "skipLibCheck": True, "noEmit": True, "types": ["node"],
        "typeRoots": [os.path.join(stryker_modules(), "@types")]},
    "include": ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"],
    "exclude": ["**/__tests__/**", "**/*.test.*", "**/*.spec.*", "node_modules", "build", "dist"],
}


def build_check(repo, kind, proposals, sample, timeout):
    """Writes each mutated file ({"file", "mutated", "kind", "what"}) into a scratch copy of
    repo in turn and runs the language's build there. Returns (built, tried, note,
    {kind: [what did not build]}); tried is 0 with a note when the baseline does not build."""
    if not proposals:
        return 0, 0, "no proposals", {}
    scratch = tempfile.mkdtemp(prefix="bench-suggest-build.")
    try:
        copy = os.path.join(scratch, "tree")
        shutil.copytree(repo, copy, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "target", "mutants", "reports",
                                                      ".stryker-tmp"))
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(scratch, "target"))

        def build(file):
            cmd = {"rust": ["cargo", "check", "--quiet", "--offline"],
                   "javascript": ["node", "--check", file],
                   "typescript": ["tsc", "--noEmit", "-p", "."],
                   "python": [sys.executable, "-m", "py_compile", file],
                   "go": ["go", "build", "./..."]}[kind]
            try:
                r = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return False
            return r.returncode == 0

        if kind == "rust":
            subprocess.run(["cargo", "fetch", "--quiet"], cwd=copy, env=env, capture_output=True)
        if kind == "typescript" and not os.path.exists(os.path.join(copy, "tsconfig.json")):
            # Registry packages rarely ship their tsconfig: a strict one for the sources alone
            # (tests left out: their runners' types are not installed here).
            with open(os.path.join(copy, "tsconfig.json"), "w") as f:
                json.dump(TSCONFIG, f)
        files = sorted({p["file"] for p in proposals})
        if not all(build(f) for f in files):
            return 0, 0, "the unmutated tree does not build here: not measured", {}
        picked = proposals
        if sample and len(proposals) > sample:
            picked = random.Random(29).sample(proposals, sample)
        built, unbuilt = 0, {}
        for p in picked:
            if p["mutated"] is None:
                unbuilt.setdefault(p["kind"], []).append(p["what"] + " (anchor not unique)")
                continue
            path = os.path.join(copy, p["file"])
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(p["mutated"])
            if build(p["file"]):
                built += 1
            else:
                unbuilt.setdefault(p["kind"], []).append(p["what"])
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        note = f"a sample of {len(picked)} of {len(proposals)}" if picked is not proposals else ""
        return built, len(picked), note, unbuilt
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compare(row_path, suggest_path, repo, peer_path, build_kind, label, peer, sample, timeout):
    with open(suggest_path) as f:
        suggest = json.load(f)
    if suggest.get("version") != 1 or not isinstance(suggest.get("mutants"), list):
        sys.exit(f"{suggest_path}: not the suggest --json shape (version 1 with mutants)")
    peer_effects = json.load(open(peer_path)) if peer_path != "-" else None
    texts, proposals, controls, not_unique = {}, [], 0, []
    keys, mutated_texts = {}, []
    for m in suggest["mutants"]:
        if m["file"] not in texts:
            texts[m["file"]] = read(repo, m["file"])
        text = texts[m["file"]]
        count = text.count(m["anchor"]) if m["anchor"] else 0
        if count != 1:
            not_unique.append(f"{m['file']}:{m['line']}: anchor occurs {count} times")
        if m.get("operator") == "control":
            controls += 1
            continue
        mutated = text.replace(m["anchor"], m["replace"], 1)
        # A proposal whose anchor does not occur exactly once cannot be applied: it never builds.
        proposals.append({"file": m["file"], "mutated": mutated if count == 1 else None,
                          "kind": m.get("operator", "?"),
                          "what": f"{m['file']}:{m['line']} {m['description']}"})
        keys.setdefault((m["file"], effect(mutated)), []).append(m)
        mutated_texts.append((m["file"], mutated))
    row = {"label": label, "peer": peer, "proposals": len(proposals), "controls": controls,
           "anchors": len(suggest["mutants"]), "not_unique": len(not_unique),
           "skipped_files": [f"{f['file']}: {f['skipped']}" for f in suggest.get("files", [])
                             if f.get("skipped")],
           "dropped": suggest.get("counts", {}).get("dropped", 0)}
    if peer_effects is not None:
        matched, missed, off_added = 0, {}, 0
        peer_keys = set()
        added = {f: set(ls) for f, ls in changed_lines(repo).items()}
        for e in peer_effects:
            peer_keys.add((e["file"], e["effect"]))
            if (e["file"], e["effect"]) in keys:
                matched += 1
                continue
            missed.setdefault(e["what"], []).append(f"{e['file']}:{e['line']} {e['text']}")
            # gatekit's scope is the lines the change adds; a peer may also count a line next
            # to a deletion (cargo-mutants' --in-diff does).
            span = range(e["line"], e.get("last", e["line"]) + 1)
            off_added += not any(n in added.get(e["file"], ()) for n in span)
        row["missed_off_added_lines"] = off_added
        row["peer_mutants"] = len(peer_effects)
        row["matched"] = matched
        row["lacks"] = sum(len(ms) for k, ms in keys.items() if k not in peer_keys)
        row["missed_by_kind"] = {k: len(v) for k, v in sorted(missed.items(),
                                                              key=lambda kv: -len(kv[1]))}
        row["missed_examples"] = {k: v[:3] for k, v in missed.items()}
        if peer_effects and "syntax" in peer_effects[0]:
            # A text Babel cannot parse has no key and matches nothing.
            ours = {(f, k) for (f, _), k in zip(mutated_texts, syntax_keys(mutated_texts)) if k}
            row["matched_syntax"] = sum(bool(e["syntax"]) and (e["file"], e["syntax"]) in ours
                                        for e in peer_effects)
    if build_kind == "-":
        row["build"] = None
    else:
        t0 = time.monotonic()
        built, tried, note, unbuilt = build_check(repo, build_kind, proposals, sample, timeout)
        row["build"] = {"kind": build_kind, "built": built, "tried": tried, "note": note,
                        "seconds": round(time.monotonic() - t0, 1), "unbuilt": unbuilt}
        if peer_effects and "cut" in peer_effects[0] and os.environ.get("PEER_BUILD") == "1":
            # The same build of the peer's own mutants: what share of a peer's mutants build is
            # the yardstick for gatekit's.
            items = []
            for e in peer_effects:
                a, b, replacement = e["cut"]
                text = texts.get(e["file"]) or read(repo, e["file"])
                items.append({"file": e["file"], "mutated": text[:a] + replacement + text[b:],
                              "kind": e["what"], "what": f"{e['file']}:{e['line']} {e['text']}"})
            built, tried, note, unbuilt = build_check(repo, build_kind, items, sample, timeout)
            row["peer_build"] = {"built": built, "tried": tried, "note": note}
    for line in not_unique[:10]:
        print(f"  not unique: {line}", file=sys.stderr)
    with open(row_path, "w") as f:
        json.dump(row, f, indent=1)


def pct(a, b):
    """A share to one decimal, so 479 of 480 never reads as 100%."""
    return f"{100 * a / b:.1f}%" if b else "–"


def table(rows):
    goals = {"cargo-mutants": 90, "Stryker": 80}
    print(f"{'project':44} {'peer':14} {'peer mutants':>12} {'recall':>7} {'goal':>5} "
          f"{'gatekit':>8} {'peer lacks':>10} {'anchors unique':>15} {'builds':>16}")
    met = True
    for r in rows:
        if "unmeasured" in r:
            print(f"{r['label']:44} {r['peer']:14} not measured: {r['unmeasured']}")
            continue
        if "peer_mutants" in r:
            recall = pct(r["matched"], r["peer_mutants"])
            goal = goals.get(r["peer"])
            if goal and r["peer_mutants"] and 100 * r["matched"] / r["peer_mutants"] < goal:
                met = False
            peer_n, lacks = str(r["peer_mutants"]), str(r["lacks"])
        else:
            recall, goal, peer_n, lacks = "–", None, "not measured", "–"
        unique = f"{r['anchors'] - r['not_unique']}/{r['anchors']}"
        met &= r["not_unique"] == 0
        b = r.get("build")
        if b and b["tried"]:
            builds = f"{b['built']}/{b['tried']} {pct(b['built'], b['tried'])}"
            met &= b["built"] * 10 >= b["tried"] * 9
        else:
            builds = "not measured" if b is None else b["note"]
        print(f"{r['label']:44} {r['peer']:14} {peer_n:>12} {recall:>7} "
              f"{(str(goal) + '%') if goal else '–':>5} {r['proposals']:>8} {lacks:>10} "
              f"{unique:>15} {builds:>16}")
    for r in rows:
        if r.get("missed_by_kind"):
            kinds = ", ".join(f"{k} {n}" for k, n in list(r["missed_by_kind"].items())[:8])
            print(f"  {r['label']}: the peer's mutants gatekit has not, by kind: {kinds}")
        if r.get("missed_off_added_lines"):
            n = r["missed_off_added_lines"]
            print(f"  {r['label']}: {n} of the peer's mutants gatekit has not touch no line the "
                  f"change adds (a deletion's neighbours): recall on added lines "
                  f"{pct(r['matched'], r['peer_mutants'] - n)}")
        if "matched_syntax" in r:
            print(f"  {r['label']}: recall with syntax trees compared (Babel prints both again, "
                  f"comments and redundant parentheses aside): "
                  f"{pct(r['matched_syntax'], r['peer_mutants'])}")
        if r.get("build") and r["build"].get("note") and r["build"]["tried"]:
            print(f"  {r['label']}: builds measured on {r['build']['note']} "
                  f"({r['build']['seconds']} s)")
        if r.get("peer_build") and r["peer_build"]["tried"]:
            pb = r["peer_build"]
            print(f"  {r['label']}: the peer's own mutants that build, same check: "
                  f"{pb['built']}/{pb['tried']} {pct(pb['built'], pb['tried'])} {pb['note']}")
        for op, what in (r.get("build") or {}).get("unbuilt", {}).items():
            print(f"  {r['label']}: {len(what)} {op} proposal(s) do not build, e.g. {what[0]}")
        skipped = r.get("skipped_files", [])
        other = [s for s in skipped if not s.endswith(": not a source file of a known language")]
        for s in other:
            print(f"  {r['label']}: skipped {s}")
        if len(skipped) > len(other):
            print(f"  {r['label']}: {len(skipped) - len(other)} changed file(s) of no known "
                  "language (docs, manifests) skipped")
        if r.get("dropped"):
            print(f"  {r['label']}: {r['dropped']} proposal(s) dropped (no clean reparse)")
    verdict = f"{'met' if met else 'NOT met'} on the rows measured"
    if any("HAND-MADE" in r["label"] for r in rows):
        verdict = "not judged: gatekit's proposals were read from a hand-made file"
    print("goals (recall >= 90% of cargo-mutants', >= 80% of Stryker's; >= 90% build; "
          f"every anchor unique): {verdict}")


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "changed":
        print(json.dumps(changed_lines(args[0])))
    elif cmd == "stryker-ranges":
        print(stryker_ranges(json.load(open(args[0]))))
    elif cmd == "peer-cargo-mutants":
        peer_cargo_mutants(*args)
    elif cmd == "peer-stryker":
        peer_stryker(*args)
    elif cmd == "compare":
        row, suggest, repo, peer_path, kind, label, peer = args[:7]
        sample = int(os.environ.get("BUILD_SAMPLE", "0"))
        timeout = int(os.environ.get("BUILD_TIMEOUT", "300"))
        compare(row, suggest, repo, peer_path, kind, label, peer, sample, timeout)
    elif cmd == "table":
        table([json.load(open(p)) for p in args])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
