//! Scope, one mutant per changed line in operator order, deduplication, dropped proposals and
//! operator names.

use std::str::FromStr;

use super::{lines, proposals};
use crate::anchor::Lines;
use crate::edit::Edit;
use crate::engine::{select, Verifier};
use crate::Language;
use crate::Operator::{self, *};

const SRC: &str = "fn f(a: u32, b: u32) -> u32 {\n    let c = a + 1;\n    if a < b {\n        g(c);\n    }\n    c * 2\n}\n\nfn g(_x: u32) {}\n";

#[test]
fn one_mutant_per_changed_line_in_operator_order() {
    let p = proposals("src/f.rs", SRC, &lines(&[3]), false);
    assert_eq!(p.mutants.len(), 1, "{}", super::listing(&p));
    assert_eq!(
        (p.mutants[0].operator, p.mutants[0].replace.as_str()),
        (Boundary, "a <= b")
    );
    // Line 2 has a return value (the body holds the changed line), arithmetic and a constant.
    let p = proposals("src/f.rs", SRC, &lines(&[2]), false);
    assert_eq!(p.mutants.len(), 1);
    assert_eq!(p.mutants[0].operator, ReturnValue);
    assert_eq!(
        super::mutated(SRC, &p.mutants[0]),
        SRC.replacen(
            "let c = a + 1;\n    if a < b {\n        g(c);\n    }\n    c * 2",
            "0",
            1
        )
    );
    let p = proposals("src/f.rs", SRC, &lines(&[2, 3, 4, 6]), false);
    let ops: Vec<Operator> = p.mutants.iter().map(|m| m.operator).collect();
    assert_eq!(
        ops,
        [ReturnValue, Boundary, RemoveCall, Arithmetic],
        "{}",
        super::listing(&p)
    );
}

#[test]
fn all_gives_every_operator_on_the_changed_lines_only() {
    let p = proposals("src/f.rs", SRC, &lines(&[2]), true);
    super::expect(&p, SRC, Arithmetic, "a + 1", "a - 1");
    super::expect(&p, SRC, Arithmetic, "a + 1", "a * 1");
    super::expect(&p, SRC, Constant, "a + 1", "a + 2");
    super::expect(&p, SRC, Constant, "a + 1", "a + 0");
    assert!(
        p.mutants
            .iter()
            .all(|m| m.line == 2 || m.operator == ReturnValue),
        "{}",
        super::listing(&p)
    );
    // g's body is empty: nothing there; line 9 alone proposes nothing.
    let p = proposals("src/f.rs", SRC, &lines(&[9]), true);
    assert!(p.mutants.is_empty(), "{}", super::listing(&p));
}

#[test]
fn a_body_value_belongs_to_any_changed_line_inside_the_body() {
    let p = proposals("src/f.rs", SRC, &lines(&[6]), true);
    assert!(
        p.mutants
            .iter()
            .any(|m| m.operator == ReturnValue && m.line == 2),
        "{}",
        super::listing(&p)
    );
    let p = proposals("src/f.rs", SRC, &lines(&[1, 8]), true);
    assert!(
        !p.mutants.iter().any(|m| m.operator == ReturnValue),
        "{}",
        super::listing(&p)
    );
}

#[test]
fn the_control_prefers_a_comment_on_a_changed_line() {
    let src = "// first note\nfn f() -> u8 {\n    // second note\n    1\n}\n";
    let p = proposals("src/c.rs", src, &lines(&[4]), false);
    assert_eq!(p.control.unwrap().anchor, "// first note");
    let p = proposals("src/c.rs", src, &lines(&[3]), false);
    assert_eq!(p.control.unwrap().anchor, "// second note");
}

#[test]
fn proposals_that_would_not_parse_are_dropped_and_counted() {
    let src = "fn f(a: u32) -> u32 {\n    a + 1\n}\n";
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Language::Rust.grammar()).unwrap();
    let tree = parser.parse(src, None).unwrap();
    let lines_of = Lines::new(src);
    let plus = src.find('+').unwrap();
    let edit = |text: &str, operator| Edit {
        start: plus,
        end: plus + 1,
        text: text.to_owned(),
        operator,
        description: std::string::String::new(),
    };
    // Rust has no unary `+`: `a + + 1` does not parse, so the first choice for the line is
    // dropped and the next one is proposed instead.
    let edits = vec![edit("-", Arithmetic), edit("+ +", Boundary)];
    let mut verifier = Verifier {
        parser: &mut parser,
        tree: &tree,
        text: src,
        lines: &lines_of,
    };
    let (mutants, dropped) = select(
        &mut verifier,
        Language::Rust,
        edits.clone(),
        &lines(&[2]),
        false,
    );
    assert_eq!(dropped, 1);
    assert_eq!(mutants.len(), 1);
    assert_eq!(super::mutated(src, &mutants[0]), src.replacen('+', "-", 1));
    let (mutants, dropped) = select(&mut verifier, Language::Rust, edits, &lines(&[2]), true);
    assert_eq!((mutants.len(), dropped), (1, 1));
    // A braceless JavaScript `if` keeps a body: its call statement becomes `;`.
    let js = "if (x) go();\nfoo();\n";
    let p = proposals("a.js", js, &crate::Scope::Whole, true);
    super::expect(&p, js, RemoveCall, "if (x) go();", "if (x) ;");
}

#[test]
fn identical_proposals_are_made_once() {
    // Deleting the case's only statement is both a removed call and an emptied case body: one
    // proposal, under the operator that comes first.
    let src = "switch (v) {\n  case 1: g();\n}\n";
    let p = proposals("a.js", src, &crate::Scope::Whole, true);
    let deleted = src.replacen("g();", "", 1);
    let same: Vec<_> = p
        .mutants
        .iter()
        .filter(|m| super::mutated(src, m) == deleted)
        .collect();
    assert_eq!(same.len(), 1, "{}", super::listing(&p));
    assert_eq!(same[0].operator, RemoveCall);
}

#[test]
fn operator_names_round_trip() {
    for op in crate::operator::ALL {
        assert_eq!(Operator::from_str(op.name()), Ok(op));
    }
    assert_eq!(ReturnValue.name(), "return-value");
    assert_eq!(RemoveCall.name(), "remove-call");
    assert!(Operator::from_str("bogus")
        .unwrap_err()
        .to_string()
        .contains("boundary"));
}
