//! Values of a Rust return type, for replacing a function body (cargo-mutants' main family):
//! `()`, `0`/`1`/`-1`, `true`/`false`, `String::new()`, `"xyzzy".into()`, `vec![]`,
//! `Ok(..)`/`Some(..)` of the inner type's values, `Default::default()` when nothing better is
//! known, and nothing for `!` or an `impl Trait` other than an iterator.

use tree_sitter::Node;

/// Types nest; deeper than this the values would be too many to be useful.
const MAX_DEPTH: usize = 4;
/// No type makes more values than this (a tuple of tuples multiplies).
const MAX_VALUES: usize = 24;

/// The values a function returning `ret` (none: `()`) could return instead of its body.
pub(crate) fn values(ret: Option<Node>, text: &str) -> Vec<String> {
    match ret {
        None => vec!["()".to_owned()],
        Some(ty) => {
            let mut values = of(ty, text, 0);
            values.truncate(MAX_VALUES);
            values
        }
    }
}

fn s(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| (*i).to_owned()).collect()
}

fn text_of<'t>(node: Node, text: &'t str) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

fn of(ty: Node, text: &str, depth: usize) -> Vec<String> {
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    match ty.kind() {
        "unit_type" => s(&["()"]),
        "never_type" => Vec::new(),
        "primitive_type" | "type_identifier" => named(text_of(ty, text), true, &[], text, depth),
        "scoped_type_identifier" => {
            let last = ty
                .child_by_field_name("name")
                .map_or("", |n| text_of(n, text));
            named(last, false, &[], text, depth)
        }
        "generic_type" => {
            let Some(base) = ty.child_by_field_name("type") else {
                return s(&["Default::default()"]);
            };
            let (last, single) = match base.kind() {
                "scoped_type_identifier" => (
                    base.child_by_field_name("name")
                        .map_or("", |n| text_of(n, text)),
                    false,
                ),
                _ => (text_of(base, text), true),
            };
            let args: Vec<Node> = ty
                .child_by_field_name("type_arguments")
                .map(|a| {
                    let mut c = a.walk();
                    a.named_children(&mut c)
                        .filter(|n| n.kind() != "lifetime" && !n.is_extra())
                        .collect()
                })
                .unwrap_or_default();
            named(last, single, &args, text, depth)
        }
        "reference_type" => {
            let Some(inner) = ty.child_by_field_name("type") else {
                return Vec::new();
            };
            match inner.kind() {
                "primitive_type" if text_of(inner, text) == "str" => s(&["\"\"", "\"xyzzy\""]),
                "array_type" if inner.child_by_field_name("length").is_none() => {
                    slice(inner, text, depth)
                }
                _ => of(inner, text, depth + 1)
                    .into_iter()
                    .map(|v| format!("Box::leak(Box::new({v}))"))
                    .collect(),
            }
        }
        "array_type" => match ty.child_by_field_name("length") {
            None => slice(ty, text, depth),
            Some(len) => {
                let len = text_of(len, text);
                element(ty, text, depth)
                    .into_iter()
                    .map(|v| format!("[{v}; {len}]"))
                    .collect()
            }
        },
        "tuple_type" => {
            let mut c = ty.walk();
            let parts: Vec<Vec<String>> = ty
                .named_children(&mut c)
                .filter(|n| !n.is_extra())
                .map(|n| of(n, text, depth + 1))
                .collect();
            let mut product = vec![Vec::new()];
            for part in parts {
                let mut next = Vec::new();
                for prefix in &product {
                    for v in &part {
                        if next.len() < MAX_VALUES {
                            let mut row: Vec<String> = prefix.clone();
                            row.push(v.clone());
                            next.push(row);
                        }
                    }
                }
                product = next;
            }
            product
                .into_iter()
                .map(|row| format!("({})", row.join(", ")))
                .collect()
        }
        // `impl Iterator<Item = T> + 'a`: the bound's lifetime does not change the values.
        "bounded_type" => {
            let mut c = ty.walk();
            let first = ty.named_children(&mut c).find(|n| !n.is_extra());
            match first {
                Some(inner) if inner.kind() == "abstract_type" => of(inner, text, depth),
                _ => s(&["Default::default()"]),
            }
        }
        "abstract_type" => iterator_item(ty, text)
            .map(|item| {
                let mut v = s(&["::std::iter::empty()"]);
                v.extend(
                    of(item, text, depth + 1)
                        .into_iter()
                        .map(|r| format!("::std::iter::once({r})")),
                );
                v
            })
            .unwrap_or_default(),
        _ => s(&["Default::default()"]),
    }
}

fn element(array: Node, text: &str, depth: usize) -> Vec<String> {
    array
        .child_by_field_name("element")
        .map(|e| of(e, text, depth + 1))
        .unwrap_or_default()
}

fn slice(array: Node, text: &str, depth: usize) -> Vec<String> {
    let mut v = s(&["Vec::leak(Vec::new())"]);
    v.extend(
        element(array, text, depth)
            .into_iter()
            .map(|r| format!("Vec::leak(vec![{r}])")),
    );
    v
}

/// `impl Iterator<Item = T>`'s `T`.
fn iterator_item<'a>(abstract_type: Node<'a>, text: &str) -> Option<Node<'a>> {
    let bound = abstract_type.child_by_field_name("trait")?;
    if bound.kind() != "generic_type" {
        return None;
    }
    let base = bound.child_by_field_name("type")?;
    let last = match base.kind() {
        "scoped_type_identifier" => base.child_by_field_name("name")?,
        _ => base,
    };
    if text_of(last, text) != "Iterator" {
        return None;
    }
    let args = bound.child_by_field_name("type_arguments")?;
    let mut c = args.walk();
    let binding = args
        .named_children(&mut c)
        .find(|n| n.kind() == "type_binding")?;
    (binding
        .child_by_field_name("name")
        .map(|n| text_of(n, text))
        == Some("Item"))
    .then(|| binding.child_by_field_name("type"))
    .flatten()
}

const UNSIGNED: &[&str] = &["u8", "u16", "u32", "u64", "u128", "usize"];
const SIGNED: &[&str] = &["i8", "i16", "i32", "i64", "i128", "isize"];

/// A type by its last path segment (`single`: the path has no `::`) and type arguments.
fn named(last: &str, single: bool, args: &[Node], text: &str, depth: usize) -> Vec<String> {
    let first = || {
        args.first()
            .map(|a| of(*a, text, depth + 1))
            .unwrap_or_default()
    };
    let wrap = |values: Vec<String>, f: &dyn Fn(&str) -> String| -> Vec<String> {
        values.iter().map(|v| f(v)).collect()
    };
    if single && args.is_empty() {
        match last {
            "bool" => return s(&["true", "false"]),
            "String" => return s(&["String::new()", "\"xyzzy\".into()"]),
            "str" => return s(&["\"\"", "\"xyzzy\""]),
            "f32" | "f64" => return s(&["0.0", "1.0", "-1.0"]),
            _ if UNSIGNED.contains(&last) => return s(&["0", "1"]),
            _ if SIGNED.contains(&last) => return s(&["0", "1", "-1"]),
            _ => {}
        }
    }
    if args.is_empty() && last.starts_with("NonZero") && last.len() > 7 {
        return if last.starts_with("NonZeroU") {
            s(&["1.try_into().unwrap()"])
        } else {
            s(&["1.try_into().unwrap()", "(-1).try_into().unwrap()"])
        };
    }
    match (last, args.len()) {
        ("NonZero", 1..) => {
            let unsigned = UNSIGNED.contains(&text_of(args[0], text));
            if unsigned {
                s(&["1.try_into().unwrap()"])
            } else {
                s(&["1.try_into().unwrap()", "(-1).try_into().unwrap()"])
            }
        }
        ("Result", 0) => s(&["Ok(Default::default())"]),
        ("Result", _) => wrap(first(), &|v| format!("Ok({v})")),
        ("HttpResponse", _) => s(&["HttpResponse::Ok().finish()"]),
        ("Option", 1..) => {
            let mut v = s(&["None"]);
            v.extend(wrap(first(), &|v| format!("Some({v})")));
            v
        }
        ("Vec", 1..) => {
            let mut v = s(&["vec![]"]);
            v.extend(wrap(first(), &|v| format!("vec![{v}]")));
            v
        }
        ("Cow", 1..) => first()
            .iter()
            .flat_map(|v| {
                [
                    format!("Cow::Borrowed({v})"),
                    format!("Cow::Owned({v}.to_owned())"),
                ]
            })
            .collect(),
        ("Box" | "Cell" | "RefCell" | "Arc" | "Rc" | "Mutex", 1) => {
            wrap(first(), &|v| format!("{last}::new({v})"))
        }
        ("BinaryHeap" | "BTreeSet" | "HashSet" | "LinkedList" | "VecDeque", 1) => {
            let mut v = vec![format!("{last}::new()")];
            v.extend(wrap(first(), &|v| format!("{last}::from_iter([{v}])")));
            v
        }
        ("BTreeMap" | "HashMap", 2) => {
            let keys = of(args[0], text, depth + 1);
            let values = of(args[1], text, depth + 1);
            let mut v = vec![format!("{last}::new()")];
            for k in &keys {
                for val in &values {
                    v.push(format!("{last}::from_iter([({k}, {val})])"));
                }
            }
            v
        }
        (_, 1) => {
            let mut v = vec![format!("{last}::new()")];
            for r in first() {
                v.push(format!("{last}::from_iter([{r}])"));
                v.push(format!("{last}::new({r})"));
                v.push(format!("{last}::from({r})"));
            }
            v
        }
        _ => s(&["Default::default()"]),
    }
}
