//! JavaScript and TypeScript (and TSX): Stryker's mutators as its instrumenter applies them
//! (equality and boundary swaps, conditions made `true`/`false`, logical, arithmetic,
//! assignment and update operators, `!`/`-`/`~`, blocks emptied, arrow bodies made
//! `undefined`, strings, arrays and objects emptied, optional chaining, regexes) plus the
//! shared families. `console.*` calls, directives and type annotations are never entered.

use tree_sitter::Node;

use super::{code_children, unparenthesized, Cx};
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
    ("===", &["!=="], Equality),
    ("!==", &["==="], Equality),
    ("&&", &["||"], Logical),
    ("||", &["&&"], Logical),
    ("??", &["&&"], Logical),
    ("&", &["|"], Bitwise),
    ("|", &["&"], Bitwise),
    ("<<", &[">>"], Bitwise),
    (">>", &["<<"], Bitwise),
];

const ARITHMETIC: &[(&str, &[&str], Operator)] = &[
    ("+", &["-"], Arithmetic),
    ("-", &["+"], Arithmetic),
    ("*", &["/"], Arithmetic),
    ("/", &["*"], Arithmetic),
    ("%", &["*"], Arithmetic),
];

const ASSIGN: &[(&str, &[&str], Operator)] = &[
    ("+=", &["-="], Assignment),
    ("-=", &["+="], Assignment),
    ("*=", &["/="], Assignment),
    ("/=", &["*="], Assignment),
    ("%=", &["*="], Assignment),
    ("<<=", &[">>="], Assignment),
    (">>=", &["<<="], Assignment),
    ("&=", &["|="], Assignment),
    ("|=", &["&="], Assignment),
    ("&&=", &["||="], Assignment),
    ("||=", &["&&="], Assignment),
    ("??=", &["&&="], Assignment),
];

/// Operators whose expression is a boolean, which Stryker also replaces by `true` and `false`.
const BOOLEAN_OPERATORS: &[&str] = &["!=", "!==", "&&", "<", "<=", "==", "===", ">", ">=", "||"];

/// Type-level and module-level syntax: nothing inside is run as written.
const NOT_ENTERED: &[&str] = &[
    "comment",
    "import_statement",
    "type_annotation",
    "type_alias_declaration",
    "interface_declaration",
    "type_arguments",
    "type_parameters",
    "ambient_declaration",
    "abstract_method_signature",
    "index_signature",
    "literal_type",
    "enum_declaration",
    "debugger_statement",
    "decorator",
    "asserts_annotation",
    "type_predicate_annotation",
    "opting_type_annotation",
    "omitting_type_annotation",
];

const FUNCTIONS: &[&str] = &[
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "generator_function",
];

pub(crate) fn visit(node: Node, cx: &mut Cx) -> bool {
    let kind = node.kind();
    if NOT_ENTERED.contains(&kind) {
        return false;
    }
    match kind {
        "expression_statement" => return statement(node, cx),
        "binary_expression" => binary(node, cx),
        "augmented_assignment_expression" => {
            let right = node.child_by_field_name("right").map(|r| r.kind());
            let op = node.child_by_field_name("operator");
            if let Some(op) = op {
                let logical = matches!(cx.of(op), "&&=" | "||=" | "??=");
                if logical || !matches!(right, Some("string" | "template_string")) {
                    cx.swap(op, ASSIGN);
                }
            }
        }
        "update_expression" => {
            if let Some(op) = node.child_by_field_name("operator") {
                let new = if cx.of(op) == "++" { "--" } else { "++" };
                cx.replace(op, new, Update, format!("replace {} with {new}", cx.of(op)));
            }
        }
        "unary_expression" => {
            if let Some(op) = node.child_by_field_name("operator") {
                match cx.of(op) {
                    "!" => cx.replace(op, "", Negation, "delete !"),
                    "-" => cx.replace(op, "+", Arithmetic, "replace - with +"),
                    "+" => cx.replace(op, "-", Arithmetic, "replace + with -"),
                    "~" => cx.replace(op, "", Bitwise, "delete ~"),
                    _ => {}
                }
            }
        }
        "true" | "false" => {
            let new = if kind == "true" { "false" } else { "true" };
            cx.replace(node, new, Boolean, format!("replace {kind} with {new}"));
        }
        "string" if string_mutable(node, cx) => cx.string(node, 1, 1),
        "template_string" => {
            let empty = cx.of(node) == "``";
            let new = if empty { "`Stryker was here!`" } else { "``" };
            cx.replace(
                node,
                new,
                crate::Operator::String,
                if empty {
                    "fill empty template"
                } else {
                    "empty template"
                },
            );
        }
        "number" => cx.integer(node),
        "array" => {
            if node.named_child_count() > 0 {
                cx.replace(node, "[]", crate::Operator::EmptyArray, "empty array");
            } else {
                cx.replace(
                    node,
                    "[\"Stryker was here\"]",
                    crate::Operator::EmptyArray,
                    "fill empty array",
                );
            }
        }
        "object" if !code_children(node).is_empty() => {
            cx.replace(node, "{}", crate::Operator::EmptyObject, "empty object");
        }
        "optional_chain" => {
            let member = node
                .parent()
                .is_some_and(|p| p.kind() == "member_expression");
            cx.replace(
                node,
                if member { "." } else { "" },
                crate::Operator::OptionalChaining,
                "replace ?. with .",
            );
        }
        "regex" => super::regex::mutate(node, cx),
        "if_statement" => if_statement(node, cx),
        "while_statement" | "do_statement" | "for_statement" => {
            let cond = node.child_by_field_name("condition");
            if let Some(empty) = cond.filter(|c| c.kind() == "empty_statement") {
                // `for (;;)` becomes `for (; false;)`, as Stryker has it.
                cx.replace(
                    empty,
                    "false;",
                    Boolean,
                    "replace loop condition with false",
                );
            } else if let Some(cond) = cond.filter(|c| c.is_named()) {
                let inner = unparenthesized(cond);
                if inner.kind() != "false" {
                    cx.replace(inner, "false", Boolean, "replace loop condition with false");
                }
            }
        }
        "call_expression" => {
            method(node, cx);
            array_constructor(node, cx);
        }
        "new_expression" => array_constructor(node, cx),
        "switch_case" | "switch_default" => {
            let body = code_children(node);
            let statements: Vec<&Node> = body
                .iter()
                .filter(|c| c.kind().ends_with("statement") || c.kind() == "statement_block")
                .collect();
            if let (Some(first), Some(last)) = (statements.first(), statements.last()) {
                cx.edit(
                    first.start_byte(),
                    last.end_byte(),
                    "",
                    RemoveBlock,
                    "delete case body",
                );
            }
        }
        "statement_block" => block(node, cx),
        "arrow_function" => {
            if let Some(body) = node.child_by_field_name("body") {
                if body.kind() != "statement_block" && cx.of(body) != "undefined" {
                    cx.replace(
                        node,
                        "() => undefined",
                        ReturnValue,
                        "replace arrow function with () => undefined",
                    );
                }
            }
        }
        _ => {}
    }
    true
}

/// Strings that name a module, a key or a type, or that are directives, are left alone.
fn string_mutable(node: Node, cx: &Cx) -> bool {
    let Some(parent) = node.parent() else {
        return true;
    };
    match parent.kind() {
        "import_statement"
        | "export_statement"
        | "expression_statement"
        | "literal_type"
        | "jsx_attribute"
        | "import_require_clause"
        | "external_module_reference" => false,
        "pair" | "public_field_definition" | "method_definition" | "property_signature" => parent
            .child_by_field_name("key")
            .or(parent.child_by_field_name("name"))
            .is_none_or(|k| k.id() != node.id()),
        "arguments" => {
            let callee = parent
                .parent()
                .and_then(|c| c.child_by_field_name("function"))
                .map(|f| cx.of(f));
            !matches!(callee, Some("require" | "Symbol" | "import"))
        }
        _ => true,
    }
}

fn statement(node: Node, cx: &mut Cx) -> bool {
    let Some(mut e) = node.named_child(0) else {
        return true;
    };
    if matches!(e.kind(), "string" | "template_string") || is_console(node, cx) {
        return false;
    }
    if e.kind() == "await_expression" {
        e = e.named_child(0).unwrap_or(e);
    }
    if e.kind() == "call_expression" {
        let callee = e
            .child_by_field_name("function")
            .map_or("", |f| cx.of(f))
            .to_owned();
        // A derived class's constructor must call `super(...)`.
        if callee == "super" {
            return true;
        }
        let loose = node.parent().is_some_and(|p| {
            !matches!(
                p.kind(),
                "statement_block" | "program" | "switch_case" | "switch_default"
            )
        });
        cx.replace(
            node,
            if loose { ";" } else { "" },
            RemoveCall,
            format!("remove call to {callee}"),
        );
    }
    true
}

fn binary(node: Node, cx: &mut Cx) {
    let Some(op) = node.child_by_field_name("operator") else {
        return;
    };
    let operator = cx.of(op);
    cx.swap(op, BINARY);
    let stringy =
        |n: Option<Node>| matches!(n.map(|n| n.kind()), Some("string" | "template_string"));
    let left = node.child_by_field_name("left");
    let left_leaf = match left {
        Some(l) if l.kind() == "binary_expression" => l.child_by_field_name("right"),
        l => l,
    };
    if !stringy(node.child_by_field_name("right")) && !stringy(left_leaf) {
        cx.swap(op, ARITHMETIC);
    }
    if !BOOLEAN_OPERATORS.contains(&operator) {
        return;
    }
    // Stryker's ConditionalExpression: an if's or a loop's own test is handled there.
    let mut parent = node.parent();
    while let Some(p) = parent.filter(|p| p.kind() == "parenthesized_expression") {
        parent = p.parent();
    }
    let parent_kind = parent.map_or("", |p| p.kind());
    if matches!(
        parent_kind,
        "if_statement" | "while_statement" | "do_statement" | "for_statement"
    ) {
        return;
    }
    let parent_operator = parent
        .filter(|p| p.kind() == "binary_expression")
        .and_then(|p| p.child_by_field_name("operator"))
        .map(|o| cx.of(o));
    if parent_operator != Some("||") {
        cx.replace(node, "true", Boolean, "replace expression with true");
    }
    if parent_operator != Some("&&") {
        cx.replace(node, "false", Boolean, "replace expression with false");
    }
}

fn if_statement(node: Node, cx: &mut Cx) {
    if let Some(cond) = node.child_by_field_name("condition") {
        let inner = unparenthesized(cond);
        let text = cx.of(inner);
        cx.replace(inner, format!("!({text})"), Negation, "negate if condition");
        cx.replace(inner, "true", Boolean, "replace if condition with true");
        cx.replace(inner, "false", Boolean, "replace if condition with false");
    }
    let consequence = node.child_by_field_name("consequence");
    match (node.child_by_field_name("alternative"), consequence) {
        (Some(alternative), Some(consequence)) => {
            cx.edit(
                consequence.end_byte(),
                alternative.end_byte(),
                "",
                RemoveBlock,
                "delete else branch",
            );
        }
        (None, Some(consequence)) => {
            let exits = |s: &Node| {
                matches!(
                    s.kind(),
                    "return_statement"
                        | "throw_statement"
                        | "break_statement"
                        | "continue_statement"
                )
            };
            let guard = exits(&consequence)
                || (consequence.kind() == "statement_block"
                    && code_children(consequence).iter().any(exits));
            if guard {
                let loose = node.parent().is_some_and(|p| {
                    !matches!(
                        p.kind(),
                        "statement_block" | "program" | "switch_case" | "switch_default"
                    )
                });
                cx.replace(
                    node,
                    if loose { ";" } else { "" },
                    RemoveBlock,
                    "delete guard",
                );
            }
        }
        _ => {}
    }
}

/// A block emptied (Stryker's BlockStatement); a function's body so emptied is its return value
/// replaced. A constructor that calls `super(...)` keeps its body, as Stryker's does.
fn block(node: Node, cx: &mut Cx) {
    // Empty, or `console.*` calls alone: nothing to remove that a test should notice.
    if code_children(node).iter().all(|s| is_console(*s, cx)) {
        return;
    }
    let parent = node.parent();
    let function = parent.is_some_and(|p| FUNCTIONS.contains(&p.kind()));
    if let Some(p) = parent.filter(|p| p.kind() == "method_definition") {
        let constructor = p
            .child_by_field_name("name")
            .is_some_and(|n| cx.of(n) == "constructor");
        if constructor
            && ((cx.of(node).contains("super(") && initializes_fields(p, cx))
                || leaves_fields_to_the_constructor(p, cx))
        {
            return;
        }
    }
    if function {
        // A TypeScript function that declares it returns a value does not compile with an
        // empty body (`tsc`: not all code paths return a value): such a proposal is unviable
        // by construction, so it is not made.
        let declared = parent
            .and_then(|p| p.child_by_field_name("return_type"))
            .map(|t| cx.of(t).trim_start_matches(':').trim().to_owned());
        if declared.is_some_and(|t| !returns_nothing(&t)) {
            return;
        }
        let name = parent
            .and_then(|p| p.child_by_field_name("name"))
            .map_or("function".to_owned(), |n| cx.of(n).to_owned());
        cx.replace(
            node,
            "{}",
            ReturnValue,
            format!("replace {name} body with {{}}"),
        );
    } else {
        cx.replace(node, "{}", RemoveBlock, "empty block");
    }
}

/// Whether a declared return type admits a body that returns nothing.
fn returns_nothing(declared: &str) -> bool {
    let t: String = declared.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        t.as_str(),
        "void" | "undefined" | "any" | "unknown" | "Promise<void>" | "Promise<undefined>"
    ) || t.starts_with("asserts")
}

/// Stryker's MethodExpression: `s.trim()` becomes `s`, `s.toLowerCase()` becomes
/// `s.toUpperCase()`, `xs.every(f)` becomes `xs.some(f)` and the like.
fn method(node: Node, cx: &mut Cx) {
    const REMOVED: &[&str] = &[
        "charAt",
        "filter",
        "reverse",
        "slice",
        "sort",
        "substr",
        "substring",
        "trim",
    ];
    const SWAPPED: &[(&str, &str)] = &[
        ("endsWith", "startsWith"),
        ("startsWith", "endsWith"),
        ("every", "some"),
        ("some", "every"),
        ("toLocaleLowerCase", "toLocaleUpperCase"),
        ("toLocaleUpperCase", "toLocaleLowerCase"),
        ("toLowerCase", "toUpperCase"),
        ("toUpperCase", "toLowerCase"),
        ("trimEnd", "trimStart"),
        ("trimStart", "trimEnd"),
        ("min", "max"),
        ("max", "min"),
    ];
    let Some(callee) = node
        .child_by_field_name("function")
        .filter(|f| f.kind() == "member_expression")
    else {
        return;
    };
    let (Some(object), Some(property)) = (
        callee.child_by_field_name("object"),
        callee.child_by_field_name("property"),
    ) else {
        return;
    };
    if property.kind() != "property_identifier" {
        return;
    }
    let name = cx.of(property);
    if REMOVED.contains(&name) {
        let object = cx.of(object).to_owned();
        cx.replace(node, object, RemoveCall, format!("remove .{name}()"));
    } else if let Some((_, new)) = SWAPPED.iter().find(|(from, _)| *from == name) {
        cx.replace(
            property,
            *new,
            RemoveCall,
            format!("replace .{name}() with .{new}()"),
        );
    }
}

/// A constructor whose class initialises fields (`x = 1;`, or TypeScript parameter properties
/// such as `constructor(private a: A)`) must call `super(...)` first: emptying its body would
/// not build, so Stryker leaves it, and so does this.
fn initializes_fields(constructor: Node, cx: &Cx) -> bool {
    let parameter_properties = constructor
        .child_by_field_name("parameters")
        .is_some_and(|ps| {
            code_children(ps).iter().any(|p| {
                code_children(*p).iter().any(|c| {
                    matches!(c.kind(), "accessibility_modifier" | "override_modifier")
                        || cx.of(*c) == "readonly"
                })
            })
        });
    let initialised_fields = constructor.parent().is_some_and(|body| {
        code_children(body).iter().any(|member| {
            matches!(
                member.kind(),
                "field_definition" | "public_field_definition"
            ) && member.child_by_field_name("value").is_some()
        })
    });
    parameter_properties || initialised_fields
}

/// A TypeScript class that declares a typed field with no value, neither optional (`x?: T`)
/// nor definite (`x!: T`), must set it in its constructor (`tsc`'s strict property
/// initialisation): emptying that constructor does not build.
fn leaves_fields_to_the_constructor(constructor: Node, cx: &Cx) -> bool {
    constructor.parent().is_some_and(|body| {
        code_children(body).iter().any(|member| {
            member.kind() == "public_field_definition"
                && member.child_by_field_name("value").is_none()
                && member.child_by_field_name("type").is_some()
                && {
                    let text = cx.of(*member);
                    let head = text.split(':').next().unwrap_or("").trim_end();
                    !head.ends_with('?') && !head.ends_with('!') && !head.starts_with("declare")
                }
        })
    })
}

/// Stryker's ArrayDeclaration for the constructor: `new Array(n)` becomes `new Array()`, and
/// `new Array()` becomes `new Array([])`.
fn array_constructor(node: Node, cx: &mut Cx) {
    let field = if node.kind() == "new_expression" {
        "constructor"
    } else {
        "function"
    };
    if node
        .child_by_field_name(field)
        .is_none_or(|c| cx.of(c) != "Array")
    {
        return;
    }
    let Some(arguments) = node.child_by_field_name("arguments") else {
        return;
    };
    let new = if code_children(arguments).is_empty() {
        "([])"
    } else {
        "()"
    };
    cx.replace(
        arguments,
        new,
        crate::Operator::EmptyArray,
        format!("replace Array arguments with {new}"),
    );
}

/// A `console.*` call as a statement.
fn is_console(statement: Node, cx: &Cx) -> bool {
    statement.kind() == "expression_statement"
        && statement
            .named_child(0)
            .filter(|c| c.kind() == "call_expression")
            .and_then(|c| c.child_by_field_name("function"))
            .is_some_and(|f| {
                let callee = cx.of(f);
                callee == "console"
                    || callee.starts_with("console.")
                    || callee.starts_with("console?.")
            })
}
