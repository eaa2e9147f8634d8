//! Rust: cargo-mutants' families with their exact replacements, test code and arid code left
//! alone, sites named `Type::method`.

use super::{all, expect, untouched};
use crate::Operator::*;

const SRC: &str = r#"use std::collections::HashMap;

pub struct Stack {
    items: Vec<u32>,
}

impl Stack {
    pub fn new() -> Stack {
        Stack { items: Vec::new() }
    }

    /// Whether the stack holds more than `limit` items.
    pub fn over(&self, limit: usize) -> bool {
        self.items.len() > limit && !self.items.is_empty()
    }

    pub fn push(&mut self, x: u32) -> Result<(), String> {
        if x == 0 {
            return Err("zero".to_string());
        }
        self.items.push(x * 2);
        Ok(())
    }

    pub fn total(&self) -> u64 {
        let mut sum = 0;
        for x in &self.items {
            sum += u64::from(*x);
        }
        println!("total {}", sum - 1);
        sum
    }
}

pub fn label(n: i32) -> &'static str {
    match n {
        0 => "zero",
        1 => "one",
        _ if n < 0 => "negative",
        _ => "many",
    }
}

pub fn names() -> HashMap<String, u8> {
    HashMap::new()
}

pub fn option(flag: bool) -> Option<String> {
    // the name, if there is one
    if flag { Some(String::from("x")) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes() {
        let mut s = Stack { items: vec![] };
        assert!(s.push(1 + 1).is_ok());
    }
}
"#;

#[test]
fn binary_operators_follow_cargo_mutants() {
    let p = all("src/lib.rs", SRC);
    expect(
        &p,
        SRC,
        Boundary,
        "self.items.len() > limit",
        "self.items.len() >= limit",
    );
    expect(
        &p,
        SRC,
        Boundary,
        "self.items.len() > limit",
        "self.items.len() < limit",
    );
    expect(
        &p,
        SRC,
        Boundary,
        "self.items.len() > limit",
        "self.items.len() == limit",
    );
    expect(&p, SRC, Logical, "limit && !self", "limit || !self");
    expect(&p, SRC, Negation, "&& !self.items", "&& self.items");
    expect(&p, SRC, Equality, "if x == 0", "if x != 0");
    expect(&p, SRC, Arithmetic, "push(x * 2)", "push(x + 2)");
    expect(&p, SRC, Arithmetic, "push(x * 2)", "push(x / 2)");
    expect(&p, SRC, Assignment, "sum += u64", "sum -= u64");
    expect(&p, SRC, Assignment, "sum += u64", "sum *= u64");
    expect(&p, SRC, Boundary, "_ if n < 0", "_ if n <= 0");
}

#[test]
fn function_bodies_become_values_of_their_return_type() {
    let p = all("src/lib.rs", SRC);
    expect(
        &p,
        SRC,
        ReturnValue,
        "self.items.len() > limit && !self.items.is_empty()",
        "true",
    );
    expect(
        &p,
        SRC,
        ReturnValue,
        "self.items.len() > limit && !self.items.is_empty()",
        "false",
    );
    let push_body = "if x == 0 {\n            return Err(\"zero\".to_string());\n        }\n        self.items.push(x * 2);\n        Ok(())";
    expect(&p, SRC, ReturnValue, push_body, "Ok(())");
    let total_body = "let mut sum = 0;\n        for x in &self.items {\n            sum += u64::from(*x);\n        }\n        println!(\"total {}\", sum - 1);\n        sum";
    expect(&p, SRC, ReturnValue, total_body, "0");
    expect(&p, SRC, ReturnValue, total_body, "1");
    let option_body = "if flag { Some(String::from(\"x\")) } else { None }";
    expect(&p, SRC, ReturnValue, option_body, "None");
    expect(&p, SRC, ReturnValue, option_body, "Some(String::new())");
    expect(&p, SRC, ReturnValue, option_body, "Some(\"xyzzy\".into())");
    let label_body = "match n {\n        0 => \"zero\",\n        1 => \"one\",\n        _ if n < 0 => \"negative\",\n        _ => \"many\",\n    }";
    expect(&p, SRC, ReturnValue, label_body, "\"\"");
    expect(&p, SRC, ReturnValue, label_body, "\"xyzzy\"");
    // Constructors named `new` keep their bodies, as in cargo-mutants.
    assert!(!p
        .mutants
        .iter()
        .any(|m| m.operator == ReturnValue && m.site.as_deref() == Some("Stack::new")));
}

#[test]
fn names_hashmap_values_like_cargo_mutants() {
    let p = all("src/lib.rs", SRC);
    let names: Vec<&str> = p
        .mutants
        .iter()
        .filter(|m| m.site.as_deref() == Some("names") && m.operator == ReturnValue)
        .map(|m| m.replace.as_str())
        .collect();
    assert!(
        names.contains(&"HashMap::from_iter([(String::new(), 0)])"),
        "{names:?}"
    );
    assert!(
        names.contains(&"HashMap::from_iter([(\"xyzzy\".into(), 1)])"),
        "{names:?}"
    );
}

#[test]
fn match_arms_guards_calls_and_else_branches() {
    let p = all("src/lib.rs", SRC);
    expect(&p, SRC, RemoveBlock, "0 => \"zero\",", "");
    expect(&p, SRC, Boolean, "_ if n < 0", "_ if true");
    expect(&p, SRC, Boolean, "_ if n < 0", "_ if false");
    expect(&p, SRC, RemoveCall, "self.items.push(x * 2);", "");
    // This `if` gives the function's value: without its `else` it would not build.
    let without_else = SRC.replacen(" else { None }", "", 1);
    assert!(!p
        .mutants
        .iter()
        .any(|m| super::mutated(SRC, m) == without_else));
    let unit = "fn f(a: bool) {\n    if a {\n        g();\n    } else {\n        h();\n    }\n    k();\n}\n";
    let q = all("src/u.rs", unit);
    expect(&q, unit, RemoveBlock, " else {\n        h();\n    }", "");
    expect(&p, SRC, Negation, "if flag {", "if !(flag) {");
    expect(
        &p,
        SRC,
        RemoveBlock,
        "if x == 0 {\n            return Err(\"zero\".to_string());\n        }\n",
        "\n",
    );
}

#[test]
fn constants_and_strings() {
    let p = all("src/lib.rs", SRC);
    expect(&p, SRC, Constant, "push(x * 2)", "push(x * 3)");
    expect(&p, SRC, Constant, "push(x * 2)", "push(x * 1)");
    expect(&p, SRC, String, "Err(\"zero\"", "Err(\"\"");
}

#[test]
fn sites_name_the_impl_type() {
    let p = all("src/lib.rs", SRC);
    let over = p
        .mutants
        .iter()
        .find(|m| m.anchor.contains("limit &&"))
        .unwrap();
    assert_eq!(over.site.as_deref(), Some("Stack::over"));
    let label = p
        .mutants
        .iter()
        .find(|m| m.anchor.contains("n < 0"))
        .unwrap();
    assert_eq!(label.site.as_deref(), Some("label"));
}

#[test]
fn test_code_and_arid_code_are_never_mutated() {
    let p = all("src/lib.rs", SRC);
    let tests_at = SRC.find("#[cfg(test)]").unwrap();
    for m in &p.mutants {
        assert!(
            SRC.find(&m.anchor).unwrap() < tests_at,
            "mutant in test code: {m:?}"
        );
    }
    untouched(&p, SRC, "println!(\"total {}\", sum - 1);");
    untouched(
        &p,
        SRC,
        "/// Whether the stack holds more than `limit` items.",
    );
    let tested = "#[test]\nfn t() { let a = 1 + 2; }\nfn f() -> u8 { 3 }\n";
    let q = all("src/x.rs", tested);
    untouched(&q, tested, "let a = 1 + 2;");
    assert!(!q.mutants.is_empty());
}

#[test]
fn the_control_adds_a_word_to_a_plain_comment() {
    let p = all("src/lib.rs", SRC);
    let c = p.control.expect("a control");
    assert_eq!(c.anchor, "// the name, if there is one");
    assert_eq!(c.replace, "// the name, if there is one (unchanged)");
    assert_eq!(c.operator, Control);
}

#[test]
fn without_a_plain_comment_the_control_follows_a_statement() {
    let src = "/// Doc.\nfn f() -> u32 {\n    let a = 1;\n    a + 1\n}\n";
    let p = all("src/lib.rs", src);
    let c = p.control.expect("a control");
    assert_eq!(c.anchor, "let a = 1;");
    assert_eq!(c.replace, "let a = 1; // (unchanged)");
}

#[test]
fn literals_that_fix_a_type_are_left_alone() {
    let src = "extern \"C\" {\n    fn c_abs(x: i32) -> i32;\n}\n\nfn f(p: (u8, u8)) -> [u8; 4] {\n    let n = p.1 + 7;\n    [n; 4]\n}\n";
    let p = all("src/l.rs", src);
    untouched(&p, src, "\"C\"");
    untouched(&p, src, ".1");
    untouched(&p, src, "; 4]\n}");
    expect(&p, src, Constant, "p.1 + 7", "p.1 + 8");
}

#[test]
fn iterators_with_a_lifetime_bound_get_empty_and_once() {
    let src = "fn values<'a>(v: &'a [String]) -> impl Iterator<Item = &'a str> + 'a {\n    v.iter().map(|s| s.as_str())\n}\n";
    let p = all("src/i.rs", src);
    let body = "v.iter().map(|s| s.as_str())";
    expect(&p, src, ReturnValue, body, "::std::iter::empty()");
    expect(&p, src, ReturnValue, body, "::std::iter::once(\"\")");
    expect(&p, src, ReturnValue, body, "::std::iter::once(\"xyzzy\")");
}

#[test]
fn only_cfg_predicates_that_hold_under_test_alone_are_test_code() {
    let src = "#[cfg(all(unix, test))]\nfn a() -> u8 { 1 + 1 }\n#[cfg(not(test))]\nfn b() -> u8 { 2 + 2 }\n#[cfg(any(test, feature = \"x\"))]\nfn c() -> u8 { 3 + 3 }\n#[tokio::test]\nasync fn d() { e(4 + 4); }\n";
    let p = all("src/cfg.rs", src);
    untouched(&p, src, "1 + 1");
    untouched(&p, src, "4 + 4");
    expect(&p, src, Arithmetic, "2 + 2", "2 - 2");
    expect(&p, src, Arithmetic, "3 + 3", "3 - 3");
}

#[test]
fn a_body_of_logging_alone_is_arid() {
    let src = "fn report(n: u8) {\n    println!(\"n = {n}\");\n    log::debug!(\"done\");\n}\n\nfn work(n: u8) -> u8 {\n    dbg!(n);\n    n\n}\n";
    let p = all("src/r.rs", src);
    assert!(
        !p.mutants
            .iter()
            .any(|m| m.site.as_deref() == Some("report")),
        "{}",
        super::listing(&p)
    );
    expect(&p, src, ReturnValue, "dbg!(n);\n    n", "0");
}
