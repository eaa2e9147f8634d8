//! `gate run`'s reports where reviewers read them, each checked by a real consumer: JUnit XML
//! parsed by `junitparser`, gate.json validated by `jsonschema` against docs/schema, Markdown,
//! colour only where asked, progress on a terminal (a real pty from `script`), completions
//! checked by `bash -n`, man pages rendered by groff, and the workflow files parsed as YAML with
//! every gate and probe command in them checked against the real command lines.
//!
//! The Python consumers come from PyPI (`.ci/run` installs them). Without them a test skips with
//! a notice, except under CI (`CI` set), where that is a failure: a check that silently checks
//! nothing in CI would hide a broken report.
//!
//! The terminal (colour, ticks, completions, man pages) is in [`terminal`], the workflow files
//! in [`workflows`].

use std::fs;

use crate::common::{stderr, stdout, Fixture};
use serde_json::{json, Value};
use testkit::schema_errors;

mod terminal;
mod workflows;

/// Validates an instance against a schema; prints `{"errors": [...]}`.
/// Four suites: one passes, one fails with markup in its log, one hangs, one cannot start.
const MIXED: &str = r#"
[[suite]]
name = "good"
run = "echo '3 passed, 0 failed'"

[[suite]]
name = "bad <one>"
run = '''echo 'assert 1 < 2 && "x"'; printf 'esc \033[31mred\n'; echo '1 passed, 2 failed'; exit 1'''

[[suite]]
name = "slow"
run = "sleep 30"
timeout = "1s"

[[suite]]
name = "missing"
run = "./no-such-script"
"#;

#[test]
fn junit_has_a_testcase_per_suite_that_junitparser_reads_as_pass_failure_hang_and_error() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(MIXED);
    let out_dir = f.out.path().join("gate-out");
    let junit = f.out.path().join("reports/junit.xml");
    let out = f
        .run(&config, &out_dir)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let Some(facts) = testkit::junit(&junit) else {
        return;
    };
    assert_eq!(
        (
            &facts["tests"],
            &facts["failures"],
            &facts["errors"],
            &facts["skipped"]
        ),
        (&json!(5), &json!(2), &json!(1), &json!(0)),
        "{facts:#}"
    );
    let cases = facts["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "manifest, deletions and drift",
            "good",
            "bad <one>",
            "slow",
            "missing"
        ]
    );
    let kind = |i: usize| cases[i]["results"][0]["kind"].as_str().unwrap_or("passed");
    assert_eq!(
        (kind(0), kind(1), kind(2), kind(3), kind(4)),
        ("passed", "passed", "Failure", "Failure", "Error")
    );
    let bad = &cases[2]["results"][0];
    assert!(bad["message"].as_str().unwrap().contains("exit 1"), "{bad}");
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("1 passed, 2 failed"),
        "{bad}"
    );
    let tail = bad["text"].as_str().unwrap();
    assert!(
        tail.contains("assert 1 < 2 && \"x\""),
        "the log tail is the body: {tail}"
    );
    assert!(
        tail.contains("esc \\u{1b}[31mred"),
        "ESC is spelled out: {tail}"
    );
    let slow = &cases[3]["results"][0];
    assert_eq!(slow["type"], "hang");
    assert!(slow["message"].as_str().unwrap().contains("hung"), "{slow}");
    assert!(cases[3]["time"].as_f64().unwrap() >= 1.0);
    assert_eq!(cases[4]["results"][0]["type"], "could not start");
    assert!(cases[1]["system_out"]
        .as_str()
        .unwrap()
        .contains("logs/01-good.log"));
}

#[test]
fn junit_marks_the_candidate_failed_when_its_manifest_does_not_hold() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let manifest = fs::read_to_string(f.manifest()).unwrap();
    fs::write(
        f.manifest(),
        manifest.replacen(&manifest[..8], "00000000", 1),
    )
    .unwrap();
    let config = f.config("[[suite]]\nname = \"good\"\nrun = \"true\"\n");
    let junit = f.out.path().join("junit.xml");
    let out = f
        .run(&config, &f.out.path().join("gate-out"))
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let Some(facts) = testkit::junit(&junit) else {
        return;
    };
    let candidate = &facts["cases"][0]["results"][0];
    assert_eq!(candidate["kind"], "Failure", "{facts:#}");
    assert!(candidate["message"].as_str().unwrap().contains("manifest"));
}

#[test]
fn gate_json_from_real_runs_validates_against_the_schema_and_a_renamed_field_does_not() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(MIXED);
    let out_dir = f.out.path().join("gate-out");
    f.run(&config, &out_dir).output().unwrap();
    // A rerun appends a section: the schema must cover it too.
    let rerun = f
        .run(&config, &out_dir)
        .args(["--only", "good"])
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(1), "{}", stderr(&rerun));
    let report: Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    assert_eq!(report["reruns"].as_array().unwrap().len(), 1);
    let Some(errors) = schema_errors("gate.schema.json", &report) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new());

    // A passing run, printed with --format json, is the same kind of document.
    let f2 = Fixture::new();
    f2.pack();
    f2.settle();
    let config2 = f2.config("[[suite]]\nname = \"good\"\nrun = \"echo '1 passed, 0 failed'\"\n");
    let out = f2
        .run(&config2, &f2.out.path().join("o"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema_errors("gate.schema.json", &printed).unwrap(),
        Vec::<String>::new()
    );

    // Strict enough to catch a consumer-breaking change.
    let mut renamed = report.clone();
    let verdict = renamed.as_object_mut().unwrap().remove("verdict").unwrap();
    renamed["verdikt"] = verdict;
    assert!(!schema_errors("gate.schema.json", &renamed)
        .unwrap()
        .is_empty());
    let mut nested = report.clone();
    let code = nested["suites"][0]["record"]
        .as_object_mut()
        .unwrap()
        .remove("exit_code")
        .unwrap();
    nested["suites"][0]["record"]["exit"] = code;
    assert!(!schema_errors("gate.schema.json", &nested)
        .unwrap()
        .is_empty());
    let mut no_version = report;
    no_version.as_object_mut().unwrap().remove("version");
    assert!(!schema_errors("gate.schema.json", &no_version)
        .unwrap()
        .is_empty());
}

#[test]
fn markdown_summary_is_a_facts_table_and_a_suites_table_and_json_is_an_alias() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        "[[suite]]\nname = \"pipe|name\"\nrun = \"echo '2 passed, 0 failed'\"\n\n[[suite]]\nname = \"second\"\nrun = \"exit 1\"\n",
    );
    let out_dir = f.out.path().join("gate-out");
    let out = f
        .run(&config, &out_dir)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let md = stdout(&out);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "## gate FAIL");
    assert!(
        md.contains("| **verdict** | **FAIL**: suite second exit 1 |"),
        "{md}"
    );
    assert!(md.contains("| **manifest** | `"), "{md}");
    assert!(md.contains(" 6/6 OK |"), "{md}");
    let header = lines
        .iter()
        .position(|l| *l == "| suite | start | end | time | result | counts |")
        .unwrap_or_else(|| panic!("no suites table: {md}"));
    assert_eq!(lines[header + 1], "| --- | --- | --- | --- | --- | --- |");
    // Every row has six cells once escaped pipes are set aside: the name cannot split a row.
    for row in &lines[header + 2..header + 4] {
        let cells = row.replace("\\|", "").matches('|').count() - 1;
        assert_eq!(cells, 6, "{row}");
    }
    assert!(lines[header + 2].starts_with("| pipe\\|name |"), "{md}");
    assert!(lines[header + 3].contains("| exit 1 |"), "{md}");
    assert!(md.contains("1/2 suites passed"), "{md}");
    // The files on disk stay the text summary.
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    assert!(summary.starts_with("gate FAIL  "), "{summary}");

    // --json and --format json print the same report; both at once is a usage error.
    let as_json = |args: &[&str]| -> Value {
        let out = f.run(&config, &out_dir).args(args).output().unwrap();
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        for key in ["started", "finished"] {
            v[key] = Value::Null;
        }
        v["suites"] = Value::Null;
        v["candidate"]["worktree"] = Value::Null;
        v
    };
    assert_eq!(as_json(&["--json"]), as_json(&["--format", "json"]));
    let both = f
        .run(&config, &out_dir)
        .args(["--json", "--format", "markdown"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn the_text_summary_keeps_its_suites_table_within_120_columns_and_markdown_keeps_every_cell() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let long = "tests/integration/persisted_output/a_long_head_is_truncated_and_saved_beside_its_preview.sh";
    let config = f.config(&format!(
        "[[suite]]\nname = \"{long}\"\nrun = \"echo '41 passed, 1 failed, 2 skipped'; exit 1\"\n"
    ));
    let out_dir = f.out.path().join("gate-out");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("suite "))
        .take_while(|l| !l.starts_with("total "))
        .collect();
    assert!(table.len() >= 3, "{text}");
    for l in &table {
        assert!(
            l.chars().count() <= 120,
            "{} columns: {l}\n{text}",
            l.chars().count()
        );
    }
    let flat = table
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("41 passed, 1 failed, 2 skipped"), "{text}");
    // The name, read down its column, is whole.
    let name: String = table[2..]
        .iter()
        .map(|l| l.trim_start().split("  ").next().unwrap_or(""))
        .collect();
    assert_eq!(name, long, "{text}");
    let md = stdout(
        &f.run(&config, &out_dir)
            .args(["--format", "markdown"])
            .output()
            .unwrap(),
    );
    assert!(
        md.contains(&report::markdown::escape(long).to_string()),
        "{md}"
    );
}

#[test]
fn the_text_summary_prints_backslashes_as_they_are_and_a_full_base_id_once() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    // gate.toml's base is the full id (the fixture writes it so).
    let config =
        f.config("[[suite]]\nname = 'win\\tmp\\x41'\nrun = \"echo '2 passed, 0 failed'\"\n");
    let out_dir = f.out.path().join("gate-out");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("\nbase      {}\n", f.base)),
        "{text}"
    );
    assert!(text.contains(r"win\tmp\x41  "), "{text}");
    assert!(!text.contains(r"\\"), "{text}");
    let md = stdout(
        &f.run(&config, &out_dir)
            .args(["--format", "markdown"])
            .output()
            .unwrap(),
    );
    assert!(md.contains(&format!("| **base** | `{}` |", f.base)), "{md}");
}

#[test]
fn a_failed_suite_says_why_under_the_table_then_its_log() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let mut run = String::from("echo '___ test_imports ___'; echo \\\"E   ModuleNotFoundError: No module named 'left_pad'\\\"; ");
    for i in 0..30 {
        run.push_str(&format!("echo noise {i}; "));
    }
    run.push_str("echo 'FAILED tests/test_x.py::test_imports - ModuleNotFoundError'; echo '1 failed, 3 passed in 0.10s'; exit 1");
    let config = f.config(&format!("[[suite]]\nname = \"py\"\nrun = \"{run}\"\n"));
    let out_dir = f.out.path().join("gate-out");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\nfailed    suite py: exit 1\n          tests/test_x.py::test_imports: ModuleNotFoundError: No module named 'left_pad'\n          log "), "{text}");
}
