//! The per-file checks that come before any proposal: test code by path, generated files, size,
//! long lines, UTF-8 and a clean parse. Each returns the [`Skip`] it found, so no caller needs
//! to repeat a rule.

use tree_sitter::{Node, Parser, Tree};

use crate::language::generated_name;
use crate::{Language, Skip};

/// Files larger than this are skipped.
pub(crate) const MAX_BYTES: usize = 1 << 20;
/// Lines longer than this (in characters) mark a minified or generated file.
pub(crate) const MAX_LINE_CHARS: usize = 1000;
/// How many leading lines are searched for a generated-file marker.
const MARKER_LINES: usize = 5;

/// What the checks hand on: the file's language, its text and its tree.
pub(crate) struct Checked<'a> {
    pub language: Language,
    pub text: &'a str,
    pub tree: Tree,
}

/// Every check a file goes through before proposals are made, in a fixed order (the cheapest
/// and most telling first).
pub(crate) fn check<'a>(
    path: &str,
    bytes: &'a [u8],
    parser: &mut Parser,
) -> Result<Checked<'a>, Skip> {
    if let Some(name) = generated_name(path) {
        return Err(Skip::Generated {
            why: format!("{name} is a lockfile"),
        });
    }
    let language = Language::of_path(path).ok_or(Skip::NotSource)?;
    if crate::is_test_path(path) {
        return Err(Skip::TestCode);
    }
    if bytes.len() > MAX_BYTES {
        return Err(Skip::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| Skip::NotUtf8)?;
    if let Some(why) = generated_marker(text) {
        return Err(Skip::Generated { why });
    }
    if let Some(line) = long_line(text) {
        return Err(Skip::LongLine { line });
    }
    parser
        .set_language(&language.grammar())
        .map_err(|_| Skip::DoesNotParse { line: 1 })?;
    let tree = parser
        .parse(text, None)
        .ok_or(Skip::DoesNotParse { line: 1 })?;
    if let Some(line) = first_error_line(tree.root_node()) {
        return Err(Skip::DoesNotParse { line });
    }
    if language == Language::Rust && crate::rules::rust::file_is_test(tree.root_node(), text) {
        return Err(Skip::TestCode);
    }
    Ok(Checked {
        language,
        text,
        tree,
    })
}

/// `@generated` (the convention Facebook started and Cargo, Buck and others follow) or Go's
/// `Code generated ... DO NOT EDIT.` in the first lines.
fn generated_marker(text: &str) -> Option<String> {
    for line in text.lines().take(MARKER_LINES) {
        if line.contains("@generated") {
            return Some("an @generated marker".to_owned());
        }
        if line.contains("Code generated") && line.contains("DO NOT EDIT") {
            return Some("a `Code generated ... DO NOT EDIT` marker".to_owned());
        }
    }
    None
}

/// The first line over [`MAX_LINE_CHARS`] characters, 1-based.
fn long_line(text: &str) -> Option<usize> {
    text.split('\n')
        .position(|line| line.len() > MAX_LINE_CHARS && line.chars().count() > MAX_LINE_CHARS)
        .map(|i| i + 1)
}

/// The 1-based line of the first ERROR or MISSING node, if the tree holds one.
pub(crate) fn first_error_line(root: Node) -> Option<usize> {
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node.start_position().row + 1);
        }
        // Only subtrees that hold an error are entered, so the walk stays short.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Some(root.start_position().row + 1);
            }
        }
    }
}
