//! Unit tests: each language's operator families on small real snippets, the per-file checks,
//! anchors, reparses, controls, one-per-line order, and hostile input.

mod checks;
mod engine;
mod families;
mod go;
mod hostile;
mod python;
mod rust;
mod script;

use std::collections::BTreeSet;

use crate::{propose, Language, Operator, Options, Outcome, Proposal, Proposals, Scope};

/// Every proposal for the whole file.
pub(super) fn all(path: &str, src: &str) -> Proposals {
    proposals(path, src, &Scope::Whole, true)
}

pub(super) fn proposals(path: &str, src: &str, scope: &Scope, all: bool) -> Proposals {
    match propose(path, src.as_bytes(), scope, &Options { all }) {
        Outcome::Proposed(p) => {
            invariants(path, src, &p);
            p
        }
        Outcome::Skipped(skip) => panic!("{path} skipped: {skip}"),
    }
}

pub(super) fn lines(lines: &[usize]) -> Scope {
    Scope::Lines(lines.iter().copied().collect::<BTreeSet<_>>())
}

/// The file after a proposal's swap.
pub(super) fn mutated(src: &str, p: &Proposal) -> String {
    src.replacen(&p.anchor, &p.replace, 1)
}

/// What every proposal promises: its anchor occurs exactly once, its swap changes the file,
/// and the mutated file parses clean.
fn invariants(path: &str, src: &str, p: &Proposals) {
    for m in p.mutants.iter().chain(p.control.iter()) {
        assert_eq!(
            src.matches(&m.anchor).count(),
            1,
            "anchor not unique: {m:?}"
        );
        assert!(
            crate::anchor::unique(src, &m.anchor),
            "anchor overlaps itself: {m:?}"
        );
        assert_ne!(m.anchor, m.replace, "{m:?}");
        let after = mutated(src, m);
        assert!(
            parses(p.language, &after),
            "{path}: mutated file does not parse: {m:?}\n{after}"
        );
        // The line named is one the anchor covers.
        let first = src[..src.find(&m.anchor).unwrap()].matches('\n').count() + 1;
        let last = first + m.anchor.matches('\n').count();
        assert!((first..=last).contains(&m.line), "{m:?}");
    }
    let c = p.control.as_ref();
    assert!(c.is_none_or(|c| c.operator == Operator::Control));
}

pub(super) fn parses(language: Language, text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).unwrap();
    let tree = parser.parse(text, None).unwrap();
    !tree.root_node().has_error()
}

/// Asserts that some proposal of `operator` turns the file into the file with `from` (which
/// occurs once) replaced by `to`: the exact mutation, whatever anchor carries it.
#[track_caller]
pub(super) fn expect(p: &Proposals, src: &str, operator: Operator, from: &str, to: &str) {
    assert_eq!(
        src.matches(from).count(),
        1,
        "test snippet: `{from}` must occur once"
    );
    let wanted = src.replacen(from, to, 1);
    let found = p
        .mutants
        .iter()
        .any(|m| m.operator == operator && mutated(src, m) == wanted);
    assert!(
        found,
        "no {} mutant turns `{from}` into `{to}`; got:\n{}",
        operator.name(),
        listing(p)
    );
}

/// Asserts that no proposal changes the text `within` (which occurs once).
#[track_caller]
pub(super) fn untouched(p: &Proposals, src: &str, within: &str) {
    let at = src.find(within).expect("snippet holds the text");
    let range = at..at + within.len();
    for m in &p.mutants {
        let start = src.find(&m.anchor).unwrap();
        let before = mutated(src, m);
        // The changed bytes: the common prefix and suffix of the two files bound them.
        let prefix = src
            .bytes()
            .zip(before.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let suffix = src
            .bytes()
            .rev()
            .zip(before.bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let changed = prefix.min(src.len() - suffix)..(src.len() - suffix).max(prefix);
        let inside = changed.start >= range.start && changed.end <= range.end;
        assert!(
            !inside,
            "mutant inside `{within}` (anchor at {start}): {m:?}"
        );
    }
}

pub(super) fn listing(p: &Proposals) -> String {
    p.mutants
        .iter()
        .map(|m| {
            format!(
                "  {} {} {:?} -> {:?}\n",
                m.line,
                m.operator.name(),
                m.anchor,
                m.replace
            )
        })
        .collect()
}
