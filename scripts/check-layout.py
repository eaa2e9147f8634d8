#!/usr/bin/env python3
"""The house rules on layout that a reviewer checks by eye, checked on every CI run (DESIGN.md,
"House rules"): no Rust source file of 600 lines or more, and no two source files of one crate
that import each other (`use crate::a`, `super::a`, or a path through them, doc links included:
a reader cannot learn one without the other). A `#[cfg(test)] mod tests` block at the end of a
file is left out; tests may reach anywhere in their crate.

And no print in run, session, search or driver code (the folders and files of `QUIET`): that
code says what happens as typed values, which its tool's renderer words and `cmdline`'s output
seam (`cmdline::output::Reporter`) writes, so a print there (`println!`, `eprintln!`, `print!`,
`eprint!`, `dbg!`, `errln!`, `outln!`, `std::io::stdout()`/`stderr()`, `exit::print`/`show`)
is a finding. `format!` is not: an error's message, a log's file name and a record's note are
values, and a value is not output; what reaches a person passes the reporter either way.

    python3 scripts/check-layout.py [ROOT]

Prints each finding on one line and exits 1 when there is any, else 0."""
import os
import re
import sys

MAX_LINES = 600
SKIP = {"target", ".git", "node_modules"}

# Run, session, search and driver code: it prints nothing itself (see the opening). A folder
# holds everything under it; a `render.rs` or a `render/` folder inside one is where the words
# are, and is left out.
QUIET = [
    "mutants/src/session",
    "mutants/src/run",
    "mutants/src/suggest",
    "mutants/src/checkout.rs",
    "gate/src/run",
    "gate/src/prepare.rs",
    "gate/src/suite.rs",
    "gate/src/canary.rs",
    "gate/src/commands/run.rs",
    "probe/src/bracket",
    "probe/src/clients",
    "probe/src/check.rs",
]

# Paths of QUIET whose prints are allowed for now, while they move onto the seam (each must also
# be in QUIET). Empty: every run, session, search and driver module is on it.
NOT_YET = []

PRINTS = re.compile(
    r"\b(?:println|print|eprintln|eprint|dbg|errln|outln)!"
    r"|\b(?:std::)?io::(?:stdout|stderr)\(\)|\bstd(?:out|err)\(\)"
    r"|\bexit::(?:print|print_bytes|show)\b"
)


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
        # A path is read from the module it is written in, whatever file holds that module:
        # in `a/b.rs` (module `a::b`) `self::x` is `a::b::x` and `super::x` is `a::x`.
        base = me.split("::") if me else []
        while parts and parts[0] == "super":
            base, parts = base[:-1], parts[1:]
        if parts and parts[0] == "self":
            parts = parts[1:]
    for i in range(len(parts), 0, -1):
        candidate = "::".join(base + parts[:i])
        if candidate in mods:
            return candidate
    return None


def expand(tree):
    """The paths one `use` tree names, braces expanded: `super::{a, b::{c, d}}` is `super::a`,
    `super::b::c` and `super::b::d`."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    start = tree.find("{")
    if start < 0:
        return [tree] if tree else []
    prefix, depth, items, item = tree[:start], 0, [], ""
    for ch in tree[start + 1:]:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(item)
            item = ""
        else:
            item += ch
    items.append(item)
    paths = []
    for it in items:
        if it == "self":
            paths.append(prefix.rstrip(":"))
        elif it:
            paths.extend(expand(prefix + it))
    return paths


def paths_in(text):
    """Every `crate::`, `super::` or `self::` path in a file: `use` trees expanded, then the
    paths written out in code and doc links."""
    found = []
    for tree in re.findall(r"\buse\s+((?:crate|super|self)::[^;]*);", text):
        found.extend(expand(tree))
    text = re.sub(r"\buse\s+(?:crate|super|self)::[^;]*;", "", text)
    found.extend(re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text))
    return found


def code_only(text):
    """`text` with its comments and string and character literals blanked (line breaks kept,
    so line numbers hold): a print named in a doc comment or a message is not a print."""
    out, i, n = [], 0, len(text)
    blank = lambda piece: re.sub(r"[^\n]", " ", piece)
    while i < n:
        rest = text[i:]
        m = (re.match(r"//[^\n]*", rest) or re.match(r"(?s)/\*.*?\*/", rest)
             or re.match(r'(?s)b?r(#*)".*?"\1', rest) or re.match(r'(?s)b?"(?:\\.|[^"\\])*"', rest)
             or re.match(r"b?'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^'\\\n])'", rest))
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(blank(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def quiet(rel):
    """Whether the file at `rel` (relative to the root, `/`-separated) is run, session, search
    or driver code that must not print, and is checked now."""
    parts = rel.split("/")
    if parts[-1] == "render.rs" or "render" in parts[:-1]:
        return False
    listed = any(rel == q or rel.startswith(q + "/") for q in QUIET)
    return listed and rel not in NOT_YET


def prints(root, path, text):
    """A finding for each print in `text` (the file at `path`), tests left out."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if not quiet(rel):
        return []
    code = code_only(re.sub(r"(?s)#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text))
    found = []
    for m in PRINTS.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        found.append(f"{rel}:{line}: `{m.group(0)}` in run/session/driver code: hand it to the "
                     "tool's cmdline::Reporter as a typed event")
    return found


def main(root):
    findings = []
    if os.path.isfile(os.path.join(root, "Cargo.toml")):
        # In the workspace, every path the lists name exists: a moved folder is not unchecked.
        for q in QUIET + NOT_YET:
            if not os.path.exists(os.path.join(root, q)):
                findings.append(f"{q}: named in check-layout.py's QUIET or NOT_YET, but not there")
        for q in NOT_YET:
            if q not in QUIET:
                findings.append(f"{q}: in NOT_YET but not in QUIET")
    for crate, src in crates(root):
        mods = modules(src)
        imports = {}
        for me, path in mods.items():
            text = open(path, encoding="utf-8").read()
            findings.extend(prints(root, path, text))
            lines = text.count("\n")
            if lines >= MAX_LINES:
                findings.append(f"{os.path.relpath(path, root)}: {lines} lines (at most {MAX_LINES - 1})")
            text = re.sub(r"(?s)#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text)
            targets = set()
            for p in paths_in(text):
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
