#!/usr/bin/env python3
"""DESIGN.md checked against the tree, both ways, on every CI run:

- every path DESIGN.md names exists: the file map's lines (`crate/` headers at the margin, then
  `  src/...` lines relative to them, brace forms such as `src/{a,b}.rs` expanded) and every path
  written in backticks in its prose (`report/src/xml.rs`);
- every Rust source file under a crate's `src/` is named by a line of the file map.

    python3 scripts/check-design.py [ROOT]

Prints each finding on one line and exits 1 when there is any, else 0."""
import os
import re
import sys

SKIP = {"target", ".git", "node_modules"}


def expand(path):
    """`src/{a,b}/c.rs` to `src/a/c.rs` and `src/b/c.rs` (nested and repeated braces too)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand(path[: m.start()] + alt.strip() + path[m.end():]))
    return out


def file_map(text):
    """The file map: the first fenced block after the heading 'Where each piece lives'."""
    m = re.search(r"^## Where each piece lives\n(.*?)^```\n(.*?)^```", text, re.S | re.M)
    return m.group(2) if m else ""


def mapped_paths(block):
    """(line number in the block, path from the root) for every path the map names."""
    crate = None
    for n, line in enumerate(block.splitlines(), 1):
        head = re.match(r"^([\w.-]+/)(?:\s|$)", line)
        if head:
            crate = head.group(1)
            yield n, crate
            continue
        entry = re.match(r"^\s+(src/\S+|tests/\S+|benches/\S+|build\.rs)(?:\s|$)", line)
        if entry and crate:
            for p in expand(entry.group(1)):
                yield n, crate + p


def prose_paths(root, text):
    """Paths in backticks outside the file map that start at a folder of the repository
    (`report/src/xml.rs`); a placeholder in capitals (`probe/src/presets/NAME.rs`) is a pattern,
    not a path, and is left alone."""
    for m in re.finditer(r"`([\w.-]+(?:/[\w.{},-]+)+/?)`", text):
        raw = m.group(1)
        first = raw.split("/")[0]
        if first in SKIP or not os.path.isdir(os.path.join(root, first)):
            continue
        if re.search(r"(^|/)[A-Z]{3,}(\.|/|$)", raw):
            continue
        yield raw


def main(root):
    text = open(os.path.join(root, "DESIGN.md"), encoding="utf-8").read()
    findings = []
    block = file_map(text)
    if not block:
        findings.append("DESIGN.md: no file map under 'Where each piece lives'")
    named = set()
    for n, path in mapped_paths(block):
        full = os.path.join(root, path)
        if not os.path.exists(full):
            findings.append(f"DESIGN.md: the file map names {path}, which does not exist")
        named.add(path.rstrip("/"))
    outside = text.replace(block, "")
    for raw in prose_paths(root, outside):
        for path in expand(raw):
            if not os.path.exists(os.path.join(root, path)):
                findings.append(f"DESIGN.md: `{raw}` names {path}, which does not exist")
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if crate in SKIP or not os.path.isdir(src):
            continue
        for folder, dirs, files in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d not in SKIP)
            for f in sorted(files):
                if f.endswith(".rs"):
                    rel = os.path.relpath(os.path.join(folder, f), root)
                    if rel not in named:
                        findings.append(f"DESIGN.md: {rel} is in no line of the file map")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
