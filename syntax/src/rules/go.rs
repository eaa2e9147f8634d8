//! Go: relational, equality, logical, arithmetic, bitwise, assignment and `++`/`--` swaps,
//! conditions negated, constants and strings, calls, guards and `else` branches removed, and a
//! function's body replaced by a return of its result types' zero values. `fmt.Print*`,
//! `log.*`, imports, types and comments are never entered.

use tree_sitter::Node;

use super::{code_children, Cx};
use crate::Operator::{
    self, Arithmetic, Assignment, Bitwise, Boolean, Boundary, Equality, Logical, Negation,
    RemoveBlock, RemoveCall, ReturnValue, Update,
};

const BINARY: &[(&str, &[&str], Operator)] = &[
    ("<", &["<=", ">="], Boundary),
    ("<=", &["<", ">"], Boundary),
    (">", &[">=", "<="], Boundary),
    (">=", &[">", "<"], Boundary),
    ("==", &["!="], Equality),
    ("!=", &["=="], Equality),
    ("&&", &["||"], Logical),
    ("||", &["&&"], Logical),
    ("+", &["-"], Arithmetic),
    ("-", &["+"], Arithmetic),
    ("*", &["/"], Arithmetic),
    ("/", &["*"], Arithmetic),
    ("%", &["*"], Arithmetic),
    ("&", &["|"], Bitwise),
    ("|", &["&"], Bitwise),
    ("^", &["&"], Bitwise),
    ("&^", &["&"], Bitwise),
    ("<<", &[">>"], Bitwise),
    (">>", &["<<"], Bitwise),
];

const ASSIGN: &[(&str, &[&str], Operator)] = &[
    ("+=", &["-="], Assignment),
    ("-=", &["+="], Assignment),
    ("*=", &["/="], Assignment),
    ("/=", &["*="], Assignment),
    ("%=", &["*="], Assignment),
    ("&=", &["|="], Assignment),
    ("|=", &["&="], Assignment),
    ("^=", &["&="], Assignment),
    ("<<=", &[">>="], Assignment),
    (">>=", &["<<="], Assignment),
];

const NOT_ENTERED: &[&str] = &[
    "comment",
    "import_declaration",
    "package_clause",
    "type_declaration",
    "field_declaration_list",
    "type_arguments",
    "type_parameter_list",
];

pub(crate) fn visit(node: Node, cx: &mut Cx) -> bool {
    let kind = node.kind();
    if NOT_ENTERED.contains(&kind) || kind.ends_with("_type") {
        return false;
    }
    match kind {
        "expression_statement" => return statement(node, cx),
        "binary_expression" => {
            if let Some(op) = node.child_by_field_name("operator") {
                cx.swap(op, BINARY);
            }
        }
        "assignment_statement" => {
            if let Some(op) = node.child_by_field_name("operator") {
                cx.swap(op, ASSIGN);
            }
        }
        "inc_statement" | "dec_statement" => {
            if let Some(op) = node.child(node.child_count().saturating_sub(1)) {
                let new = if kind == "inc_statement" { "--" } else { "++" };
                cx.replace(op, new, Update, format!("replace {} with {new}", cx.of(op)));
            }
        }
        "unary_expression" => {
            if let Some(op) = node.child_by_field_name("operator") {
                match cx.of(op) {
                    "!" => cx.replace(op, "", Negation, "delete !"),
                    "-" => cx.replace(op, "", Arithmetic, "delete -"),
                    "^" => cx.replace(op, "", Bitwise, "delete ^"),
                    _ => {}
                }
            }
        }
        "true" | "false" => {
            let new = if kind == "true" { "false" } else { "true" };
            cx.replace(node, new, Boolean, format!("replace {kind} with {new}"));
        }
        "interpreted_string_literal" => cx.string(node, 1, 1),
        "int_literal" => cx.integer(node),
        "if_statement" => if_statement(node, cx),
        "function_declaration" | "method_declaration" => body(node, cx),
        _ => {}
    }
    true
}

fn statement(node: Node, cx: &mut Cx) -> bool {
    let Some(call) = node
        .named_child(0)
        .filter(|c| c.kind() == "call_expression")
    else {
        return true;
    };
    if is_arid(node, cx) {
        return false;
    }
    let callee = call
        .child_by_field_name("function")
        .map_or("", |f| cx.of(f))
        .to_owned();
    cx.replace(node, "", RemoveCall, format!("remove call to {callee}"));
    true
}

/// `fmt.Print*`, `log.*` and the `print`/`println` builtins as a statement.
fn is_arid(statement: Node, cx: &Cx) -> bool {
    let Some(call) = statement
        .named_child(0)
        .filter(|c| statement.kind() == "expression_statement" && c.kind() == "call_expression")
    else {
        return false;
    };
    let callee = call
        .child_by_field_name("function")
        .map_or("", |f| cx.of(f));
    callee.starts_with("fmt.Print")
        || callee.starts_with("log.")
        || callee == "println"
        || callee == "print"
}

fn if_statement(node: Node, cx: &mut Cx) {
    if let Some(cond) = node.child_by_field_name("condition") {
        let text = cx.of(cond);
        cx.replace(cond, format!("!({text})"), Negation, "negate if condition");
    }
    let Some(consequence) = node.child_by_field_name("consequence") else {
        return;
    };
    match node.child_by_field_name("alternative") {
        Some(alternative) => {
            cx.edit(
                consequence.end_byte(),
                alternative.end_byte(),
                "",
                RemoveBlock,
                "delete else branch",
            );
        }
        None => {
            let list = code_children(consequence);
            let statements = list
                .first()
                .filter(|l| l.kind() == "statement_list")
                .map(|l| code_children(*l))
                .unwrap_or_default();
            let exits = statements.iter().any(|s| {
                matches!(
                    s.kind(),
                    "return_statement" | "break_statement" | "continue_statement"
                ) || cx.of(*s).starts_with("panic(")
            });
            if exits && node.child_by_field_name("initializer").is_none() {
                cx.replace(node, "", RemoveBlock, "delete guard");
            }
        }
    }
}

/// The body replaced by a return of the zero values of the result types (or emptied when the
/// function returns nothing).
fn body(function: Node, cx: &mut Cx) {
    let Some(block) = function.child_by_field_name("body") else {
        return;
    };
    let Some(list) = code_children(block)
        .into_iter()
        .find(|c| c.kind() == "statement_list")
    else {
        return;
    };
    if code_children(list).iter().all(|s| is_arid(*s, cx)) {
        return;
    }
    let zeros: Vec<String> = match function.child_by_field_name("result") {
        None => Vec::new(),
        Some(result) if result.kind() == "parameter_list" => code_children(result)
            .iter()
            .filter(|p| p.kind() == "parameter_declaration")
            .flat_map(|p| {
                let names = {
                    let mut c = p.walk();
                    p.children_by_field_name("name", &mut c).count().max(1)
                };
                let zero = p
                    .child_by_field_name("type")
                    .map(|t| zero(t, cx))
                    .unwrap_or_default();
                std::iter::repeat_n(zero, names)
            })
            .collect(),
        Some(result) => vec![zero(result, cx)],
    };
    let new = if zeros.is_empty() {
        String::new()
    } else {
        format!("return {}", zeros.join(", "))
    };
    let statements = code_children(list);
    let (Some(first), Some(last)) = (statements.first(), statements.last()) else {
        return;
    };
    if cx.text.get(first.start_byte()..last.end_byte()) == Some(new.as_str()) {
        return;
    }
    let name = function
        .child_by_field_name("name")
        .map_or("", |n| cx.of(n))
        .to_owned();
    let what = if new.is_empty() {
        "empty body".to_owned()
    } else {
        new.clone()
    };
    cx.edit(
        first.start_byte(),
        last.end_byte(),
        new,
        ReturnValue,
        format!("replace {name} body with {what}"),
    );
}

/// The zero value of a Go type: `0`, `""`, `false`, `nil`, or `*new(T)` for any other.
fn zero(ty: Node, cx: &Cx) -> String {
    let text = cx.of(ty);
    match ty.kind() {
        "pointer_type" | "slice_type" | "map_type" | "channel_type" | "function_type"
        | "interface_type" => "nil".to_owned(),
        "type_identifier" => match text {
            "bool" => "false".to_owned(),
            "string" => "\"\"".to_owned(),
            "error" | "any" => "nil".to_owned(),
            t if t.starts_with("int")
                || t.starts_with("uint")
                || t.starts_with("float")
                || t.starts_with("complex")
                || t == "byte"
                || t == "rune" =>
            {
                "0".to_owned()
            }
            t => format!("*new({t})"),
        },
        _ => format!("*new({text})"),
    }
}
