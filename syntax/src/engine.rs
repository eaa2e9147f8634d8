//! `propose`: one file's checks, one parse, the language's rules over the tree, then the
//! proposals that belong to the change, each with a unique anchor and a clean reparse.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use crate::anchor::{grow, Lines};
use crate::checks::{check, Checked};
use crate::edit::Edit;
use crate::{rules, site, Language, Options, Outcome, Proposal, Proposals, Scope};

thread_local! {
    // One parser per thread, reused for every file and every reparse.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Proposes mutants for the lines of one file a change touches.
///
/// `path` is relative to the repository root with `/`; `text` is the file as it is now. Every
/// per-file check happens here (test code, generated files, size, long lines, UTF-8, parse
/// errors): a file that fails one is [`Outcome::Skipped`] with the reason. Never panics.
pub fn propose(path: &str, text: &[u8], scope: &Scope, options: &Options) -> Outcome {
    PARSER.with(|parser| match parser.try_borrow_mut() {
        Ok(mut parser) => propose_with(&mut parser, path, text, scope, options),
        Err(_) => propose_with(&mut Parser::new(), path, text, scope, options),
    })
}

fn propose_with(
    parser: &mut Parser,
    path: &str,
    bytes: &[u8],
    scope: &Scope,
    options: &Options,
) -> Outcome {
    let checked = match check(path, bytes, parser) {
        Ok(checked) => checked,
        Err(skip) => return Outcome::Skipped(skip),
    };
    let Checked {
        language,
        text,
        tree,
    } = checked;
    let lines = Lines::new(text);
    let root = tree.root_node();
    let edits: Vec<Edit> = rules::edits(language, root, text)
        .into_iter()
        .filter(|e| {
            e.start <= e.end && text.is_char_boundary(e.start) && text.is_char_boundary(e.end)
        })
        .collect();
    let mut verifier = Verifier {
        parser,
        tree: &tree,
        text,
        lines: &lines,
    };
    let (mutants, dropped) = select(&mut verifier, language, edits, scope, options.all);
    let control = crate::control::control(language, root, text, &lines, scope).and_then(|edit| {
        let proposal = finish(&edit, language, root, text, &lines)?;
        verifier.reparses(&edit).then_some(proposal)
    });
    Outcome::Proposed(Proposals {
        language,
        mutants,
        control,
        dropped,
    })
}

/// The edits that belong to the change, one per changed line (the first in operator order that
/// reparses) or all of them, each made a proposal once; the count of those that did not reparse.
pub(crate) fn select(
    verifier: &mut Verifier,
    language: Language,
    edits: Vec<Edit>,
    scope: &Scope,
    all: bool,
) -> (Vec<Proposal>, usize) {
    let (root, text, lines) = (verifier.tree.root_node(), verifier.text, verifier.lines);
    let mut grouped: BTreeMap<usize, Vec<Edit>> = BTreeMap::new();
    for edit in edits {
        if let Some(line) = first_line_in_scope(lines, &edit, scope) {
            grouped.entry(line).or_default().push(edit);
        }
    }
    let mut seen = HashSet::new();
    let mut mutants = Vec::new();
    let mut dropped = 0;
    for (_, mut group) in grouped {
        // A stable sort keeps each line's edits in the order the rules made them, so the first
        // replacement of an operator family (`<` to `<=` before `<` to `>`) comes first.
        group.sort_by_key(|e| e.operator);
        for edit in group {
            let Some(proposal) = finish(&edit, language, root, text, lines) else {
                continue;
            };
            if !seen.insert((proposal.anchor.clone(), proposal.replace.clone())) {
                continue;
            }
            if !verifier.reparses(&edit) {
                dropped += 1;
                continue;
            }
            mutants.push((edit.start, proposal));
            if !all {
                break;
            }
        }
    }
    mutants.sort_by_key(|(start, p)| (p.line, *start));
    (mutants.into_iter().map(|(_, p)| p).collect(), dropped)
}

/// The first line of the edit's span that the scope holds (a mutation belongs to the change
/// when any line of the text it replaces changed, as cargo-mutants' `--in-diff` has it).
fn first_line_in_scope(lines: &Lines, edit: &Edit, scope: &Scope) -> Option<usize> {
    let first = lines.line_of(edit.start);
    let last = lines.line_of(edit.end.saturating_sub(1).max(edit.start));
    match scope {
        Scope::Whole => Some(first),
        Scope::Lines(changed) => changed.range(first..=last).next().copied(),
    }
}

/// The proposal an edit makes: its anchor grown until unique, and the site it sits in.
fn finish(
    edit: &Edit,
    language: Language,
    root: Node,
    text: &str,
    lines: &Lines,
) -> Option<Proposal> {
    let (a, b) = grow(root, text, lines, edit.start, edit.end)?;
    let anchor = &text[a..b];
    let replace = format!(
        "{}{}{}",
        &text[a..edit.start],
        edit.text,
        &text[edit.end..b]
    );
    if anchor == replace {
        return None;
    }
    Some(Proposal {
        line: lines.line_of(edit.start),
        site: site::site(language, root, text, edit.start, edit.end),
        anchor: anchor.to_owned(),
        replace,
        operator: edit.operator,
        description: edit.description.clone(),
    })
}

/// Reparses the mutated file incrementally from the original tree.
pub(crate) struct Verifier<'a, 't> {
    pub parser: &'a mut Parser,
    pub tree: &'t Tree,
    pub text: &'t str,
    pub lines: &'t Lines,
}

impl Verifier<'_, '_> {
    pub fn reparses(&mut self, edit: &Edit) -> bool {
        let mut mutated = String::with_capacity(self.text.len() + edit.text.len());
        mutated.push_str(&self.text[..edit.start]);
        mutated.push_str(&edit.text);
        mutated.push_str(&self.text[edit.end..]);
        let start_position = self.lines.point(edit.start);
        let mut new_end_position = start_position;
        for ch in edit.text.bytes() {
            if ch == b'\n' {
                new_end_position = Point::new(new_end_position.row + 1, 0);
            } else {
                new_end_position.column += 1;
            }
        }
        let mut old = self.tree.clone();
        old.edit(&InputEdit {
            start_byte: edit.start,
            old_end_byte: edit.end,
            new_end_byte: edit.start + edit.text.len(),
            start_position,
            old_end_position: self.lines.point(edit.end),
            new_end_position,
        });
        match self.parser.parse(&mutated, Some(&old)) {
            Some(tree) => !tree.root_node().has_error(),
            None => false,
        }
    }
}
