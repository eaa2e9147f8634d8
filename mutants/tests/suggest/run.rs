//! `mutants run --suggested`: proposed and run in one step on a real pytest project with a
//! planted test gap; the survivor is reported as a review finding with its hunk (Markdown and
//! SARIF), and the spec written in `--out` makes the same report again.

use super::*;

const CALC: &str =
    "def price(qty, unit):\n    return qty * unit\n\n\ndef discount(total):\n    return 0\n";
// The change: a discount from 100 on. The test checks 200 and 50, never the boundary: the
// planted gap `>=` -> `>` survives.
const CALC2: &str = "def price(qty, unit):\n    return qty * unit\n\n\ndef discount(total):\n    if total >= 100:\n        return total // 10\n    return 0\n";
const TEST: &str = "from calc import price, discount\n\n\ndef test_price():\n    assert price(2, 3) == 6\n\n\ndef test_discount():\n    assert discount(200) == 20\n    assert discount(50) == 0\n";

fn pytest_project() -> Option<Repo> {
    if !testkit::needs::python_modules("pytest", &["pytest"]) {
        return None;
    }
    let repo = Repo::new();
    repo.write("calc.py", CALC)
        .write(
            "test_calc.py",
            "from calc import price\n\n\ndef test_price():\n    assert price(2, 3) == 6\n",
        )
        .write(".gitignore", "__pycache__/\n.pytest_cache/\n")
        .write(
            "mutants.toml",
            "[suites.unit]\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\n",
        );
    repo.commit_all("before");
    // The change under review is uncommitted: `--diff HEAD` reads it as `run` would.
    repo.write("calc.py", CALC2).write("test_calc.py", TEST);
    Some(repo)
}

#[test]
fn run_suggested_finds_the_planted_gap_and_shows_it_with_its_hunk() {
    let Some(repo) = pytest_project() else {
        return;
    };
    let status = repo.status();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let o = out_dir.to_str().unwrap();
    let sarif_file = tmp.path().join("findings.sarif");
    let out = mutants(
        repo.path(),
        &[
            "run",
            "--suggested",
            "--diff",
            "HEAD",
            "--out",
            o,
            "--format",
            "markdown",
            "--sarif",
            sarif_file.to_str().unwrap(),
        ],
    );
    // A survivor is a finding: exit 1.
    out.assert_exit(1);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("mutants.json")).unwrap())
            .unwrap();
    let rows = report["mutants"].as_array().unwrap();
    let gap = rows
        .iter()
        .find(|r| r["anchor"].as_str().is_some_and(|a| a.contains(">=")))
        .unwrap_or_else(|| panic!("no boundary mutant: {report:#}"));
    assert_eq!(gap["verdict"], "SURVIVED", "{report:#}");
    assert_eq!(gap["claim_named"], false);
    assert_eq!(gap["operator"], "boundary");
    // The test file is test code: nothing proposed in it; the control held.
    assert!(rows.iter().all(|r| r["file"] == "calc.py"));
    assert!(rows
        .iter()
        .any(|r| r["control"] == true && r["verdict"] == "control held"));
    // The finding: its place, the mutation, and the hunk it came from in a diff block.
    let md = &out.stdout;
    let findings = md
        .split("### Findings in context")
        .nth(1)
        .unwrap_or_else(|| panic!("no findings section: {out}"));
    assert!(
        findings.contains("**SURVIVED** `calc.py` line 6"),
        "{findings}"
    );
    assert!(
        findings.contains("`total >= 100` -> `total > 100`"),
        "{findings}"
    );
    assert!(findings.contains("claim not named"), "{findings}");
    let block = findings
        .split("```diff\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no diff block: {findings}"));
    assert!(block.starts_with("@@ -"), "{block}");
    assert!(block.contains("\n+    if total >= 100:"), "{block}");
    assert!(block.contains("\n def discount(total):"), "{block}");
    // SARIF for code scanning: the survivor at its line, its message holding the hunk.
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_file).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let found = results
        .iter()
        .find(|r| {
            r["message"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("total >= 100"))
        })
        .unwrap_or_else(|| panic!("no result for the survivor: {sarif:#}"));
    let at = &found["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], "calc.py");
    assert_eq!(at["region"]["startLine"], 6);
    assert!(
        found["message"]["text"]
            .as_str()
            .unwrap()
            .contains("+    if total >= 100:"),
        "{found:#}"
    );
    // Only survivors are findings.
    assert!(!findings.contains("control"), "{findings}");
    assert_eq!(repo.status(), status);
    assert!(repo.extra_worktrees().is_empty());

    // The spec it ran is in --out, and running it again gives the same verdicts.
    let spec = out_dir.join("suggested.toml");
    let again_dir = tmp.path().join("again");
    let again = mutants(
        repo.path(),
        &[
            "run",
            spec.to_str().unwrap(),
            "--out",
            again_dir.to_str().unwrap(),
        ],
    );
    again.assert_exit(1);
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(again_dir.join("mutants.json")).unwrap())
            .unwrap();
    let verdicts = |r: &Value| -> Vec<(String, String)> {
        r["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().unwrap().into(),
                    m["verdict"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&again), verdicts(&report));
    assert_eq!(again["spec_sha256"], report["spec_sha256"]);
}

#[test]
fn run_suggested_needs_a_change_and_a_suite_and_runs_nothing_when_nothing_is_proposed() {
    let repo = Repo::new();
    repo.write("README.md", "a\n").write("calc.py", CALC);
    repo.commit_all("one");
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("out");
    let o = o.to_str().unwrap();
    let out = mutants(repo.path(), &["run", "--suggested", "--out", o]);
    out.assert_exit(2);
    assert!(out.stderr.contains("--diff REV"), "{out}");
    // Nothing proposed: nothing to run, no report.
    repo.write("README.md", "b\n");
    let out = mutants(
        repo.path(),
        &["run", "--suggested", "--diff", "HEAD", "--out", o],
    );
    out.assert_exit(0);
    assert!(
        out.stderr.contains("no source file in the changes"),
        "{out}"
    );
    assert!(!Path::new(o).exists());
    // A proposal but no suite to run it under: bad input, nothing written.
    repo.write("calc.py", CALC2);
    let out = mutants(
        repo.path(),
        &["run", "--suggested", "--diff", "HEAD", "--out", o],
    );
    out.assert_exit(2);
    assert!(out.stderr.contains("no suite"), "{out}");
    assert!(!Path::new(o).exists());
    // A SPEC beside --suggested is a usage error.
    mutants(
        repo.path(),
        &["run", "--suggested", "x.toml", "--diff", "HEAD"],
    )
    .assert_exit(2);
}

#[test]
fn run_suggested_takes_a_candidate_and_runs_in_its_checkout() {
    let repo = Repo::new();
    repo.write("calc.py", CALC)
        .write("mutants.toml", "[suites.unit]\nrun = \"true\"\n");
    let base = repo.commit_all("base");
    repo.write("calc.py", CALC2);
    repo.git(["add", "-A"]);
    let dir = packed(&repo, &base, "calc.py");
    let gate = dir.path().join("gate.toml");
    std::fs::write(
        &gate,
        format!("base = \"{base}\"\npatch = \"c.patch\"\nmanifest = \"c.sha256\"\n"),
    )
    .unwrap();
    repo.git(["reset", "-q", "--hard"]);
    let out_dir = dir.path().join("out");
    let out = mutants(
        repo.path(),
        &[
            "run",
            "--suggested",
            "--candidate",
            gate.to_str().unwrap(),
            "--no-canary",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    // `true` notices nothing: every proposal survives, each a finding with its hunk.
    out.assert_exit(1);
    assert!(out.stdout.contains("\nReview findings: "), "{out}");
    assert!(
        out.stdout
            .contains("\ncalc.py:6 in discount: total >= 100 -> total > 100 (claim not named)\n"),
        "{out}"
    );
    assert!(out.stdout.contains("    +    if total >= 100:"), "{out}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("mutants.json")).unwrap())
            .unwrap();
    assert_eq!(report["candidate"]["manifest_before"], "1/1 OK");
    assert!(report["spec"].as_str().unwrap().ends_with("suggested.toml"));
    assert_eq!(repo.read("calc.py"), CALC.as_bytes());
    assert!(repo.extra_worktrees().is_empty());
}

#[test]
fn run_suggested_with_node_test_finds_the_planted_gap() {
    if !testkit::needs::program("node", "node", &["--version"], "install Node.js 20") {
        return;
    }
    let repo = Repo::new();
    repo.write(
        "price.mjs",
        "export function discount(total) {\n  return 0;\n}\n",
    )
    .write("mutants.toml", "[suites.unit]\nrun = \"node --test\"\n");
    repo.commit_all("before");
    repo.write(
        "price.mjs",
        "export function discount(total) {\n  if (total >= 100) {\n    return total / 10;\n  }\n  return 0;\n}\n",
    )
    .write(
        "price.test.mjs",
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { discount } from './price.mjs';\n\ntest('discount', () => {\n  assert.strictEqual(discount(200), 20);\n  assert.strictEqual(discount(50), 0);\n});\n",
    );
    // The default --out, inside the repository: what a run writes there is never proposed
    // for, nor named as skipped, the next time.
    let out_dir = repo.path().join("mutants-out");
    let out = mutants(repo.path(), &["run", "--suggested", "--diff", "HEAD"]);
    out.assert_exit(1);
    let again = mutants(repo.path(), &["suggest", "--diff", "HEAD"]);
    again.assert_exit(0);
    assert!(!again.stderr.contains("mutants-out"), "{again}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("mutants.json")).unwrap())
            .unwrap();
    let rows = report["mutants"].as_array().unwrap();
    // The untracked test file is test code: every proposal is in price.mjs.
    assert!(rows.iter().all(|r| r["file"] == "price.mjs"), "{report:#}");
    let gap = rows
        .iter()
        .find(|r| r["anchor"].as_str().is_some_and(|a| a.contains(">=")))
        .unwrap_or_else(|| panic!("no boundary mutant: {report:#}"));
    assert_eq!(gap["verdict"], "SURVIVED", "{report:#}");
    assert!(
        out.stdout
            .contains("\nprice.mjs:2 in discount: total >= 100 -> total > 100 (claim not named)\n"),
        "{out}"
    );
    assert!(out.stdout.contains("    +  if (total >= 100) {"), "{out}");
}
