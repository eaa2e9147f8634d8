#!/usr/bin/env python3
"""The house rules on layout that a reviewer checks by eye, checked on every CI run (DESIGN.md,
"House rules"): no Rust source file of 600 lines or more, and no two source files of one crate
that import each other (`use crate::a`, `super::a`, or a path through them, doc links included:
a reader cannot learn one without the other). A `#[cfg(test)] mod tests` block at the end of a
file is left out; tests may reach anywhere in their crate.

    python3 scripts/check-layout.py [ROOT]

Prints each finding on one line and exits 1 when there is any, else 0."""
import os
import re
import sys

MAX_LINES = 600
SKIP = {"target", ".git", "node_modules"}


def crates(root):
    for name in sorted(os.listdir(root)):
        src = os.path.join(root, name, "src")
        if name not in SKIP and os.path.isdir(src):
            yield name, src


def modules(src):
    """Module path ('' for the crate root) to file."""
    found = {}
    for folder, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for f in files:
            if f.endswith(".rs"):
                path = os.path.join(folder, f)
                parts = os.path.relpath(path, src)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                found["::".join(parts)] = path
    return found


def resolve(mods, me, path):
    """The module a `crate::`/`super::`/`self::` path lands in, or None."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    else:
        base = me.split("::") if me else []
        if not mods[me].endswith(("mod.rs", "lib.rs", "main.rs")):
            base = base[:-1]
        while parts and parts[0] == "super":
            base, parts = base[:-1], parts[1:]
        if parts and parts[0] == "self":
            parts = parts[1:]
    for i in range(len(parts), 0, -1):
        candidate = "::".join(base + parts[:i])
        if candidate in mods:
            return candidate
    return None


def main(root):
    findings = []
    for crate, src in crates(root):
        mods = modules(src)
        imports = {}
        for me, path in mods.items():
            text = open(path, encoding="utf-8").read()
            lines = text.count("\n")
            if lines >= MAX_LINES:
                findings.append(f"{os.path.relpath(path, root)}: {lines} lines (at most {MAX_LINES - 1})")
            text = re.sub(r"(?s)#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text)
            targets = set()
            for p in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text):
                t = resolve(mods, me, p)
                if t not in (None, me, ""):
                    targets.add(t)
            imports[me] = targets
        for a in sorted(imports):
            for b in sorted(imports[a]):
                if a and a < b and a in imports.get(b, ()):
                    findings.append(f"{os.path.relpath(mods[a], root)} and {os.path.relpath(mods[b], root)} import each other")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
