//! The mutation rules, one module per language family, over one walk of the tree.
//!
//! Each language's `visit` looks at one node, adds the edits it makes to a [`Cx`], and says
//! whether the walk goes into the node's children: test code, arid code (logging, debug output,
//! asserts), comments and docstrings are never entered, so no rule can mutate them.

pub(crate) mod go;
pub(crate) mod python;
pub(crate) mod regex;
pub(crate) mod rust;
mod rust_types;
pub(crate) mod script;

use tree_sitter::Node;

use crate::edit::Edit;
use crate::{Language, Operator};

/// The edits made so far, and the text they refer to.
pub(crate) struct Cx<'t> {
    pub text: &'t str,
    pub edits: Vec<Edit>,
}

impl<'t> Cx<'t> {
    /// The text of a node.
    pub fn of(&self, node: Node) -> &'t str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// Replaces a node's text.
    pub fn replace(
        &mut self,
        node: Node,
        text: impl Into<String>,
        operator: Operator,
        description: impl Into<String>,
    ) {
        self.edit(
            node.start_byte(),
            node.end_byte(),
            text,
            operator,
            description,
        );
    }

    pub fn edit(
        &mut self,
        start: usize,
        end: usize,
        text: impl Into<String>,
        operator: Operator,
        description: impl Into<String>,
    ) {
        self.edits.push(Edit {
            start,
            end,
            text: text.into(),
            operator,
            description: description.into(),
        });
    }

    /// Swaps an operator token for each of its replacements in `table`.
    pub fn swap(&mut self, token: Node, table: &[(&str, &[&str], Operator)]) {
        let old = self.of(token);
        if let Some((_, news, operator)) = table.iter().find(|(from, _, _)| *from == old) {
            for new in news.iter() {
                self.replace(token, *new, *operator, format!("replace {old} with {new}"));
            }
        }
    }

    /// A string literal's content emptied, or an empty one given content (as Stryker does).
    /// `open` and `close` are the lengths of its delimiters.
    pub fn string(&mut self, node: Node, open: usize, close: usize) {
        let (s, e) = (
            node.start_byte() + open,
            node.end_byte().saturating_sub(close),
        );
        if s > e || !self.text.is_char_boundary(s) || !self.text.is_char_boundary(e) {
            return;
        }
        if s == e {
            self.edit(
                s,
                e,
                "Stryker was here!",
                Operator::String,
                "fill empty string",
            );
        } else {
            self.edit(s, e, "", Operator::String, "empty string");
        }
    }

    /// A decimal integer constant off by one, either way (any type suffix kept).
    pub fn integer(&mut self, node: Node) {
        let text = self.of(node);
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let (number, suffix) = text.split_at(digits);
        if digits == 0
            || suffix.starts_with(['.', 'e', 'E', 'x', 'o', 'b', 'X', 'O', 'B', '_', 'j'])
        {
            return;
        }
        if digits > 1 && number.starts_with('0') {
            return;
        }
        let Ok(n) = number.parse::<u64>() else { return };
        if let Some(up) = n.checked_add(1) {
            self.replace(
                node,
                format!("{up}{suffix}"),
                Operator::Constant,
                format!("replace {text} with {up}{suffix}"),
            );
        }
        if n > 0 {
            let down = n - 1;
            self.replace(
                node,
                format!("{down}{suffix}"),
                Operator::Constant,
                format!("replace {text} with {down}{suffix}"),
            );
        }
    }
}

/// Every edit the language's rules make over the whole tree (scope is applied later).
pub(crate) fn edits(language: Language, root: Node, text: &str) -> Vec<Edit> {
    let mut cx = Cx {
        text,
        edits: Vec::new(),
    };
    let visit: fn(Node, &mut Cx) -> bool = match language {
        Language::Rust => rust::visit,
        Language::Python => python::visit,
        Language::Go => go::visit,
        Language::JavaScript | Language::TypeScript | Language::Tsx => script::visit,
    };
    // An explicit cursor walk rather than recursion: hostile input can nest deeply.
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let descend = !node.is_extra() && visit(node, &mut cx);
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return cx.edits;
            }
        }
    }
}

/// The named children of a node, comments left out.
pub(crate) fn code_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !c.is_extra())
        .collect()
}

/// The condition of an `if`/`while`, with the parentheses some grammars wrap it in taken off.
pub(crate) fn unparenthesized(node: Node) -> Node {
    if node.kind() == "parenthesized_expression" && node.named_child_count() == 1 {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    }
}
