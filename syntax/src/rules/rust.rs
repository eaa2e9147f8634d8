//! Rust: cargo-mutants' operators (binary and compound-assignment swaps, `!` and `-` deleted,
//! match arms and guards, struct fields before `..`, function bodies replaced by a value of the
//! return type) and the rest of the shared families. `#[cfg(test)]` modules and `#[test]`
//! functions are never entered; macros' token trees (logging, `assert!`, `println!`) never are.

use tree_sitter::Node;

use super::rust_types::values;
use super::{code_children, Cx};
use crate::Operator::{
    self, Arithmetic, Assignment, Bitwise, Boolean, Boundary, Equality, Logical, Negation,
    RemoveBlock, RemoveCall, ReturnValue,
};

const BINARY: &[(&str, &[&str], Operator)] = &[
    ("<", &["<=", ">", "=="], Boundary),
    (">", &[">=", "<", "=="], Boundary),
    ("<=", &[">"], Boundary),
    (">=", &["<"], Boundary),
    ("==", &["!="], Equality),
    ("!=", &["=="], Equality),
    ("&&", &["||"], Logical),
    ("||", &["&&"], Logical),
    ("+", &["-", "*"], Arithmetic),
    ("-", &["+", "/"], Arithmetic),
    ("*", &["+", "/"], Arithmetic),
    ("/", &["%", "*"], Arithmetic),
    ("%", &["/", "+"], Arithmetic),
    ("<<", &[">>"], Bitwise),
    (">>", &["<<"], Bitwise),
    ("&", &["|", "^"], Bitwise),
    ("|", &["&", "^"], Bitwise),
    ("^", &["|", "&"], Bitwise),
];

const ASSIGN: &[(&str, &[&str], Operator)] = &[
    ("+=", &["-=", "*="], Assignment),
    ("-=", &["+=", "/="], Assignment),
    ("*=", &["+=", "/="], Assignment),
    ("/=", &["%=", "*="], Assignment),
    ("%=", &["/=", "+="], Assignment),
    ("<<=", &[">>="], Assignment),
    (">>=", &["<<="], Assignment),
    ("&=", &["|="], Assignment),
    ("|=", &["&="], Assignment),
    ("^=", &["|=", "&="], Assignment),
];

pub(crate) fn visit(node: Node, cx: &mut Cx) -> bool {
    let kind = node.kind();
    if kind.ends_with("_type") || kind.ends_with("pattern") && kind != "match_pattern" {
        return false;
    }
    match kind {
        "attribute_item"
        | "inner_attribute_item"
        | "token_tree"
        | "macro_invocation"
        | "macro_definition"
        | "use_declaration"
        | "type_arguments"
        | "extern_crate_declaration" => {
            return false;
        }
        "mod_item" | "function_item" | "impl_item" | "trait_item" | "const_item"
        | "static_item"
            if is_test_item(node, cx.text) =>
        {
            return false;
        }
        "function_item" => body_values(node, cx),
        "binary_expression" => {
            if let Some(op) = node.child_by_field_name("operator") {
                cx.swap(op, BINARY);
            }
        }
        "compound_assignment_expr" => {
            if let Some(op) = node.child_by_field_name("operator") {
                cx.swap(op, ASSIGN);
            }
        }
        "unary_expression" => {
            if let Some(op) = node.child(0) {
                match cx.of(op) {
                    "!" => cx.replace(op, "", Negation, "delete !"),
                    "-" => cx.replace(op, "", Arithmetic, "delete -"),
                    _ => {}
                }
            }
        }
        "boolean_literal" if !in_pattern(node) => {
            let flipped = if cx.of(node) == "true" {
                "false"
            } else {
                "true"
            };
            cx.replace(
                node,
                flipped,
                Boolean,
                format!("replace {} with {flipped}", cx.of(node)),
            );
        }
        "string_literal" if !in_pattern(node) && !is_abi(node) && cx.of(node).starts_with('"') => {
            cx.string(node, 1, 1)
        }
        "integer_literal" if !in_pattern(node) && !fixes_a_type(node) => cx.integer(node),
        "if_expression" | "while_expression" => condition(node, cx),
        "expression_statement" => statement(node, cx),
        "match_expression" => match_arms(node, cx),
        "struct_expression" => struct_fields(node, cx),
        _ => {}
    }
    true
}

/// Literals in patterns (`match` arms, `let`) are left alone: they select, they do not compute.
fn in_pattern(node: Node) -> bool {
    let mut up = node.parent();
    while let Some(n) = up {
        match n.kind() {
            "match_pattern" => {
                return n
                    .child_by_field_name("condition")
                    .is_none_or(|c| c.start_byte() > node.start_byte())
            }
            k if k.ends_with("pattern") => return true,
            k if k.ends_with("expression") || k == "block" => return false,
            _ => up = n.parent(),
        }
    }
    false
}

/// `#![cfg(test)]` at the top of a file makes the whole file test code.
pub(crate) fn file_is_test(root: Node, text: &str) -> bool {
    code_children(root)
        .iter()
        .filter(|n| n.kind() == "inner_attribute_item")
        .any(|n| attribute_is_test(text.get(n.byte_range()).unwrap_or("")))
}

/// An item under `#[cfg(test)]`, `#[test]` (or any attribute whose path ends in `test`, as
/// `#[tokio::test]`) or `#[mutants::skip]`.
fn is_test_item(item: Node, text: &str) -> bool {
    let mut prev = item.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {
                if attribute_is_test(text.get(p.byte_range()).unwrap_or("")) {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    false
}

fn attribute_is_test(attribute: &str) -> bool {
    let inner = attribute
        .trim_start_matches('#')
        .trim_start_matches('!')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    let path: String = inner
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    (path == "cfg" && test_only(&inner[path.len()..]))
        || path.rsplit("::").next() == Some("test")
        || inner.contains("mutants::skip")
}

/// Whether a `cfg` predicate (`(test)`, `(all(test, unix))`) holds only under test; `not(test)`
/// and `any(test, ...)` do not.
fn test_only(predicate: &str) -> bool {
    let p = predicate.trim();
    let p = p
        .strip_prefix('(')
        .and_then(|p| p.strip_suffix(')'))
        .unwrap_or(p)
        .trim();
    if p == "test" {
        return true;
    }
    let Some(args) = p.strip_prefix("all").map(str::trim_start) else {
        return false;
    };
    let Some(args) = args.strip_prefix('(').and_then(|a| a.strip_suffix(')')) else {
        return false;
    };
    let mut depth = 0usize;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    parts.iter().any(|part| test_only(part))
}

fn condition(node: Node, cx: &mut Cx) {
    if let Some(cond) = node.child_by_field_name("condition") {
        if !matches!(cond.kind(), "let_condition" | "let_chain") {
            let text = cx.of(cond);
            cx.replace(
                cond,
                format!("!({text})"),
                Negation,
                format!(
                    "negate {} condition",
                    node.kind().trim_end_matches("_expression")
                ),
            );
        }
    }
    if node.kind() != "if_expression"
        || node
            .parent()
            .is_none_or(|p| p.kind() != "expression_statement")
    {
        return;
    }
    match node.child_by_field_name("alternative") {
        Some(alternative) => {
            // An `if` whose branches give a value needs its `else`: without it the mutant
            // would not build.
            let consequence = node
                .child_by_field_name("consequence")
                .filter(|c| !gives_value(*c));
            if let Some(consequence) = consequence {
                cx.edit(
                    consequence.end_byte(),
                    alternative.end_byte(),
                    "",
                    RemoveBlock,
                    "delete else branch",
                );
            }
        }
        None => {
            let guard = node.child_by_field_name("consequence").is_some_and(|body| {
                code_children(body).iter().any(|s| {
                    let e = if s.kind() == "expression_statement" {
                        s.named_child(0).unwrap_or(*s)
                    } else {
                        *s
                    };
                    matches!(
                        e.kind(),
                        "return_expression" | "break_expression" | "continue_expression"
                    )
                })
            });
            if let (true, Some(statement)) = (guard, node.parent()) {
                cx.replace(statement, "", RemoveBlock, "delete guard");
            }
        }
    }
}

/// A call statement (`foo(a);`, `x.push(b)?;`) removed; a tail expression (no `;`) is a value
/// and stays.
fn statement(node: Node, cx: &mut Cx) {
    if !cx.of(node).ends_with(';') {
        return;
    }
    let Some(mut e) = node.named_child(0) else {
        return;
    };
    while matches!(e.kind(), "try_expression" | "await_expression") {
        match e.named_child(0) {
            Some(inner) => e = inner,
            None => return,
        }
    }
    if e.kind() == "call_expression" {
        let callee = e
            .child_by_field_name("function")
            .map_or("", |f| cx.of(f))
            .to_owned();
        cx.replace(node, "", RemoveCall, format!("remove call to {callee}"));
    }
}

/// With a `_` arm, each other arm without a guard deleted; each guard made `true` and `false`.
fn match_arms(node: Node, cx: &mut Cx) {
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    let arms: Vec<Node> = code_children(body)
        .into_iter()
        .filter(|a| a.kind() == "match_arm")
        .collect();
    let wild = |arm: &Node| {
        arm.child_by_field_name("pattern")
            .and_then(|p| p.named_child(0).or(p.child(0)))
            .is_some_and(|p| cx.text.get(p.byte_range()) == Some("_"))
    };
    let has_catchall = arms.iter().any(wild);
    for arm in &arms {
        let guard = arm
            .child_by_field_name("pattern")
            .and_then(|p| p.child_by_field_name("condition"));
        match guard {
            Some(g) => {
                cx.replace(g, "true", Boolean, "replace match guard with true");
                cx.replace(g, "false", Boolean, "replace match guard with false");
            }
            None if has_catchall && !wild(arm) => {
                let pattern = arm
                    .child_by_field_name("pattern")
                    .map_or("", |p| cx.of(p))
                    .to_owned();
                cx.replace(*arm, "", RemoveBlock, format!("delete match arm {pattern}"));
            }
            None => {}
        }
    }
}

/// In `S { a: 1, ..base }`, each named field deleted (with its comma), as cargo-mutants does.
fn struct_fields(node: Node, cx: &mut Cx) {
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    let fields = code_children(body);
    if !fields.iter().any(|f| f.kind() == "base_field_initializer") {
        return;
    }
    for field in fields {
        if !matches!(
            field.kind(),
            "field_initializer" | "shorthand_field_initializer"
        ) {
            continue;
        }
        let end = match field.next_sibling() {
            Some(comma) if comma.kind() == "," => comma.end_byte(),
            _ => field.end_byte(),
        };
        let name = field
            .child_by_field_name("field")
            .map_or(cx.of(field), |f| cx.of(f))
            .to_owned();
        cx.edit(
            field.start_byte(),
            end,
            "",
            RemoveBlock,
            format!("delete field {name}"),
        );
    }
}

/// The body replaced by each value of the return type, as cargo-mutants' main family does; not
/// for `unsafe fn`, constructors named `new` in an `impl` or trait, `impl Default`, or an
/// empty body.
fn body_values(function: Node, cx: &mut Cx) {
    let Some(body) = function.child_by_field_name("body") else {
        return;
    };
    let name = function
        .child_by_field_name("name")
        .map_or("", |n| cx.of(n))
        .to_owned();
    let modifiers = code_children(function)
        .into_iter()
        .find(|c| c.kind() == "function_modifiers")
        .map_or("", |m| cx.of(m));
    if modifiers.contains("unsafe") {
        return;
    }
    let mut up = function.parent();
    while let Some(n) = up {
        match n.kind() {
            "impl_item" | "trait_item" => {
                let default = n
                    .child_by_field_name("trait")
                    .is_some_and(|t| cx.of(t).rsplit("::").next() == Some("Default"));
                if name == "new" || default {
                    return;
                }
                break;
            }
            "function_item" | "source_file" => break,
            _ => up = n.parent(),
        }
    }
    let statements = code_children(body);
    // A body of logging and asserts alone is arid: replacing it only removes output.
    if statements.iter().all(|s| is_arid(*s, cx)) {
        return;
    }
    let (Some(first), Some(last)) = (statements.first(), statements.last()) else {
        return;
    };
    let (start, end) = (first.start_byte(), last.end_byte());
    let old = cx.text.get(start..end).unwrap_or("").to_owned();
    let ret = function.child_by_field_name("return_type");
    let ret_text = ret.map(|r| format!(" -> {}", cx.of(r))).unwrap_or_default();
    for value in values(ret, cx.text) {
        if value == old {
            continue;
        }
        cx.edit(
            start,
            end,
            value.clone(),
            ReturnValue,
            format!("replace {name}{ret_text} with {value}"),
        );
    }
}

/// Whether a block ends in a value (a tail expression), rather than in a statement.
fn gives_value(block: Node) -> bool {
    code_children(block).last().is_some_and(|last| {
        !matches!(
            last.kind(),
            "expression_statement" | "let_declaration" | "empty_statement"
        ) && !last.kind().ends_with("_item")
    })
}

/// `extern "C"`: the ABI's name is not a value.
fn is_abi(node: Node) -> bool {
    node.parent()
        .is_some_and(|p| p.kind().starts_with("extern") || p.kind().starts_with("foreign_mod"))
}

/// An integer whose change would not build: a tuple field (`pair.0`) or an array repeat
/// length (`[0u8; 32]`), which the array's type fixes.
fn fixes_a_type(node: Node) -> bool {
    node.parent().is_some_and(|p| match p.kind() {
        "field_expression" => true,
        "array_expression" => p
            .child_by_field_name("length")
            .is_some_and(|l| l.id() == node.id()),
        _ => false,
    })
}

/// Logging, debug output and asserts: `println!`, `dbg!`, `log::info!`, `tracing::warn!`,
/// `assert!`, `debug_assert_eq!` and the like, as a statement or a block's tail.
fn is_arid(statement: Node, cx: &Cx) -> bool {
    const ARID: &[&str] = &[
        "print",
        "println",
        "eprint",
        "eprintln",
        "dbg",
        "trace",
        "debug",
        "info",
        "warn",
        "error",
        "log",
        "event",
        "assert",
        "assert_eq",
        "assert_ne",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
    ];
    let e = if statement.kind() == "expression_statement" {
        statement.named_child(0).unwrap_or(statement)
    } else {
        statement
    };
    e.kind() == "macro_invocation"
        && e.child_by_field_name("macro")
            .map(|m| cx.of(m).rsplit("::").next().unwrap_or(""))
            .is_some_and(|name| ARID.contains(&name))
}
