//! The site of a mutation: the name of the function it sits in, as a reader would look it up
//! (`Parser::next` for a Rust method, `Class.method` in Python, `Type.Method` in Go).

use tree_sitter::Node;

use crate::Language;

/// The enclosing function's name for the text at `start..end`, if it sits in one.
pub(crate) fn site(
    language: Language,
    root: Node,
    text: &str,
    start: usize,
    end: usize,
) -> Option<String> {
    let mut node = root.descendant_for_byte_range(start, end);
    while let Some(n) = node {
        let name = match language {
            Language::Rust => rust(n, text),
            Language::Python => python(n, text),
            Language::Go => go(n, text),
            _ => script(n, text),
        };
        if name.is_some() {
            return name;
        }
        node = n.parent();
    }
    None
}

fn field<'t>(node: Node, name: &str, text: &'t str) -> Option<&'t str> {
    node.child_by_field_name(name)
        .and_then(|n| text.get(n.byte_range()))
}

fn rust(node: Node, text: &str) -> Option<String> {
    if node.kind() != "function_item" {
        return None;
    }
    let name = field(node, "name", text)?;
    let mut up = node.parent();
    while let Some(n) = up {
        if n.kind() == "impl_item" {
            let ty = n.child_by_field_name("type")?;
            // `impl<T> Stack<T>` names its methods `Stack::push`, as cargo-mutants does.
            let ty = match ty.kind() {
                "generic_type" => ty.child_by_field_name("type").unwrap_or(ty),
                _ => ty,
            };
            return Some(format!("{}::{name}", text.get(ty.byte_range())?));
        }
        if n.kind() == "trait_item" {
            return Some(format!("{}::{name}", field(n, "name", text)?));
        }
        if n.kind() == "function_item" {
            break;
        }
        up = n.parent();
    }
    Some(name.to_owned())
}

fn python(node: Node, text: &str) -> Option<String> {
    if node.kind() != "function_definition" {
        return None;
    }
    let name = field(node, "name", text)?;
    let mut up = node.parent();
    while let Some(n) = up {
        match n.kind() {
            "class_definition" => return Some(format!("{}.{name}", field(n, "name", text)?)),
            "function_definition" => break,
            _ => up = n.parent(),
        }
    }
    Some(name.to_owned())
}

fn go(node: Node, text: &str) -> Option<String> {
    match node.kind() {
        "function_declaration" => field(node, "name", text).map(str::to_owned),
        "method_declaration" => {
            let name = field(node, "name", text)?;
            let receiver = node.child_by_field_name("receiver")?;
            let mut ty = receiver_type(receiver)?;
            loop {
                ty = match ty.kind() {
                    "pointer_type" => ty.named_child(0)?,
                    "generic_type" => ty.child_by_field_name("type")?,
                    _ => break,
                };
            }
            Some(format!("{}.{name}", text.get(ty.byte_range())?))
        }
        _ => None,
    }
}

fn receiver_type(receiver: Node) -> Option<Node> {
    let mut cursor = receiver.walk();
    let param = receiver
        .named_children(&mut cursor)
        .find(|c| c.kind() == "parameter_declaration")?;
    param.child_by_field_name("type")
}

fn script(node: Node, text: &str) -> Option<String> {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" => {
            field(node, "name", text).map(str::to_owned)
        }
        "method_definition" => {
            let name = field(node, "name", text)?;
            let class = node
                .parent()
                .and_then(|body| body.parent())
                .filter(|c| {
                    matches!(
                        c.kind(),
                        "class_declaration" | "class" | "abstract_class_declaration"
                    )
                })
                .and_then(|c| field(c, "name", text));
            Some(match class {
                Some(class) => format!("{class}.{name}"),
                None => name.to_owned(),
            })
        }
        "arrow_function" | "function_expression" | "function" => {
            if let Some(name) = field(node, "name", text) {
                return Some(name.to_owned());
            }
            let parent = node.parent()?;
            match parent.kind() {
                "variable_declarator" => field(parent, "name", text).map(str::to_owned),
                "pair" => field(parent, "key", text).map(str::to_owned),
                "assignment_expression" => field(parent, "left", text).map(str::to_owned),
                "public_field_definition" | "field_definition" => field(parent, "name", text)
                    .or_else(|| field(parent, "property", text))
                    .map(str::to_owned),
                _ => None,
            }
        }
        _ => None,
    }
}
