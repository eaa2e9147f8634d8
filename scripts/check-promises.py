#!/usr/bin/env python3
"""The book's promises page checked against gatekit's own mutants, on every CI run:

- every table of `docs/book/src/promises.md` is `| promise | tests | mutants |`;
- every row's mutants cell names at least one `[[mutant]]` of `mutants.toml`, each by its
  `name` in backticks, or says `none: REASON` (a promise held by a benchmark's self-test, or by
  a test no suite of mutants.toml runs);
- every name the page gives is a mutant of `mutants.toml` that expects a kill (a control, which
  the suite must not notice, breaks no promise).

    python3 scripts/check-promises.py [ROOT]

Prints each finding on one line (FILE:LINE: what is wrong) and exits 1 when there is any, else
0. A page or spec that cannot be read is one finding, exit 1."""
import os
import re
import sys
import tomllib

PAGE = os.path.join("docs", "book", "src", "promises.md")
SPEC = "mutants.toml"
HEADER = ["promise", "tests", "mutants"]


def cells(line):
    """The cells of a table line, split on `|` that Markdown does not escape (`\\|`)."""
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def is_rule(line):
    """The `|---|---|` line under a table's header."""
    return re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()) is not None


def tables(lines):
    """(line number of the header, its cells, [(line number, cells)] of its rows) per table."""
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("|") and n + 1 < len(lines) and is_rule(lines[n + 1]):
            header = (n + 1, cells(line))
            rows = []
            n += 2
            while n < len(lines) and lines[n].startswith("|"):
                rows.append((n + 1, cells(lines[n])))
                n += 1
            yield header[0], header[1], rows
        else:
            n += 1


def spec_mutants(path):
    """{name: expects a kill} for every [[mutant]] of the spec."""
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    out = {}
    for m in spec.get("mutant", []):
        if isinstance(m, dict) and isinstance(m.get("name"), str):
            out[m["name"]] = m.get("expect", "kill") != "survive"
    return out


def check_row(cell, known):
    """What is wrong with one row's mutants cell (empty: nothing)."""
    if cell.startswith("none:"):
        if not cell[len("none:"):].strip():
            return ["says none: without a reason"]
        return []
    names = re.findall(r"`([^`]+)`", cell)
    if not names:
        return ["names no mutant and does not say none: REASON"]
    wrong = []
    for name in names:
        if name not in known:
            wrong.append(f"names `{name}`, which is no [[mutant]] of {SPEC}")
        elif not known[name]:
            wrong.append(f"names `{name}`, a control (expect = \"survive\"), which breaks no promise")
    return wrong


def main(root):
    page = os.path.join(root, PAGE)
    try:
        with open(page, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        print(f"{PAGE}: cannot be read: {e.strerror}")
        return 1
    try:
        known = spec_mutants(os.path.join(root, SPEC))
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"{SPEC}: cannot be read: {e}")
        return 1
    findings = []
    found = 0
    for at, header, rows in tables(lines):
        found += 1
        if [h.lower() for h in header] != HEADER:
            findings.append(
                f"{PAGE}:{at}: the table's columns are {' | '.join(header)}, not "
                f"{' | '.join(HEADER)}"
            )
            continue
        for n, row in rows:
            if len(row) != len(HEADER):
                findings.append(f"{PAGE}:{n}: the row has {len(row)} cells, not {len(HEADER)}")
                continue
            findings.extend(f"{PAGE}:{n}: the row {why}" for why in check_row(row[2], known))
    if found == 0:
        findings.append(f"{PAGE}: no promise table")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
