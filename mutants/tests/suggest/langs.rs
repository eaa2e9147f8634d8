//! One small project per language with a change: `suggest --diff HEAD~1` proposes only on the
//! changed lines (test code and unchanged files untouched), one control per changed file, and
//! `mutants check` on the spec it writes finds every anchor exactly once, whatever the changed
//! lines hold (quotes, backslashes, `'''`, non-ASCII).

use super::*;

/// `file` changed from `before` to `after` (and `test` changed beside it, when given, as test
/// code): the proposals are on the changed lines of `file` only, and every anchor is found.
fn language_case(file: &str, before: &str, after: &str, test: Option<(&str, &str)>) {
    let mut old: Vec<(&str, &str)> = vec![(file, before), ("README.md", "# x\n")];
    let mut new: Vec<(&str, &str)> = vec![(file, after)];
    if let Some((path, text)) = test {
        old.push((path, "\n"));
        new.push((path, text));
    }
    let repo = repo_with_change(&old, &new);
    let json = suggest_json(repo.path(), &["--diff", "HEAD~1"]);
    let lines = proposed_lines(&json, file);
    let changed = changed_lines(before, after);
    assert!(!lines.is_empty(), "nothing proposed for {file}: {json:#}");
    assert!(
        lines.is_subset(&changed),
        "{file}: proposals on lines {lines:?}, changed lines {changed:?}"
    );
    let files = json["files"].as_array().unwrap();
    // The unchanged README is not in the change at all.
    assert!(files.iter().all(|f| f["file"] != "README.md"), "{json:#}");
    let ours = files.iter().find(|f| f["file"] == file).unwrap();
    assert_eq!(ours["skipped"], Value::Null);
    let kills = json["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["file"] == file && m["expect"] == "kill")
        .count();
    assert_eq!(ours["proposed"].as_u64(), Some(kills as u64));
    assert_eq!(json["counts"]["proposed"].as_u64(), Some(kills as u64));
    if let Some((path, _)) = test {
        let t = files.iter().find(|f| f["file"] == path).unwrap();
        assert_eq!(t["skipped"], "test code", "{json:#}");
        assert!(json["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["file"] != path));
    }
    let controls: Vec<&Value> = json["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["expect"] == "survive")
        .collect();
    assert_eq!(controls.len(), 1, "{json:#}");
    assert_eq!(controls[0]["operator"], "control");
    assert_eq!(controls[0]["file"], file);
    assert_eq!(json["counts"]["controls"], 1);
    for m in json["mutants"].as_array().unwrap() {
        assert_eq!(m["undoes"], "TODO: the claim this mutant undoes");
        assert_eq!(m["suite"], "unit");
    }
    let text = check_every_anchor(repo.path(), &["--diff", "HEAD~1"]);
    assert!(text.contains("operator = "), "{text}");
    // `--all` proposes at least as much, still only on the changed lines.
    // With `--all` a function body's value may start on its unchanged opening line: each
    // mutation still covers a changed line.
    let all = suggest_json(repo.path(), &["--diff", "HEAD~1", "--all"]);
    for m in all["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["expect"] == "kill")
    {
        let first = m["line"].as_u64().unwrap();
        let last = first + m["anchor"].as_str().unwrap().matches('\n').count() as u64;
        assert!(
            (first..=last).any(|l| changed.contains(&l)),
            "{m:#} covers no changed line of {changed:?}"
        );
    }
    assert!(all["counts"]["proposed"].as_u64() >= json["counts"]["proposed"].as_u64());
    check_every_anchor(repo.path(), &["--diff", "HEAD~1", "--all"]);
}

#[test]
fn rust_changed_lines_get_proposals_and_every_anchor_is_found() {
    language_case(
        "src/lib.rs",
        "pub fn fee(amount: u64) -> u64 {\n    amount / 100\n}\n\npub fn label(n: u64) -> String {\n    format!(\"n={n}\")\n}\n\npub fn same(a: u64) -> bool {\n    a < 3\n}\n",
        "pub fn fee(amount: u64) -> u64 {\n    if amount > 1000 { amount / 50 } else { amount / 100 } // in cents\n}\n\npub fn label(n: u64) -> String {\n    format!(\"n=\\\"{n}\\\" \\\\ ''' é\")\n}\n\npub fn same(a: u64) -> bool {\n    a < 3\n}\n",
        Some(("tests/fee.rs", "#[test]\nfn fee() { assert_eq!(mylib::fee(2000), 40); }\n")),
    );
}

#[test]
fn javascript_changed_lines_get_proposals_and_every_anchor_is_found() {
    language_case(
        "src/price.js",
        "export function total(items) {\n  return items.length;\n}\n\nexport function tag(s) {\n  return \"x\";\n}\n\nexport function same(a) {\n  return a < 3;\n}\n",
        "export function total(items) {\n  return items.filter((i) => i.qty > 0 && i.ok).length;\n}\n\nexport function tag(s) {\n  return s === \"it's \\\"q\\\" \\\\ '''\" ? \"y\" : \"ü\";\n}\n\nexport function same(a) {\n  return a < 3;\n}\n",
        Some(("src/price.test.js", "import { total } from './price.js';\n")),
    );
}

#[test]
fn typescript_changed_lines_get_proposals_and_every_anchor_is_found() {
    language_case(
        "src/rate.ts",
        "export function rate(n: number): number {\n  return n;\n}\n\nexport function same(a: number): boolean {\n  return a < 3;\n}\n",
        "export function rate(n: number): number {\n  return n >= 10 ? n * 2 : n - 1;\n}\n\nexport function same(a: number): boolean {\n  return a < 3;\n}\n",
        None,
    );
}

#[test]
fn python_changed_lines_get_proposals_and_every_anchor_is_found() {
    language_case(
        "calc.py",
        "def band(x):\n    return 0\n\n\ndef same(a):\n    return a < 3\n",
        "def band(x):\n    return 1 if x < 10 and x != 3 else 2\n\n\ndef same(a):\n    return a < 3\n",
        Some(("tests/test_calc.py", "def test_band():\n    assert True\n")),
    );
}

#[test]
fn go_changed_lines_get_proposals_and_every_anchor_is_found() {
    language_case(
        "calc.go",
        "package calc\n\nfunc Band(x int) int {\n\treturn 0\n}\n\nfunc Same(a int) bool {\n\treturn a < 3\n}\n",
        "package calc\n\nfunc Band(x int) int {\n\tif x <= 10 && x != 3 { return x * 2 }; return x - 1\n}\n\nfunc Same(a int) bool {\n\treturn a < 3\n}\n",
        Some(("calc_test.go", "package calc\n")),
    );
}
