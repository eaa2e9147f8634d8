//! The families every language shares, checked side by side: bitwise operators, boolean
//! literals, negated conditions and the one-per-line pick on a line holding several.

use super::{all, expect, lines, proposals};
use crate::Operator::*;

#[test]
fn bitwise_operators_in_every_language() {
    let rust = "fn f(a: u8, b: u8) -> u8 {\n    (a & b) << 2\n}\n";
    let p = all("src/b.rs", rust);
    expect(&p, rust, Bitwise, "a & b", "a | b");
    expect(&p, rust, Bitwise, "a & b", "a ^ b");
    expect(&p, rust, Bitwise, "<< 2", ">> 2");
    let js = "const m = (a | b) >> 1;\n";
    let p = all("src/b.js", js);
    expect(&p, js, Bitwise, "a | b", "a & b");
    expect(&p, js, Bitwise, ">> 1", "<< 1");
    let py = "m = (a ^ b) & 0xff\n";
    let p = all("b.py", py);
    expect(&p, py, Bitwise, "a ^ b", "a & b");
    expect(&p, py, Bitwise, "& 0xff", "| 0xff");
    let go = "package b\n\nfunc f(a, b uint) uint { return a &^ b }\n";
    let p = all("b.go", go);
    expect(&p, go, Bitwise, "a &^ b", "a & b");
}

#[test]
fn boolean_literals_in_every_language() {
    let rust = "fn f() -> bool {\n    let on = true;\n    on\n}\n";
    expect(
        &all("src/t.rs", rust),
        rust,
        Boolean,
        "on = true",
        "on = false",
    );
    let ts = "export const on: boolean = false;\n";
    expect(&all("src/t.ts", ts), ts, Boolean, "= false", "= true");
    let py = "on = True\n";
    expect(&all("t.py", py), py, Boolean, "True", "False");
    let go = "package t\n\nvar on = true\n";
    expect(&all("t.go", go), go, Boolean, "true", "false");
}

#[test]
fn one_per_line_picks_the_condition_over_arithmetic_and_constants() {
    for (path, src, line, want) in [
        (
            "src/o.rs",
            "fn f(a: u8) -> u8 {\n    let x = 1;\n    if a + 1 > 2 { return 0; }\n    x\n}\n",
            3,
            "a + 1 >= 2",
        ),
        (
            "src/o.ts",
            "let x = 1;\nif (a + 1 > 2) { g(); }\n",
            2,
            "a + 1 >= 2",
        ),
        ("o.py", "x = 1\nif a + 1 > 2:\n    g()\n", 2, "a + 1 >= 2"),
        (
            "o.go",
            "package o\n\nfunc f(a int) {\n\tif a+1 > 2 {\n\t\tg()\n\t}\n}\n",
            4,
            "a+1 >= 2",
        ),
    ] {
        let p = proposals(path, src, &lines(&[line]), false);
        let on_line: Vec<_> = p.mutants.iter().filter(|m| m.line == line).collect();
        assert_eq!(on_line.len(), 1, "{path}: {}", super::listing(&p));
        assert_eq!(
            on_line[0].operator,
            Boundary,
            "{path}: {}",
            super::listing(&p)
        );
        assert!(
            super::mutated(src, on_line[0]).contains(want),
            "{path}: {}",
            super::listing(&p)
        );
    }
}
