#!/usr/bin/env python3
"""mutmut's own mutants of the changed lines, as effects (for scripts/bench-suggest.sh).

  PYTHON-WITH-MUTMUT bench_suggest_mutmut.py REPO CHANGED_JSON OUT

Runs inside an environment where mutmut 3 is installed. mutmut 3 writes every mutant of a file
into one trampolined copy under `mutants/`, so its mutants cannot be read back one file at a
time; this asks mutmut's own generator (`create_mutations`, what `mutmut run` calls) for them,
with mutmut's own line filter (the lines coverage would give it: here, the lines the change
adds), and keeps those mutmut would apply (inside a function or method: mutmut does not mutate
module-level code). Each mutant's effect is the file with that one node swapped, rendered by
libcst as mutmut renders it, then normalized by bench_suggest_compare.effect like every peer's.
"""

import json
import os
import sys
import tempfile

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import create_mutations, deep_replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_suggest_compare import WHITESPACE, effect, is_test_path  # noqa: E402


def swapped(module, flat, m):
    """The file with mutation m applied, whitespace removed (all an effect keeps); None if it
    changes nothing. Rendering the whole module once per mutant takes seconds on a large file,
    so only the enclosing function is re-rendered and swapped into the flattened file, which is
    the same text once whitespace is gone; where that function's text is not unique in the file,
    the whole module is rendered as mutmut would."""
    top = m.contained_by_top_level_function
    before = WHITESPACE.sub("", module.code_for_node(top))
    after = WHITESPACE.sub("", module.code_for_node(deep_replace(top, m.original_node,
                                                                 m.mutated_node)))
    if before == after:
        return None
    if flat.count(before) == 1:
        return flat.replace(before, after, 1)
    return WHITESPACE.sub("", deep_replace(module, m.original_node, m.mutated_node).code)


def main(repo, changed_path, out_path):
    repo = os.path.abspath(repo)
    changed = json.load(open(changed_path))
    # mutmut reads its settings from the folder it runs in; a project without a [mutmut]
    # section gets the one a user would write, naming the folders of the changed files.
    sources = {rel: lines for rel, lines in changed.items()
               if rel.endswith(".py") and not is_test_path(rel)}
    folders = sorted({rel.split("/")[0] for rel in sources})
    os.chdir(tempfile.mkdtemp(prefix="bench-suggest-mutmut."))
    with open("setup.cfg", "w") as f:
        f.write("[mutmut]\nsource_paths=" + ",".join(folders) + "\n")
    effects = []
    for rel, lines in sorted(sources.items()):
        if not os.path.exists(os.path.join(repo, rel)):
            continue
        with open(os.path.join(repo, rel), encoding="utf-8") as f:
            code = f.read()
        try:
            module, mutations, _, _ = create_mutations(rel, code, covered_lines=set(lines))
        except cst.ParserSyntaxError as e:
            print(f"mutmut: {rel}: does not parse for libcst ({e}); left out", file=sys.stderr)
            continue
        flat = WHITESPACE.sub("", code)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        for m in mutations:
            if m.contained_by_top_level_function is None:
                continue
            mutated = swapped(module, flat, m)
            if mutated is None:
                continue
            pos = positions.get(m.original_node)
            before = module.code_for_node(m.original_node)
            after = module.code_for_node(m.mutated_node) if isinstance(
                m.mutated_node, cst.CSTNode) else "(removed)"
            effects.append({"file": rel, "line": pos.start.line if pos else 0,
                            "what": type(m.original_node).__name__,
                            "text": f"{before[:60]!r} -> {after[:60]!r}",
                            "effect": effect(mutated)})
    with open(out_path, "w") as f:
        json.dump(effects, f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
