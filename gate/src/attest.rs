//! `gate run --attest FILE`: the run's verdict as an in-toto Statement v1 with the in-toto
//! test-result predicate, bound to the candidate's tree, head commit and patch (the envelope,
//! the signature and its namespace are `candidate::attest`'s).
//!
//! Each suite is a test in the predicate, and so are the candidate's own checks (manifest,
//! deletions, drift), as in the JUnit copy: a policy that asks "result PASSED and no failed
//! test" then asks everything the verdict does. `result` is `PASSED` only for a complete run
//! whose verdict is PASS (and whose canaries, if asked for, held): a cut-short run is `FAILED`.

use std::path::{Path, PathBuf};

use candidate::attest::{Statement, Subjects};
use serde_json::json;

use crate::record::GateReport;

use candidate::attest::TEST_RESULT_PREDICATE as TEST_RESULT;

/// The test that stands for the candidate's own checks (the JUnit copy's name for them).
const CANDIDATE_TEST: &str = "candidate: manifest, deletions and drift";

/// `--attest FILE [--sign-key KEY]`.
#[derive(Clone, Debug)]
pub struct Attest {
    pub file: PathBuf,
    pub key: Option<PathBuf>,
}

/// Whether the attested run passed, as the predicate's `result` says it.
pub(crate) fn passed(report: &GateReport) -> bool {
    report.passed() && report.complete && !report.canary_failed()
}

/// The statement for a finished run; `config` is gate.toml as named, `config_sha256` its
/// bytes' digest.
pub(crate) fn statement(report: &GateReport, config: &Path, config_sha256: &str) -> Statement {
    let c = &report.candidate;
    let latest = report.latest_suites();
    let mut passed_tests = Vec::new();
    let mut failed_tests = Vec::new();
    if c.findings().is_empty() {
        passed_tests.push(CANDIDATE_TEST.to_string());
    } else {
        failed_tests.push(CANDIDATE_TEST.to_string());
    }
    for name in &report.planned {
        match latest.iter().find(|s| &s.name == name) {
            Some(s) if s.passed() => passed_tests.push(name.clone()),
            // A planned suite that failed, hung, could not start or never ran did not pass.
            _ => failed_tests.push(name.clone()),
        }
    }
    let predicate = json!({
        "result": if passed(report) { "PASSED" } else { "FAILED" },
        "configuration": [{
            "name": config.display().to_string(),
            "digest": { "sha256": config_sha256 },
        }],
        "passedTests": passed_tests,
        "warnedTests": [],
        "failedTests": failed_tests,
    });
    let subjects = Subjects {
        tree: c.tree.clone(),
        commit: c.head.clone(),
        patch_sha256: Some(c.patch_sha256.clone()),
    };
    Statement::new(&subjects, TEST_RESULT, predicate)
}

/// What `gate run --attest` says once it wrote: where, what the statement binds and says, and
/// whether and with which key it is signed (and where the signature went).
pub(crate) fn written_text(statement: &Statement, attest: &Attest) -> String {
    let digest = |alg: &str| statement.digest(alg).ok().flatten().unwrap_or("none");
    let signed = match &attest.key {
        Some(key) => format!(
            "signed with {} into {} (ssh-keygen namespace {})",
            key.display(),
            candidate::attest::signature_path(&attest.file).display(),
            candidate::attest::NAMESPACE
        ),
        None => "NOT signed (no --sign-key): gate verify will not call it verified".to_string(),
    };
    format!(
        "attestation written to {}: {} {} for tree {}, head {}, patch sha256 {}; {signed}",
        attest.file.display(),
        statement.predicate_type,
        statement.predicate["result"].as_str().unwrap_or("?"),
        digest("gitTree"),
        digest("gitCommit"),
        digest("sha256"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;

    #[test]
    fn the_predicate_lists_each_suite_and_the_candidate_checks() {
        let mut r = fixtures::report(
            &["unit", "e2e", "lint"],
            vec![fixtures::suite("unit", 0), fixtures::suite("e2e", 1)],
        );
        r.complete = true;
        r.judge();
        let s = statement(&r, Path::new("gate.toml"), &"cd".repeat(32));
        assert_eq!(s.predicate_type, TEST_RESULT);
        let p = &s.predicate;
        assert_eq!(p["result"], "FAILED");
        assert_eq!(p["passedTests"], json!([CANDIDATE_TEST, "unit"]));
        assert_eq!(p["failedTests"], json!(["e2e", "lint"]));
        assert_eq!(p["configuration"][0]["digest"]["sha256"], "cd".repeat(32));
        assert_eq!(
            s.digest("gitTree").unwrap(),
            Some(r.candidate.tree.as_str())
        );
        assert_eq!(
            s.digest("gitCommit").unwrap(),
            Some(r.candidate.head.as_str())
        );
    }

    #[test]
    fn only_a_complete_pass_is_passed() {
        let mut r = fixtures::report(&["unit"], vec![fixtures::suite("unit", 0)]);
        r.complete = true;
        r.judge();
        assert!(r.passed());
        let s = statement(&r, Path::new("gate.toml"), "00");
        assert_eq!(s.predicate["result"], "PASSED");
        r.complete = false;
        let s = statement(&r, Path::new("gate.toml"), "00");
        assert_eq!(s.predicate["result"], "FAILED");
    }
}
