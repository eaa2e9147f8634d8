//! The control: one edit per file that the suite must not notice. It is a comment edit (a word
//! added inside an existing plain comment, or a new comment after a statement), never
//! whitespace, which changes meaning in Python and which formatting checks catch.

use tree_sitter::Node;

use crate::anchor::{unique, Lines};
use crate::edit::Edit;
use crate::{Language, Operator, Scope};

/// The word a control adds.
const WORD: &str = "(unchanged)";

/// The file's control, preferring a comment on a changed line.
pub(crate) fn control(
    language: Language,
    root: Node,
    text: &str,
    lines: &Lines,
    scope: &Scope,
) -> Option<Edit> {
    let mut comments = Vec::new();
    let mut statements = Vec::new();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if is_comment(node) {
            comments.push(node);
        } else if is_statement(language, node) {
            statements.push(node);
        }
        if cursor.goto_first_child() {
            continue;
        }
        let more = loop {
            if cursor.goto_next_sibling() {
                break true;
            }
            if !cursor.goto_parent() {
                break false;
            }
        };
        if !more {
            break;
        }
    }
    let in_scope = |n: &Node| match scope {
        Scope::Whole => true,
        Scope::Lines(set) => set.contains(&lines.line_of(n.start_byte())),
    };
    let comment = |n: &Node| {
        let t = text.get(n.byte_range())?;
        (plain_comment(language, t) && unique(text, t)).then(|| comment_edit(*n, t))?
    };
    let statement = |n: &Node| statement_edit(language, *n, text, lines);
    comments
        .iter()
        .filter(|n| in_scope(n))
        .find_map(comment)
        .or_else(|| comments.iter().find_map(comment))
        .or_else(|| {
            statements
                .iter()
                .filter(|n| in_scope(n))
                .find_map(statement)
        })
        .or_else(|| statements.iter().find_map(statement))
}

fn is_comment(node: Node) -> bool {
    node.kind().ends_with("comment")
}

/// A comment nothing reads: not a doc comment, a directive, a `#!` line or a marker.
fn plain_comment(language: Language, t: &str) -> bool {
    let body = match language {
        Language::Python => match t.strip_prefix('#') {
            Some(b) => b,
            None => return false,
        },
        _ => {
            if t.starts_with("///")
                || t.starts_with("//!")
                || t.starts_with("/**")
                || t.starts_with("/*!")
            {
                return false;
            }
            match t.strip_prefix("//") {
                Some(b) => b,
                None if t.len() >= 4
                    && t.starts_with("/*")
                    && t.ends_with("*/")
                    && !t.contains('\n') =>
                {
                    &t[2..t.len() - 2]
                }
                None => return false,
            }
        }
    };
    let word = body.trim_start().to_ascii_lowercase();
    const DIRECTIVES: &[&str] = &[
        "!",
        "type:",
        "noqa",
        "pragma",
        "pylint:",
        "mypy:",
        "fmt:",
        "isort:",
        "-*-",
        "coding",
        "eslint",
        "@ts-",
        "prettier-",
        "istanbul",
        "c8",
        "jshint",
        "global ",
        "go:",
        "+build",
        "nolint",
        "export ",
        "line ",
        "#",
        "@",
        "rustfmt",
        "clippy",
        "safety",
        "output:",
        "unordered output:",
        "code generated",
        "sourcemappingurl",
        "todo",
        "fixme",
    ];
    !t.starts_with("#!")
        && !body.starts_with("go:")
        && !word.is_empty()
        && !DIRECTIVES.iter().any(|d| word.starts_with(d))
        && !word.contains("type: ignore")
        && !word.contains("noqa")
}

fn comment_edit(node: Node, t: &str) -> Option<Edit> {
    let new = match t.strip_suffix("*/") {
        Some(open) => format!("{} {WORD} */", open.trim_end()),
        None => format!("{} {WORD}", t.trim_end()),
    };
    Some(Edit {
        start: node.start_byte(),
        end: node.end_byte(),
        text: new,
        operator: Operator::Control,
        description: "add a word to a comment".to_owned(),
    })
}

fn is_statement(language: Language, node: Node) -> bool {
    let kind = node.kind();
    match language {
        Language::Rust => matches!(kind, "let_declaration" | "expression_statement"),
        Language::Python => matches!(
            kind,
            "expression_statement" | "return_statement" | "pass_statement"
        ),
        Language::Go => matches!(
            kind,
            "short_var_declaration"
                | "assignment_statement"
                | "return_statement"
                | "expression_statement"
        ),
        _ => matches!(
            kind,
            "expression_statement"
                | "lexical_declaration"
                | "variable_declaration"
                | "return_statement"
        ),
    }
}

/// A new comment after a statement that fills its line alone, on a line that is unique.
fn statement_edit(language: Language, node: Node, text: &str, lines: &Lines) -> Option<Edit> {
    let (start, end) = (
        lines.line_start(node.start_byte()),
        lines.line_end(node.end_byte()),
    );
    let line = text.get(start..end)?;
    let own = text.get(node.byte_range())?;
    // A string standing alone is a docstring or a directive (`"use strict"`): never touched.
    let bare_string = node
        .named_child(0)
        .is_some_and(|c| c.kind() == "string" || c.kind().ends_with("string_literal"));
    if bare_string || line.trim() != own || own.contains('\n') || !unique(text, line) {
        return None;
    }
    if language == Language::Rust && !own.ends_with(';') {
        return None;
    }
    let marker = if language == Language::Python {
        "  #"
    } else {
        " //"
    };
    Some(Edit {
        start: node.start_byte(),
        end: node.end_byte(),
        text: format!("{own}{marker} {WORD}"),
        operator: Operator::Control,
        description: "add a comment after a statement".to_owned(),
    })
}
