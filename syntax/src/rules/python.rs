//! Python: mutmut's operator and keyword swaps (`<`/`<=`, `is`/`is not`, `in`/`not in`,
//! `and`/`or`, `True`/`False`, arithmetic and augmented assignment, constants), conditions
//! negated, lists and dicts emptied, calls, guards and `else` branches removed, and a function's
//! body replaced by `return None`. Logging, `print`, `assert`, comments and docstrings are never
//! entered.

use tree_sitter::Node;

use super::{code_children, Cx};
use crate::Operator::{
    self, Arithmetic, Assignment, Bitwise, Boolean, Boundary, Equality, Logical, Negation,
    RemoveBlock, RemoveCall, ReturnValue,
};

const COMPARE: &[(&str, &[&str], Operator)] = &[
    ("<", &["<="], Boundary),
    ("<=", &["<"], Boundary),
    (">", &[">="], Boundary),
    (">=", &[">"], Boundary),
    ("==", &["!="], Equality),
    ("!=", &["=="], Equality),
    ("is", &["is not"], Equality),
    ("is not", &["is"], Equality),
    ("in", &["not in"], Equality),
    ("not in", &["in"], Equality),
];

const BINARY: &[(&str, &[&str], Operator)] = &[
    ("+", &["-"], Arithmetic),
    ("-", &["+"], Arithmetic),
    ("*", &["/"], Arithmetic),
    ("/", &["*"], Arithmetic),
    ("//", &["/"], Arithmetic),
    ("%", &["/"], Arithmetic),
    ("**", &["*"], Arithmetic),
    ("<<", &[">>"], Bitwise),
    (">>", &["<<"], Bitwise),
    ("&", &["|"], Bitwise),
    ("|", &["&"], Bitwise),
    ("^", &["&"], Bitwise),
];

const ASSIGN: &[(&str, &[&str], Operator)] = &[
    ("+=", &["-="], Assignment),
    ("-=", &["+="], Assignment),
    ("*=", &["/="], Assignment),
    ("/=", &["*="], Assignment),
    ("//=", &["/="], Assignment),
    ("%=", &["/="], Assignment),
    ("**=", &["*="], Assignment),
    ("<<=", &[">>="], Assignment),
    (">>=", &["<<="], Assignment),
    ("&=", &["|="], Assignment),
    ("|=", &["&="], Assignment),
    ("^=", &["&="], Assignment),
];

const NOT_ENTERED: &[&str] = &[
    "comment",
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "assert_statement",
    "decorator",
    "type",
    "global_statement",
    "nonlocal_statement",
];

pub(crate) fn visit(node: Node, cx: &mut Cx) -> bool {
    let kind = node.kind();
    if NOT_ENTERED.contains(&kind) {
        return false;
    }
    match kind {
        "expression_statement" => return statement(node, cx),
        "comparison_operator" => {
            let mut cursor = node.walk();
            let ops: Vec<Node> = node
                .children(&mut cursor)
                .enumerate()
                .filter(|(i, _)| node.field_name_for_child(*i as u32) == Some("operators"))
                .map(|(_, c)| c)
                .collect();
            for op in ops {
                cx.swap(op, COMPARE);
            }
        }
        "boolean_operator" => {
            if let Some(op) = node.child_by_field_name("operator") {
                let new = if cx.of(op) == "and" { "or" } else { "and" };
                cx.replace(
                    op,
                    new,
                    Logical,
                    format!("replace {} with {new}", cx.of(op)),
                );
            }
        }
        "not_operator" => {
            if let Some(arg) = node.child_by_field_name("argument") {
                cx.edit(
                    node.start_byte(),
                    arg.start_byte(),
                    "",
                    Negation,
                    "delete not",
                );
            }
        }
        "binary_operator" => {
            let stringy = |f: &str| {
                node.child_by_field_name(f)
                    .is_some_and(|n| n.kind() == "string")
            };
            if let Some(op) = node
                .child_by_field_name("operator")
                .filter(|_| !stringy("left") && !stringy("right"))
            {
                cx.swap(op, BINARY);
            }
        }
        "augmented_assignment" => {
            if let Some(op) = node.child_by_field_name("operator") {
                cx.swap(op, ASSIGN);
            }
        }
        "unary_operator" => {
            if let Some(op) = node.child_by_field_name("operator") {
                match cx.of(op) {
                    "-" => cx.replace(op, "+", Arithmetic, "replace - with +"),
                    "+" => cx.replace(op, "-", Arithmetic, "replace + with -"),
                    "~" => cx.replace(op, "", Bitwise, "delete ~"),
                    _ => {}
                }
            }
        }
        "true" | "false" => {
            let new = if kind == "true" { "False" } else { "True" };
            cx.replace(
                node,
                new,
                Boolean,
                format!("replace {} with {new}", cx.of(node)),
            );
        }
        "string" => {
            let start = node.child(0).filter(|c| c.kind() == "string_start");
            let end = node
                .child(node.child_count().saturating_sub(1))
                .filter(|c| c.kind() == "string_end");
            if let (Some(s), Some(e)) = (start, end) {
                cx.string(
                    node,
                    s.end_byte() - node.start_byte(),
                    e.end_byte() - e.start_byte(),
                );
            }
            return false;
        }
        "integer" => cx.integer(node),
        "list" if node.named_child_count() > 0 => {
            cx.replace(node, "[]", crate::Operator::EmptyArray, "empty list")
        }
        "dictionary" if node.named_child_count() > 0 => {
            cx.replace(node, "{}", crate::Operator::EmptyObject, "empty dict")
        }
        "if_statement" | "elif_clause" | "while_statement" => {
            if let Some(cond) = node.child_by_field_name("condition") {
                let text = cx.of(cond);
                cx.replace(cond, format!("not ({text})"), Negation, "negate condition");
            }
            if kind == "if_statement" {
                guard(node, cx);
            }
        }
        "else_clause" if node.parent().is_some_and(|p| p.kind() == "if_statement") => {
            // From the end of the line before `else` so no blank line or indent is left behind.
            let start = cx.text[..node.start_byte()]
                .rfind('\n')
                .unwrap_or(node.start_byte());
            cx.edit(
                start,
                node.end_byte(),
                "",
                RemoveBlock,
                "delete else branch",
            );
        }
        "function_definition" => body(node, cx),
        // mutmut's keyword swaps: a loop left early, or an iteration ended as the loop.
        "break_statement" => cx.replace(node, "return", RemoveBlock, "replace break with return"),
        "continue_statement" => {
            cx.replace(node, "break", RemoveBlock, "replace continue with break")
        }
        "call" => method(node, cx),
        "lambda" => {
            if let Some(body) = node
                .child_by_field_name("body")
                .filter(|b| b.kind() != "none")
            {
                cx.replace(body, "None", ReturnValue, "replace lambda body with None");
            }
        }
        _ => {}
    }
    true
}

/// A docstring or a bare string is never entered; a logging or `print` call is arid; any other
/// call statement is removed (`pass` keeps the block a block).
fn statement(node: Node, cx: &mut Cx) -> bool {
    let children = code_children(node);
    let [e] = children.as_slice() else {
        return true;
    };
    if e.kind() == "string" || e.kind() == "concatenated_string" {
        return false;
    }
    let call = if e.kind() == "await" {
        e.named_child(0).unwrap_or(*e)
    } else {
        *e
    };
    if call.kind() != "call" {
        return true;
    }
    let callee = call
        .child_by_field_name("function")
        .map_or("", |f| cx.of(f))
        .to_owned();
    if is_arid(&callee) {
        return false;
    }
    cx.replace(node, "pass", RemoveCall, format!("remove call to {callee}"));
    true
}

fn is_arid(callee: &str) -> bool {
    if callee == "print" || callee == "pprint" || callee == "breakpoint" {
        return true;
    }
    let Some((object, _)) = callee.rsplit_once('.') else {
        return false;
    };
    let last = object
        .rsplit('.')
        .next()
        .unwrap_or(object)
        .to_ascii_lowercase();
    last == "logging"
        || last.ends_with("logger")
        || last == "log"
        || last == "_log"
        || last == "warnings"
}

/// An `if` with no `elif`/`else` whose body returns, raises, breaks or continues: a guard,
/// removed as a whole.
fn guard(node: Node, cx: &mut Cx) {
    if node.child_by_field_name("alternative").is_some() {
        return;
    }
    let Some(body) = node.child_by_field_name("consequence") else {
        return;
    };
    let exits = code_children(body).iter().any(|s| {
        matches!(
            s.kind(),
            "return_statement" | "raise_statement" | "break_statement" | "continue_statement"
        )
    });
    if exits {
        cx.replace(node, "pass", RemoveBlock, "delete guard");
    }
}

/// The body (after its docstring) replaced by `return None`.
fn body(function: Node, cx: &mut Cx) {
    let Some(block) = function.child_by_field_name("body") else {
        return;
    };
    let mut statements = code_children(block);
    let docstring = statements.first().is_some_and(|s| {
        s.kind() == "expression_statement" && s.named_child(0).is_some_and(|c| c.kind() == "string")
    });
    if docstring {
        statements.remove(0);
    }
    if statements.iter().all(|s| arid_statement(*s, cx)) {
        return;
    }
    let (Some(first), Some(last)) = (statements.first(), statements.last()) else {
        return;
    };
    let old = cx
        .text
        .get(first.start_byte()..last.end_byte())
        .unwrap_or("");
    if matches!(
        old,
        "return None"
            | "return"
            | "pass"
            | "..."
            | "raise NotImplementedError"
            | "raise NotImplementedError()"
    ) {
        return;
    }
    let name = function
        .child_by_field_name("name")
        .map_or("", |n| cx.of(n))
        .to_owned();
    cx.edit(
        first.start_byte(),
        last.end_byte(),
        "return None",
        ReturnValue,
        format!("replace {name} body with return None"),
    );
}

/// mutmut's string method swaps: `s.lower()` becomes `s.upper()`, `s.lstrip()` `s.rstrip()`,
/// `s.find(x)` `s.rfind(x)` and back.
fn method(node: Node, cx: &mut Cx) {
    const SWAPPED: &[(&str, &str)] = &[
        ("lower", "upper"),
        ("upper", "lower"),
        ("lstrip", "rstrip"),
        ("rstrip", "lstrip"),
        ("find", "rfind"),
        ("rfind", "find"),
        ("ljust", "rjust"),
        ("rjust", "ljust"),
        ("index", "rindex"),
        ("rindex", "index"),
        ("removeprefix", "removesuffix"),
        ("removesuffix", "removeprefix"),
        ("partition", "rpartition"),
        ("rpartition", "partition"),
    ];
    let Some(attribute) = node
        .child_by_field_name("function")
        .filter(|f| f.kind() == "attribute")
    else {
        return;
    };
    let Some(name) = attribute.child_by_field_name("attribute") else {
        return;
    };
    let old = cx.of(name);
    if let Some((_, new)) = SWAPPED.iter().find(|(from, _)| *from == old) {
        cx.replace(
            name,
            *new,
            RemoveCall,
            format!("replace .{old}() with .{new}()"),
        );
    }
}

/// An `assert`, or a `print` or logging call, as a statement.
fn arid_statement(statement: Node, cx: &Cx) -> bool {
    if statement.kind() == "assert_statement" {
        return true;
    }
    let children = code_children(statement);
    match children.as_slice() {
        [call] if statement.kind() == "expression_statement" && call.kind() == "call" => is_arid(
            call.child_by_field_name("function")
                .map_or("", |f| cx.of(f)),
        ),
        _ => false,
    }
}
