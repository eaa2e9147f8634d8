//! JavaScript, TypeScript and TSX: Stryker's mutators with their exact replacements, arid
//! `console.*` calls and directives left alone, sites for methods and arrow functions.

use super::{all, expect, untouched};
use crate::Language;
use crate::Operator::*;

const JS: &str = r#""use strict";
const re = /^v\d+$/;

function clamp(x, lo, hi) {
  if (x < lo) {
    return lo;
  }
  console.log("clamp", x);
  notify(x);
  return x >= hi ? hi : x;
}

class Counter {
  constructor() {
    this.n = 0;
  }
  bump(step) {
    this.n += step;
    this.n++;
    return this.n === 10 && !this.done;
  }
}

const double = (a) => a * 2;
const user = { name: "ann", tags: ["a", "b"] };
const city = user?.address;
let label = "".trim().toLowerCase();
while (label.length > 3) { label = label.slice(1); }
"#;

#[test]
fn equality_boundaries_and_conditions() {
    let p = all("src/clamp.js", JS);
    expect(&p, JS, Boundary, "x < lo", "x <= lo");
    expect(&p, JS, Boundary, "x < lo", "x >= lo");
    expect(&p, JS, Boundary, "x >= hi", "x > hi");
    expect(&p, JS, Boundary, "x >= hi", "x < hi");
    expect(&p, JS, Equality, "this.n === 10", "this.n !== 10");
    expect(&p, JS, Logical, "10 && !this", "10 || !this");
    expect(&p, JS, Negation, "if (x < lo)", "if (!(x < lo))");
    expect(&p, JS, Boolean, "if (x < lo)", "if (true)");
    expect(&p, JS, Boolean, "if (x < lo)", "if (false)");
    expect(&p, JS, Boolean, "while (label.length > 3)", "while (false)");
    // Stryker's ConditionalExpression: `x >= hi` stands alone, `this.n === 10` is under `&&`.
    expect(&p, JS, Boolean, "x >= hi ?", "true ?");
    expect(&p, JS, Boolean, "x >= hi ?", "false ?");
    expect(&p, JS, Boolean, "this.n === 10", "true");
    let under_and = JS.replacen("this.n === 10", "false", 1);
    assert!(
        !p.mutants.iter().any(|m| super::mutated(JS, m) == under_and),
        "false && y is the same as false"
    );
}

#[test]
fn operators_literals_and_blocks() {
    let p = all("src/clamp.js", JS);
    expect(&p, JS, Arithmetic, "a * 2", "a / 2");
    expect(&p, JS, Assignment, "this.n += step", "this.n -= step");
    expect(&p, JS, Update, "this.n++", "this.n--");
    expect(&p, JS, Negation, "!this.done", "this.done");
    expect(&p, JS, String, "name: \"ann\"", "name: \"\"");
    expect(
        &p,
        JS,
        String,
        "let label = \"\"",
        "let label = \"Stryker was here!\"",
    );
    expect(
        &p,
        JS,
        RemoveCall,
        "\"\".trim().toLowerCase()",
        "\"\".toLowerCase()",
    );
    expect(
        &p,
        JS,
        RemoveCall,
        "trim().toLowerCase()",
        "trim().toUpperCase()",
    );
    expect(&p, JS, EmptyArray, "[\"a\", \"b\"]", "[]");
    expect(
        &p,
        JS,
        EmptyObject,
        "{ name: \"ann\", tags: [\"a\", \"b\"] }",
        "{}",
    );
    expect(&p, JS, OptionalChaining, "user?.address", "user.address");
    expect(&p, JS, Regex, "/^v\\d+$/", "/v\\d+$/");
    expect(&p, JS, Regex, "/^v\\d+$/", "/^v\\d+/");
    expect(&p, JS, Regex, "/^v\\d+$/", "/^v\\D+$/");
    expect(&p, JS, RemoveCall, "  notify(x);\n", "  \n");
    expect(&p, JS, ReturnValue, "(a) => a * 2", "() => undefined");
    expect(
        &p,
        JS,
        ReturnValue,
        "{\n    this.n += step;\n    this.n++;\n    return this.n === 10 && !this.done;\n  }",
        "{}",
    );
    expect(&p, JS, RemoveBlock, "{ label = label.slice(1); }", "{}");
    expect(
        &p,
        JS,
        RemoveBlock,
        "if (x < lo) {\n    return lo;\n  }\n",
        "\n",
    );
    expect(&p, JS, Constant, "a * 2", "a * 3");
}

#[test]
fn arid_calls_and_directives_are_left_alone() {
    let p = all("src/clamp.js", JS);
    untouched(&p, JS, "console.log(\"clamp\", x);");
    untouched(&p, JS, "\"use strict\";");
    assert!(!p.mutants.iter().any(|m| m.description.contains("console")));
}

#[test]
fn sites_name_functions_methods_and_arrows() {
    let p = all("src/clamp.js", JS);
    let site = |anchor: &str| {
        p.mutants
            .iter()
            .find(|m| m.anchor.contains(anchor))
            .and_then(|m| m.site.clone())
    };
    assert_eq!(site("x < lo").as_deref(), Some("clamp"));
    assert_eq!(site("this.n++").as_deref(), Some("Counter.bump"));
    assert_eq!(site("a * 2").as_deref(), Some("double"));
}

const TS: &str = r#"// Totals for an order.
export interface Line { qty: number; price: number; kind: "a" | "b" }

export function total(lines: Line[], discount?: number): number {
  let sum: number = 0;
  for (const l of lines) {
    sum += l.qty * l.price;
  }
  return discount !== undefined ? sum - discount : sum;
}
"#;

#[test]
fn typescript_types_are_left_alone_and_code_is_mutated() {
    let p = all("src/total.ts", TS);
    assert_eq!(p.language, Language::TypeScript);
    expect(&p, TS, Arithmetic, "l.qty * l.price", "l.qty / l.price");
    expect(&p, TS, Arithmetic, "sum - discount", "sum + discount");
    expect(
        &p,
        TS,
        Equality,
        "discount !== undefined",
        "discount === undefined",
    );
    untouched(&p, TS, "kind: \"a\" | \"b\"");
    let c = p.control.expect("a control");
    assert_eq!(c.replace, "// Totals for an order. (unchanged)");
}

#[test]
fn a_typescript_body_that_must_return_a_value_is_not_emptied() {
    let src = "export function total(xs: number[]): number {\n  return xs.length + 1;\n}\nexport function log(xs: number[]): void {\n  send(xs);\n}\nconst f = async (x: number): Promise<void> => {\n  await go(x);\n};\n";
    let p = all("src/t.ts", src);
    // `{}` where a number is declared does not compile: not proposed.
    let emptied = src.replacen("{\n  return xs.length + 1;\n}", "{}", 1);
    assert!(
        !p.mutants.iter().any(|m| super::mutated(src, m) == emptied),
        "an empty body for a function returning number"
    );
    // A function declared to return nothing may lose its body, as Stryker's BlockStatement does.
    expect(&p, src, ReturnValue, "{\n  send(xs);\n}", "{}");
    expect(&p, src, ReturnValue, "{\n  await go(x);\n}", "{}");
    // The body's own code is still mutated.
    expect(&p, src, Arithmetic, "xs.length + 1", "xs.length - 1");
}

#[test]
fn a_typescript_constructor_that_must_set_its_fields_keeps_its_body() {
    let src = "class A {\n  #n: number\n  label?: string\n  constructor(n: number) {\n    this.#n = n + 1\n  }\n}\nclass B {\n  m!: number\n  constructor() {\n    go(1)\n  }\n}\n";
    let p = all("src/a.ts", src);
    let emptied = src.replacen("{\n    this.#n = n + 1\n  }", "{}", 1);
    assert!(
        !p.mutants.iter().any(|m| super::mutated(src, m) == emptied),
        "a constructor that must set #n was emptied"
    );
    expect(&p, src, Arithmetic, "n + 1", "n - 1");
    // Fields that are optional or definite leave the constructor free to be emptied.
    expect(&p, src, ReturnValue, "{\n    go(1)\n  }", "{}");
}

#[test]
fn tsx_has_its_own_grammar() {
    let src = "export const Item = (p: { n: number }) => (\n  <li className=\"row\" onClick={() => p.n > 0 && go(p.n - 1)}>{p.n > 1 ? \"many\" : \"one\"}</li>\n);\n";
    let p = all("src/Item.tsx", src);
    assert_eq!(p.language, Language::Tsx);
    expect(&p, src, Boundary, "p.n > 1", "p.n >= 1");
    // Code inside a JSX attribute is mutated; the attribute's own string is not.
    expect(&p, src, Arithmetic, "p.n - 1", "p.n + 1");
    untouched(&p, src, "\"row\"");
}

#[test]
fn stryker_loops_array_constructors_and_regex_quantifiers() {
    let src = "for (;;) { a(); }\nconst xs = new Array(n + 1);\nconst re = /^-{1,2}[\\s.]/;\nclass A extends B {\n  x = 1;\n  constructor() { super(); this.y = 2; }\n}\nclass C extends B {\n  constructor() { super(); this.z = 3; }\n}\n";
    let p = all("src/s.js", src);
    expect(&p, src, Boolean, "for (;;)", "for (;false;)");
    expect(&p, src, EmptyArray, "new Array(n + 1)", "new Array()");
    expect(&p, src, Regex, "/^-{1,2}[\\s.]/", "/^-[\\s.]/");
    expect(&p, src, Regex, "/^-{1,2}[\\s.]/", "/^-{1,2}[\\S.]/");
    // A constructor must call super() first when its class initialises fields.
    let emptied = src.replacen("{ super(); this.y = 2; }", "{}", 1);
    assert!(!p.mutants.iter().any(|m| super::mutated(src, m) == emptied));
    let no_super = src.replacen("super(); this.y", " this.y", 1);
    assert!(
        !p.mutants.iter().any(|m| super::mutated(src, m) == no_super),
        "super() stays"
    );
    expect(&p, src, ReturnValue, "{ super(); this.z = 3; }", "{}");
}

#[test]
fn a_block_of_console_calls_alone_is_arid() {
    let src = "function report(n) {\n  console.log(n);\n}\nfunction work(n) {\n  console.log(n);\n  return n;\n}\n";
    let p = all("src/r.js", src);
    assert!(
        !p.mutants
            .iter()
            .any(|m| m.site.as_deref() == Some("report")),
        "{}",
        super::listing(&p)
    );
    expect(
        &p,
        src,
        ReturnValue,
        "{\n  console.log(n);\n  return n;\n}",
        "{}",
    );
}
