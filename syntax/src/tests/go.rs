//! Go: operator swaps, zero-value bodies by result type, `fmt.Print*` and `log.*` left alone,
//! methods named `Type.Method`.

use super::{all, expect, untouched};
use crate::Operator::*;

const SRC: &str = r#"package shop

import (
	"errors"
	"fmt"
)

// Cart holds items.
type Cart struct {
	Items []int `json:"items"`
}

// Total sums the cart.
func (c *Cart) Total(limit int) (int, error) {
	sum := 0
	for i := 0; i < len(c.Items); i++ {
		sum += c.Items[i]
	}
	if sum > limit && !c.free() {
		return 0, errors.New("over")
	}
	fmt.Println("total", sum)
	c.record(sum)
	return sum * 2, nil
}

func (c *Cart) free() bool {
	return len(c.Items) == 0
}

func name() string { return "cart" }
"#;

#[test]
fn operators_and_conditions() {
    let p = all("shop/cart.go", SRC);
    expect(&p, SRC, Boundary, "sum > limit", "sum >= limit");
    expect(&p, SRC, Logical, "limit && !c", "limit || !c");
    expect(&p, SRC, Negation, "&& !c.free()", "&& c.free()");
    expect(
        &p,
        SRC,
        Negation,
        "if sum > limit && !c.free() {",
        "if !(sum > limit && !c.free()) {",
    );
    expect(&p, SRC, Equality, "len(c.Items) == 0", "len(c.Items) != 0");
    expect(
        &p,
        SRC,
        Assignment,
        "sum += c.Items[i]",
        "sum -= c.Items[i]",
    );
    expect(&p, SRC, Update, "i++", "i--");
    expect(&p, SRC, Arithmetic, "sum * 2", "sum / 2");
    expect(&p, SRC, String, "errors.New(\"over\")", "errors.New(\"\")");
    expect(&p, SRC, RemoveCall, "\tc.record(sum)\n", "\t\n");
    expect(
        &p,
        SRC,
        RemoveBlock,
        "if sum > limit && !c.free() {\n\t\treturn 0, errors.New(\"over\")\n\t}\n",
        "\n",
    );
}

#[test]
fn bodies_return_zero_values() {
    let p = all("shop/cart.go", SRC);
    expect(
        &p,
        SRC,
        ReturnValue,
        "return len(c.Items) == 0",
        "return false",
    );
    expect(&p, SRC, ReturnValue, "return \"cart\"", "return \"\"");
    let total = p
        .mutants
        .iter()
        .find(|m| m.operator == ReturnValue && m.site.as_deref() == Some("Cart.Total"))
        .unwrap();
    assert_eq!(total.replace.trim_end(), "return 0, nil");
}

#[test]
fn arid_calls_imports_and_tags_are_left_alone() {
    let p = all("shop/cart.go", SRC);
    untouched(&p, SRC, "fmt.Println(\"total\", sum)");
    untouched(&p, SRC, "\"errors\"");
    untouched(&p, SRC, "`json:\"items\"`");
    let c = p.control.expect("a control");
    assert_eq!(c.replace, "// Cart holds items. (unchanged)");
}

#[test]
fn a_body_of_logging_alone_is_arid() {
    let src = "package p\n\nfunc report(n int) {\n\tfmt.Println(n)\n\tlog.Printf(\"%d\", n)\n}\n\nfunc work(n int) int {\n\tfmt.Println(n)\n\treturn n\n}\n";
    let p = all("p/r.go", src);
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
        "fmt.Println(n)\n\treturn n",
        "return 0",
    );
}
