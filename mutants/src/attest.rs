//! `mutants run --attest FILE`: the run's verdicts as an in-toto Statement v1 with gatekit's
//! own predicate ([`candidate::attest::MUTANTS_PREDICATE`]), bound to the tree the mutants ran
//! on, its commit, for a candidate the patch, and the run's own `mutants.json` by its sha256
//! (the envelope and signature are `candidate::attest`'s).
//!
//! The predicate holds the spec's digest (a statement about another spec says nothing about
//! this one), each mutant's verdict in the report's words, the tally, and `result`: `PASSED`
//! only when the run is complete and everything held (every mutant killed, every control
//! held, a candidate's manifest intact after the last one), as the exit code 0 says.

use std::collections::BTreeMap;
use std::path::PathBuf;

use candidate::attest::{Statement, Subject, Subjects, MUTANTS_PREDICATE};
use serde_json::json;

use crate::record::RunReport;

/// The subject that names a run's report in its statement.
pub(crate) const REPORT_SUBJECT: &str = "mutants.json";

/// The statement's name inside a shard's `--out`: where `merge --allowed-signers` looks for it.
pub(crate) const SHARD_STATEMENT: &str = "mutants.intoto.json";

/// `--attest FILE [--sign-key KEY]`, and what the statement is about (known once the
/// checkouts are made).
#[derive(Clone, Debug)]
pub(crate) struct Attest {
    pub file: PathBuf,
    pub key: Option<PathBuf>,
    pub subjects: Option<Subjects>,
}

/// The statement for a finished run whose `mutants.json` is `report_bytes`: the report is a
/// subject too (its name and sha256), so a signed statement binds the very report bytes a
/// `merge --allowed-signers` later reads.
pub(crate) fn statement(report: &RunReport, subjects: &Subjects, report_bytes: &[u8]) -> Statement {
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
    let mut statement = Statement::new(subjects, MUTANTS_PREDICATE, predicate);
    statement.subject.push(Subject {
        name: Some(REPORT_SUBJECT.into()),
        digest: BTreeMap::from([(
            "sha256".to_string(),
            manifests::Digest::of(report_bytes).to_hex(),
        )]),
    });
    statement
}
