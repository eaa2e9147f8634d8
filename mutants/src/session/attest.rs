//! The session's hooks for `--attest`: the statement's files put on the output guard's plan
//! and the key proved readable before anything runs, its subjects taken while the input is
//! read, and the statement written with the final report (see [`crate::attest`]).

use anyhow::{Context, Result};

use candidate::attest::Subjects;
use candidate::config::Config;
use candidate::git::Git;

use crate::attest::Attest;
use crate::record::RunReport;

/// `--attest FILE` and its signature as outputs, `--sign-key` as an input (no output may
/// land on it), the key readable.
pub(super) fn plan(attest: Option<&Attest>, plan: &mut files::outputs::Plan) -> Result<()> {
    if let Some(a) = attest {
        candidate::attest::plan(plan, &a.file, a.key.as_deref());
        if let Some(key) = &a.key {
            candidate::attest::check_key(key)?;
        }
    }
    Ok(())
}

/// The head commit a candidate was checked against (gate.toml's `head`), resolved before the
/// candidate's reading is handed on; `None` without a candidate (the subject is then the
/// commit the checkouts start at).
pub(super) fn candidate_head(
    attest: Option<&Attest>,
    repo: &Git,
    config: Option<&Config>,
) -> Result<Option<String>> {
    match (attest, config) {
        (Some(_), Some(config)) => Ok(Some(
            repo.commit_id(&config.head).context("candidate head")?,
        )),
        _ => Ok(None),
    }
}

/// What the statement is about: the tree every mutant was checked against, the head commit
/// (a candidate's) or DIR's HEAD, and a candidate's patch.
pub(super) fn subjects(tree: &str, commit: &str, patch_sha256: Option<&str>) -> Subjects {
    Subjects {
        tree: tree.to_string(),
        commit: commit.to_string(),
        patch_sha256: patch_sha256.map(str::to_string),
    }
}

/// Writes the statement of `report` (and its signature): with the final report, so it states
/// what the report on disk says.
pub(super) fn write(attest: &Attest, report: &RunReport) -> Result<()> {
    let Some(subjects) = &attest.subjects else {
        return Ok(());
    };
    // The bytes `render::write_all` wrote as mutants.json, from the same renderer.
    let bytes = crate::render::json::render(report)?;
    let statement = crate::attest::statement(report, subjects, bytes.as_bytes());
    candidate::attest::write(&attest.file, &statement, attest.key.as_deref())
        .context("writing the attestation")
}
