//! Hostile input: random bytes, random line sets, deep nesting and odd text never panic, and
//! whatever is proposed keeps every promise (unique anchors, clean reparses).

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::{propose, Options, Outcome, Scope};

const PATHS: &[&str] = &["a.rs", "a.js", "a.ts", "a.tsx", "a.py", "a.go"];

fn check(path: &str, bytes: &[u8], scope: &Scope, all: bool) {
    if let Outcome::Proposed(p) = propose(path, bytes, scope, &Options { all }) {
        let text = std::str::from_utf8(bytes).expect("proposed only for UTF-8");
        super::invariants(path, text, &p);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), which in 0usize..6, all in any::<bool>()) {
        check(PATHS[which], &bytes, &Scope::Whole, all);
    }

    #[test]
    fn random_code_and_lines_keep_every_promise(
        pieces in proptest::collection::vec(prop::sample::select(vec![
            "a < b", " && ", "!x", "1", "\"s\"", "f(x);", "\n", "if x { y(); }\n", "(", ")", "{", "}",
            "return 0\n", "x += 2;\n", "// c\n", "# c\n", "é", "'''", "\\", "`t`", "[1, 2]", "def f():\n    return 1\n",
        ]), 0..30),
        which in 0usize..6,
        changed in proptest::collection::btree_set(0usize..40, 0..8),
        all in any::<bool>(),
    ) {
        let text: String = pieces.concat();
        check(PATHS[which], text.as_bytes(), &Scope::Lines(changed), all);
    }
}

#[test]
fn deep_nesting_and_odd_text_never_panic() {
    let deep = format!(
        "fn f() -> u8 {{ {}1{} }}\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    check("a.rs", deep.as_bytes(), &Scope::Whole, true);
    let deep_js = format!("let a = {}1{};\n", "[".repeat(3000), "]".repeat(3000));
    check("a.js", deep_js.as_bytes(), &Scope::Whole, true);
    for text in [
        "",
        "\n\n\n",
        "\u{feff}fn f() {}\n",
        "x = '''\n'''\n",
        "\r\n\r\n",
        "\0",
    ] {
        for path in PATHS {
            check(path, text.as_bytes(), &Scope::Whole, true);
            check(
                path,
                text.as_bytes(),
                &Scope::Lines(BTreeSet::from([0, 1, usize::MAX])),
                false,
            );
        }
    }
}

#[test]
fn anchors_grow_past_repeated_text() {
    let src = "fn f(a: u32) -> bool {\n    a < 1\n}\nfn g(a: u32) -> bool {\n    a < 1\n}\n";
    let p = super::all("src/r.rs", src);
    let boundary: Vec<&crate::Proposal> = p
        .mutants
        .iter()
        .filter(|m| m.replace.contains("a <= 1"))
        .collect();
    assert_eq!(boundary.len(), 2, "{}", super::listing(&p));
    for m in boundary {
        assert_eq!(src.matches(&m.anchor).count(), 1);
        assert!(
            m.anchor.contains("fn f") || m.anchor.contains("fn g") || m.anchor.contains('}'),
            "{m:?}"
        );
    }
}

#[test]
fn repeated_text_gives_up_on_anchors_quickly() {
    // 3,000 identical lines: no anchor near a line is unique, and proposing must not search
    // the file line after line for each of them.
    let src = "x = 1\n".repeat(3_000) + "y = 2\n";
    let started = std::time::Instant::now();
    let p = super::proposals("gen.py", &src, &Scope::Whole, false);
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
    // Only the last lines, near the one unique line, can be anchored.
    assert!(
        p.mutants
            .iter()
            .all(|m| m.line > 3_000 - 2 * crate::anchor::MAX_EXTRA_LINES),
        "{}",
        super::listing(&p)
    );
    assert!(p.mutants.iter().any(|m| m.line == 3_001));
}
