//! `mutants run --attest FILE`: the run's verdicts as an in-toto Statement v1 with gatekit's
//! own predicate ([`candidate::attest::MUTANTS_PREDICATE`]), bound to the tree the mutants ran
//! on, its commit and, for a candidate, the patch (the envelope and signature are
//! `candidate::attest`'s).
//!
//! The predicate holds the spec's digest (a statement about another spec says nothing about
//! this one), each mutant's verdict in the report's words, the tally, and `result`: `PASSED`
//! only when the run is complete and everything held (every mutant killed, every control
//! held, a candidate's manifest intact after the last one), as the exit code 0 says.

use std::path::PathBuf;

use candidate::attest::{Statement, Subjects, MUTANTS_PREDICATE};
use serde_json::json;

use crate::record::RunReport;

/// `--attest FILE [--sign-key KEY]`, and what the statement is about (known once the
/// checkouts are made).
#[derive(Clone, Debug)]
pub(crate) struct Attest {
    pub file: PathBuf,
    pub key: Option<PathBuf>,
    pub subjects: Option<Subjects>,
}

/// The statement for a finished run.
pub(crate) fn statement(report: &RunReport, subjects: &Subjects) -> Statement {
    let passed = report.complete && report.held();
    let mutants: Vec<_> = report
        .mutants
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "file": r.file,
                "control": r.control,
                "verdict": r.verdict.to_string(),
                "holds": r.verdict.holds(),
            })
        })
        .collect();
    let unjudged: Vec<&str> = report.unjudged.iter().map(|u| u.name.as_str()).collect();
    let predicate = json!({
        "result": if passed { "PASSED" } else { "FAILED" },
        "spec": {
            "name": report.spec,
            "digest": { "sha256": report.spec_sha256 },
        },
        "complete": report.complete,
        "planned": report.planned,
        "tally": report.tally,
        "mutants": mutants,
        "unjudged": unjudged,
        "exitCode": report.exit_code,
    });
    Statement::new(subjects, MUTANTS_PREDICATE, predicate)
}
