//! `gate apply`: one candidate applied to a checkout the user keeps, checked, and shown.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Result};

use cmdline::Exit;
use files::escape::text as esc;
use report::{ColorChoice, Painter, Timestamp};

use super::finished;
use crate::record::{CandidateFacts, Verdict};
use candidate::apply::{self, Candidate, Place};
use candidate::checkout;
use candidate::git::Git;

pub(super) fn cmd_apply(
    repo: &Git,
    candidate: &Candidate,
    at: Option<PathBuf>,
    json: bool,
    color: ColorChoice,
) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    checkout::clean_stale();
    let prepared = apply::prepare(repo, candidate)?;
    let manifest_sha256 = prepared.manifest_sha256.clone();
    if files::interrupt::requested() {
        bail!("interrupted");
    }
    let place = Place::Keep(at);
    let mut applied = apply::apply(repo, prepared, &place)?;
    if files::interrupt::requested() {
        // Nothing half-made is left behind: the checkout the user would keep goes too (a kept
        // one is only removed once it is no longer marked to be kept).
        applied.checkout.keep(false);
        let _ = applied.checkout.remove();
        let _ = writeln!(std::io::stderr(), "gate: interrupted");
        return Ok(Exit::Interrupted);
    }
    let facts = CandidateFacts::from_applied(&applied, &manifest_sha256);
    let findings = facts.findings();
    let print = || -> Result<()> {
        if json {
            #[derive(serde::Serialize)]
            struct Applied<'a> {
                candidate: &'a CandidateFacts,
                verdict: Verdict,
                findings: &'a [crate::record::Finding],
            }
            let body = Applied {
                candidate: &facts,
                verdict: Verdict::of(false, &findings),
                findings: &findings,
            };
            crate::json::print("apply", Some(Timestamp::now()), &body)?;
        } else {
            let paint = Painter::new(color.for_stdout());
            let mut text = crate::text::render_candidate(&facts);
            let verdict = Verdict::of(false, &findings);
            let word = paint.paint(verdict.as_str(), verdict.style());
            if findings.is_empty() {
                text.push_str(&format!(
                    "verdict   {word}: the candidate applies cleanly, its manifest holds and names every file it changes, no drift\n"
                ));
            } else {
                text.push_str(&format!(
                    "verdict   {word}: {}\n",
                    esc(&crate::record::joined(&findings))
                ));
            }
            // Within 120 columns, as gate run's summary (long paths wrap under their value).
            cmdline::exit::print(&report::fit::lines(&text))?;
        }
        Ok(())
    };
    finished(print(), Exit::from_held(findings.is_empty()))
}
