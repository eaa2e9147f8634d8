//! `mutants run`'s reports where reviewers read them, each checked by a real consumer: junit.xml
//! parsed by `junitparser`, mutants.json validated by `jsonschema` against docs/schema, the
//! Markdown for a pull request, colour only where asked, the live line on a real pty (`script`),
//! completions checked by `bash -n`, man pages rendered by groff, and mutants.html rendered in
//! headless Chromium (a screenshot, and the DOM after its script ran).
//!
//! The Python consumers come from PyPI and chromium from Debian (`.ci/run` installs them).
//! Without them a test skips with a notice, except under CI (`CI` set), where a missing Python
//! module is a failure: a check that silently checks nothing in CI would hide a broken report.
//!
//! The terminal (colour, the live line, completions, man pages) is in [`terminal`]; the pages
//! a browser or a wide table shows, in [`pages`].

use std::fs;

use crate::common::*;
use serde_json::{json, Value};
use testkit::{junit, schema_errors, Output};

mod pages;
mod terminal;

/// Validates an instance against a schema; prints `{"errors": [...]}`.
/// One mutant of every verdict, in this order: killed, killed (hang), SURVIVED (its name holds
/// markup), control held, CONTROL KILLED, skipped (0 matches), error (a second suite whose
/// runner cannot start once its shebang is broken).
fn every_verdict() -> Fixture {
    let suites = "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"2s\"\n\n\
                  [suites.exec]\nrun = \"./run-tests\"\n\n";
    let spec = format!(
        "{suites}{}{}{}{}{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "spin forever",
            "spin() { :; }",
            "spin() { while :; do :; done; }",
            ""
        ),
        mutant("spawn <&> true", "spawn() { :; }", "spawn() { true; }", ""),
        mutant(
            "control: daemon spacing",
            "daemon() { :; }",
            "daemon () { :; }",
            "expect = \"survive\""
        ),
        mutant(
            "control: greet hi",
            "echo \"hello\"",
            "echo \"hi\"",
            "expect = \"survive\""
        ),
        mutant("absent", "subtract()", "x", ""),
        "[[mutant]]\nname = \"broken shebang\"\nfile = \"run-tests\"\nanchor = \"#!/bin/sh\"\n\
         replace = \"#!/nonexistent/sh\"\nsuite = \"exec\"\n",
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("run-tests", "#!/bin/sh\necho '1 passed, 0 failed'\n");
    fx.repo.chmod_x("run-tests");
    fx.repo.commit_all("runner");
    fx
}

const EVERY_VERDICT: [&str; 7] = [
    "killed",
    "killed (hang)",
    "SURVIVED",
    "control held",
    "CONTROL KILLED",
    "skipped (0 matches)",
    "error",
];

#[test]
fn junit_has_a_testcase_per_mutant_that_junitparser_reads_as_pass_failure_skip_and_error() {
    let fx = every_verdict();
    let out = fx.run(&[]);
    out.assert_exit(1);
    let got: Vec<String> = verdicts(&fx.report()).into_iter().map(|v| v.1).collect();
    assert_eq!(got, EVERY_VERDICT);
    let Some(facts) = junit(&fx.out().join("junit.xml")) else {
        return;
    };
    // The canaries that ran first are testcases of their own, each passed (noticed).
    let (canaries, cases): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = facts["cases"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|c| c["classname"] == "mutants.canary");
    assert!(!canaries.is_empty(), "{facts:#}");
    assert!(
        canaries.iter().all(|c| c["results"] == json!([])),
        "{facts:#}"
    );
    assert_eq!(
        (
            &facts["tests"],
            &facts["failures"],
            &facts["errors"],
            &facts["skipped"]
        ),
        (&json!(7 + canaries.len()), &json!(2), &json!(1), &json!(1)),
        "{facts:#}"
    );
    let field =
        |key: &str| -> Vec<&str> { cases.iter().map(|c| c[key].as_str().unwrap()).collect() };
    assert_eq!(
        field("name"),
        [
            "plus to minus",
            "spin forever",
            "spawn <&> true",
            "control: daemon spacing",
            "control: greet hi",
            "absent",
            "broken shebang"
        ]
    );
    // The site, or the file for a mutant that names no site.
    assert_eq!(
        field("classname"),
        ["lib", "lib", "lib", "lib", "lib", "lib", "run-tests"]
    );
    let kinds: Vec<&str> = cases
        .iter()
        .map(|c| c["results"][0]["kind"].as_str().unwrap_or("passed"))
        .collect();
    assert_eq!(
        kinds,
        ["passed", "passed", "Failure", "passed", "Failure", "Skipped", "Error"]
    );
    let survivor = &cases[2]["results"][0];
    let message = survivor["message"].as_str().unwrap();
    assert!(message.starts_with("SURVIVED"), "{message}");
    assert!(message.contains("the claim of spawn <&> true"), "{message}");
    assert!(
        survivor["text"]
            .as_str()
            .unwrap()
            .contains("5 passed, 0 failed"),
        "the body is the log's tail: {survivor}"
    );
    let control = &cases[4]["results"][0];
    assert!(control["message"]
        .as_str()
        .unwrap()
        .starts_with("CONTROL KILLED"));
    assert!(control["text"]
        .as_str()
        .unwrap()
        .contains("FAIL: test_greet"));
    assert!(cases[5]["results"][0]["message"]
        .as_str()
        .unwrap()
        .contains("0 matches"));
    assert!(cases[6]["results"][0]["message"]
        .as_str()
        .unwrap()
        .contains("exit 127"));
    // The hang passes (the suite noticed) with its time, and its diff rides along.
    assert!(cases[1]["time"].as_f64().unwrap() >= 2.0, "{}", cases[1]);
    assert!(cases[1]["system_out"]
        .as_str()
        .unwrap()
        .contains("+spin() { while :; do :; done; }"));
}

#[test]
fn junit_of_a_red_baseline_is_a_failure_not_an_empty_green_file() {
    let spec = format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("lib.sh", LIB.replace("$1 + $2", "$1 + $2 + 1"));
    fx.repo.commit_all("break add");
    let out = fx.run(&[]);
    out.assert_exit(4);
    let Some(facts) = junit(&fx.out().join("junit.xml")) else {
        return;
    };
    assert_eq!(
        (&facts["tests"], &facts["failures"]),
        (&json!(1), &json!(1))
    );
    let result = &facts["cases"][0]["results"][0];
    assert!(result["message"]
        .as_str()
        .unwrap()
        .starts_with("BASELINE FAILED"));
    assert!(result["text"].as_str().unwrap().contains("FAIL: test_add"));
}

#[test]
fn mutants_json_of_a_run_a_merge_and_a_candidate_validates_and_a_renamed_field_does_not() {
    let fx = every_verdict();
    let out = fx.run(&["--format", "json"]);
    out.assert_exit(1);
    let report = fx.report();
    assert_eq!(report["version"], 4);
    let printed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(printed, report, "--format json prints mutants.json");
    let Some(errors) = schema_errors("mutants.schema.json", &report) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new());

    // Shards and their merge.
    let base = fx.out.path();
    for k in ["1/2", "2/2"] {
        let dir = base.join(format!("shard{}", &k[..1]));
        fx.cmd()
            .args(["run", "mutants.toml", "--shard", k, "--out"])
            .arg(&dir)
            .output()
            .map(Output::from)
            .unwrap();
        assert_eq!(
            schema_errors("mutants.schema.json", &report_in(&dir)).unwrap(),
            Vec::<String>::new()
        );
    }
    let merged = base.join("merged");
    let m = fx
        .cmd()
        .arg("merge")
        .args([base.join("shard1"), base.join("shard2")])
        .arg("--out")
        .arg(&merged)
        .output()
        .map(Output::from)
        .unwrap();
    m.assert_exit(1);
    let merged_report = report_in(&merged);
    assert_eq!(merged_report["shard"], Value::Null);
    assert_eq!(
        schema_errors("mutants.schema.json", &merged_report).unwrap(),
        Vec::<String>::new()
    );

    // A candidate run carries its candidate facts.
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let cfx = Fixture::new(spec);
    let (dir, _) = candidate(&cfx, true);
    let out = cfx.run(&[
        "--candidate",
        dir.path().join("gate.toml").to_str().unwrap(),
    ]);
    out.assert_exit(0);
    let cand = cfx.report();
    assert_eq!(cand["candidate"]["manifest_after"], "2/2 OK");
    assert_eq!(
        schema_errors("mutants.schema.json", &cand).unwrap(),
        Vec::<String>::new()
    );

    // Strict enough to catch a consumer-breaking change: a renamed field, top level or in a
    // row, and a missing version are refused.
    let mut renamed = report.clone();
    let tally = renamed.as_object_mut().unwrap().remove("tally").unwrap();
    renamed["totals"] = tally;
    assert!(!schema_errors("mutants.schema.json", &renamed)
        .unwrap()
        .is_empty());
    let mut nested = report.clone();
    let verdict = nested["mutants"][0]
        .as_object_mut()
        .unwrap()
        .remove("verdict")
        .unwrap();
    nested["mutants"][0]["outcome"] = verdict;
    assert!(!schema_errors("mutants.schema.json", &nested)
        .unwrap()
        .is_empty());
    let mut word = report.clone();
    word["mutants"][2]["verdict"] = json!("survived");
    assert!(!schema_errors("mutants.schema.json", &word)
        .unwrap()
        .is_empty());
    let mut no_version = report.clone();
    no_version.as_object_mut().unwrap().remove("version");
    assert!(!schema_errors("mutants.schema.json", &no_version)
        .unwrap()
        .is_empty());
    // The tree a report judges and each run's build time are required too.
    let mut no_tree = report.clone();
    no_tree.as_object_mut().unwrap().remove("tree");
    assert!(!schema_errors("mutants.schema.json", &no_tree)
        .unwrap()
        .is_empty());
    let mut no_build = report;
    no_build["mutants"][0]["run"]
        .as_object_mut()
        .unwrap()
        .remove("build_secs");
    assert!(!schema_errors("mutants.schema.json", &no_build)
        .unwrap()
        .is_empty());
}

#[test]
fn a_report_of_suites_with_build_steps_validates_with_their_build_times() {
    let spec = format!(
        "[suites.unit]\nbuild = \"sh -n lib.sh\"\nrun = \"sh test.sh\"\ntimeout = \"3s\"\n\n{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    assert!(report["baseline"][0]["build_secs"].as_f64().is_some());
    assert!(report["mutants"][0]["run"]["build_secs"].as_f64().is_some());
    let Some(errors) = schema_errors("mutants.schema.json", &report) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new());
    let mut negative = report;
    negative["baseline"][0]["build_secs"] = json!(-1.0);
    assert!(!schema_errors("mutants.schema.json", &negative)
        .unwrap()
        .is_empty());
}

#[test]
fn merge_refuses_a_report_of_another_version() {
    let fx = Fixture::new(&format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    ));
    assert_eq!(fx.run(&[]).exit(), 0);
    let path = fx.out().join("mutants.json");
    let mut report = fx.report();
    report["version"] = json!(99);
    fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
    fx.cmd()
        .arg("merge")
        .arg(fx.out())
        .arg("--out")
        .arg(fx.out.path().join("merged"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("version 99 is not 4"));
}

#[test]
fn markdown_is_a_facts_table_and_a_verdict_table_with_findings_in_bold_and_json_is_an_alias() {
    let fx = every_verdict();
    let out = fx.run(&["--format", "markdown"]);
    out.assert_exit(1);
    let md = out.stdout.clone();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "## mutants FAIL", "{md}");
    assert!(
        md.contains("| **verdict** | **FAIL**: 7 mutants: 1 killed, 1 killed (hang), 1 control held, 1 SURVIVED, 1 CONTROL KILLED, 1 skipped, 1 error |"),
        "{md}"
    );
    assert!(md.contains("| **spec** | `mutants.toml` (sha256 `"), "{md}");
    assert!(md.contains("| **baseline** | `unit` passed in "), "{md}");
    let header = lines
        .iter()
        .position(|l| l.starts_with("| Mutant | Site | What it undoes | Verdict |"))
        .unwrap_or_else(|| panic!("no verdict table: {md}"));
    let columns = lines[header].matches(" | ").count() + 1;
    assert!(lines[header + 1].starts_with("| --- | --- |"));
    let rows = &lines[header + 2..header + 9];
    for row in rows {
        // Escaped pipes aside, every row has the header's cells: no name can split a row.
        let cells = row.replace("\\|", "").matches(" | ").count() + 1;
        assert_eq!(cells, columns, "{row}");
    }
    assert!(rows[0].starts_with("| plus to minus | lib |"), "{md}");
    assert!(rows[0].contains("| killed |"), "{md}");
    // Markup in a name is text, not HTML; findings are bold, verdicts that hold are not.
    assert!(rows[2].starts_with("| spawn \\<&\\> true |"), "{md}");
    assert!(rows[2].contains("| **SURVIVED** |"), "{md}");
    assert!(rows[4].contains("| **CONTROL KILLED** |"), "{md}");
    assert!(rows[5].contains("| **skipped (0 matches)** |"), "{md}");
    assert!(rows[6].contains("| **error** |"), "{md}");
    assert!(rows[3].contains("| control held |"), "{md}");
    // The file on disk stays the text table.
    let txt = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(txt.starts_with("spec: mutants.toml"), "{txt}");

    // --json is --format json; both at once is a usage error.
    let json_flag = fx.run(&["--json", "--only", "plus to minus"]);
    let as_json: Value = serde_json::from_str(&json_flag.stdout).unwrap();
    assert_eq!(as_json, report_in(&fx.out()));
    let both = fx.run(&["--json", "--format", "markdown"]);
    both.assert_exit(2);
    // merge prints the same Markdown for joined shards.
    let m = fx
        .cmd()
        .arg("merge")
        .arg(fx.out())
        .args(["--format", "markdown", "--out"])
        .arg(fx.out.path().join("merged"))
        .output()
        .map(Output::from)
        .unwrap();
    // (The --only run above updated the report in place: its findings are still there.)
    assert!(m.stdout.starts_with("## mutants FAIL"));
}
