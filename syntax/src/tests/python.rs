//! Python: mutmut's swaps with their exact replacements, docstrings, logging, `print` and
//! `assert` left alone, class methods named `Class.method`.

use super::{all, expect, untouched};
use crate::Operator::*;

const SRC: &str = r#"#!/usr/bin/env python3
"""Prices."""
import logging

log = logging.getLogger(__name__)


class Cart:
    def total(self, items, member=False):
        """Sum the items."""
        if not items:
            return 0
        # members pay less
        rate = 0.9 if member and self.open else 1
        s = sum(i.price * i.qty for i in items)
        log.info("total %s", s)
        print(s)
        assert s >= 0
        refresh(self)
        if s is None or s in self.bad:
            raise ValueError("bad")
        elif s > 100:
            s -= 5
        else:
            s += 1
        return s * rate


def tags():
    return {"a": [1, 2]}
"#;

#[test]
fn comparisons_keywords_and_operators() {
    let p = all("shop/cart.py", SRC);
    expect(&p, SRC, Boundary, "s > 100", "s >= 100");
    expect(&p, SRC, Equality, "s is None", "s is not None");
    expect(&p, SRC, Equality, "s in self.bad", "s not in self.bad");
    expect(
        &p,
        SRC,
        Logical,
        "member and self.open",
        "member or self.open",
    );
    expect(&p, SRC, Logical, "None or s", "None and s");
    expect(&p, SRC, Negation, "if not items:", "if items:");
    expect(&p, SRC, Negation, "elif s > 100:", "elif not (s > 100):");
    expect(&p, SRC, Arithmetic, "i.price * i.qty", "i.price / i.qty");
    expect(&p, SRC, Assignment, "s -= 5", "s += 5");
    expect(&p, SRC, Boolean, "member=False", "member=True");
    expect(&p, SRC, Constant, "s -= 5", "s -= 6");
    expect(&p, SRC, String, "ValueError(\"bad\")", "ValueError(\"\")");
    expect(&p, SRC, EmptyObject, "{\"a\": [1, 2]}", "{}");
    expect(&p, SRC, EmptyArray, "[1, 2]", "[]");
}

#[test]
fn bodies_calls_guards_and_else_branches() {
    let p = all("shop/cart.py", SRC);
    expect(
        &p,
        SRC,
        ReturnValue,
        "return {\"a\": [1, 2]}",
        "return None",
    );
    expect(&p, SRC, RemoveCall, "refresh(self)", "pass");
    expect(
        &p,
        SRC,
        RemoveBlock,
        "if not items:\n            return 0",
        "pass",
    );
    expect(
        &p,
        SRC,
        RemoveBlock,
        "\n        else:\n            s += 1",
        "",
    );
    let body = &p
        .mutants
        .iter()
        .find(|m| m.operator == ReturnValue && m.site.as_deref() == Some("Cart.total"))
        .unwrap();
    assert!(
        super::mutated(SRC, body).contains("\"\"\"Sum the items.\"\"\"\n        return None\n"),
        "the docstring stays"
    );
}

#[test]
fn docstrings_logging_print_and_asserts_are_left_alone() {
    let p = all("shop/cart.py", SRC);
    untouched(&p, SRC, "\"\"\"Prices.\"\"\"");
    untouched(&p, SRC, "\"\"\"Sum the items.\"\"\"");
    untouched(&p, SRC, "log.info(\"total %s\", s)");
    untouched(&p, SRC, "print(s)");
    untouched(&p, SRC, "assert s >= 0");
}

#[test]
fn the_control_edits_a_plain_comment_never_a_shebang() {
    let p = all("shop/cart.py", SRC);
    let c = p.control.expect("a control");
    assert_eq!(c.anchor, "# members pay less");
    assert_eq!(c.replace, "# members pay less (unchanged)");
    let bare = "#!/usr/bin/env python3\n# type: ignore\n\"\"\"Doc.\"\"\"\nx = compute(1)\n";
    let q = all("tool.py", bare);
    let c = q.control.expect("a control");
    assert_eq!(
        (c.anchor.as_str(), c.replace.as_str()),
        ("x = compute(1)", "x = compute(1)  # (unchanged)")
    );
}

#[test]
fn mutmut_keywords_signs_and_string_methods() {
    let src = "def f(xs, s):\n    for x in xs:\n        if x:\n            continue\n        break\n    return -len(s.lower())\n";
    let p = all("pkg/f.py", src);
    expect(&p, src, RemoveBlock, "continue", "break");
    expect(&p, src, RemoveBlock, "        break\n", "        return\n");
    expect(&p, src, Arithmetic, "-len", "+len");
    expect(&p, src, RemoveCall, "s.lower()", "s.upper()");
}

#[test]
fn a_body_of_logging_alone_is_arid() {
    let src = "def report(n):\n    \"\"\"Say it.\"\"\"\n    print(n)\n    logging.info(\"n %s\", n)\n    assert n\n\n\ndef work(n):\n    print(n)\n    return n\n";
    let p = all("pkg/r.py", src);
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
        "print(n)\n    return n",
        "return None",
    );
}
