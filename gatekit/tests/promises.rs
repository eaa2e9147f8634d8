//! The promises page check itself (`scripts/check-promises.py`, which CI runs on the
//! workspace): every row of the book's promises page names the self-proof mutants that break
//! its promise, each a `[[mutant]]` of `mutants.toml`, or says `none: REASON`. A check that
//! passes a row naming a mutant nobody wrote proves nothing, so each case is a small page and
//! spec in a temp dir, and each wrong row must be named at its line.

use std::path::Path;
use std::process::Command;

const SPEC: &str = "[suites.unit]\nrun = \"true\"\n\n\
    [[mutant]]\nname = \"hang reported as pass\"\nfile = \"a.rs\"\nanchor = \"x\"\nreplace = \"y\"\nsuite = \"unit\"\n\n\
    [[mutant]]\nname = \"strays not found by tag\"\nfile = \"a.rs\"\nanchor = \"x\"\nreplace = \"z\"\nsuite = \"unit\"\n\n\
    [[mutant]]\nname = \"control: a comment\"\nfile = \"a.rs\"\nanchor = \"x\"\nreplace = \"w\"\nsuite = \"unit\"\nexpect = \"survive\"\n";

/// Writes `page` as the promises page and `spec` as mutants.toml under a fresh root, and runs
/// the check on it: whether it passed, and what it printed.
fn check(page: &str, spec: Option<&str>) -> (bool, String) {
    let root = tempfile::tempdir().unwrap();
    let book = root.path().join("docs/book/src");
    std::fs::create_dir_all(&book).unwrap();
    std::fs::write(book.join("promises.md"), page).unwrap();
    if let Some(spec) = spec {
        std::fs::write(root.path().join("mutants.toml"), spec).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check-promises.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(root.path())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The findings printed, as (line, what), in order.
fn findings(out: &str) -> Vec<(usize, String)> {
    out.lines()
        .map(|l| {
            let rest = l
                .strip_prefix("docs/book/src/promises.md:")
                .unwrap_or_else(|| panic!("not a finding of the page: {l}"));
            let (line, what) = rest.split_once(": ").unwrap();
            (line.parse().unwrap(), what.to_string())
        })
        .collect()
}

#[test]
fn a_page_whose_rows_each_name_a_mutant_of_the_spec_or_say_none_with_a_reason_passes() {
    let page = "# Promises\n\n**A heading**\n\
        | promise | tests | mutants |\n\
        |---|---|---|\n\
        | A hang is a hang | `runner::hang` (a real `sleep \\| tee`) | `hang reported as pass` |\n\
        | Two names | `t` | `hang reported as pass`, `strays not found by tag` |\n\
        | Held by a benchmark | `bench` | none: held by the benchmark's self-test, which no suite runs |\n\
        \nText between tables.\n\n\
        | promise | tests | mutants |\n\
        |---|---|---|\n\
        | Another | `t2` | `hang reported as pass` |\n";
    let (ok, out) = check(page, Some(SPEC));
    assert!(ok, "a page that keeps every rule failed:\n{out}");
    assert_eq!(out, "");
}

#[test]
fn every_wrong_row_is_named_at_its_line_and_the_right_ones_are_not() {
    let page = "# Promises\n\n\
        | promise | tests | mutants |\n\
        |---|---|---|\n\
        | Good | `t` | `hang reported as pass` |\n\
        | Unknown name | `t` | `hang reported as pass`, `a hang survives` |\n\
        | Empty cell | `t` |  |\n\
        | No names, no none | `t` | see the spec |\n\
        | Bare none | `t` | none: |\n\
        | A control | `t` | `control: a comment` |\n\
        | Two cells only | `t \\| u` |\n\
        \n\
        | promise | tests |\n\
        |---|---|\n\
        | An old table | `t` |\n";
    let (ok, out) = check(page, Some(SPEC));
    assert!(!ok, "wrong rows went unseen:\n{out}");
    let found = findings(&out);
    let lines: Vec<usize> = found.iter().map(|(n, _)| *n).collect();
    assert_eq!(lines, [6, 7, 8, 9, 10, 11, 13], "{out}");
    let said = |n: usize, what: &str| {
        assert!(
            found.iter().any(|(l, w)| *l == n && w.contains(what)),
            "line {n} does not say {what:?}:\n{out}"
        )
    };
    said(
        6,
        "`a hang survives`, which is no [[mutant]] of mutants.toml",
    );
    said(7, "names no mutant and does not say none: REASON");
    said(8, "names no mutant and does not say none: REASON");
    said(9, "says none: without a reason");
    said(10, "`control: a comment`, a control");
    said(11, "has 2 cells, not 3");
    said(
        13,
        "columns are promise | tests, not promise | tests | mutants",
    );
}

#[test]
fn a_page_without_tables_or_without_its_spec_fails() {
    let (ok, out) = check("# Promises\n\nNo table here.\n", Some(SPEC));
    assert!(!ok, "{out}");
    assert!(out.contains("no promise table"), "{out}");
    let page =
        "| promise | tests | mutants |\n|---|---|---|\n| P | `t` | `hang reported as pass` |\n";
    let (ok, out) = check(page, None);
    assert!(!ok, "{out}");
    assert!(out.starts_with("mutants.toml: cannot be read"), "{out}");
}
