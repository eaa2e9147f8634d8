//! `gate run` on the command line: the run ([`crate::run`]) with its one reporter, then the
//! attestation, the report on stdout in the format asked for, and the exit code.

use std::path::PathBuf;

use anyhow::Result;

use cmdline::{Document, Exit, Reporter};
use report::{ColorChoice, Format, Painter};

use crate::progress::{Event, Words};
use crate::record::GateReport;
use crate::run::{run_shown, RunSettings};
use candidate::git::Git;

/// How `gate run` shows its report: what goes on stdout, where a JUnit copy goes, and colour.
/// Apart from [`RunSettings`] because these only render a finished report.
#[derive(Debug, Clone, Default)]
pub(super) struct RunOutput {
    pub(super) format: Format,
    pub(super) junit: Option<PathBuf>,
    pub(super) color: ColorChoice,
}

/// The report as each `--format` shows it on stdout.
impl Document for GateReport {
    fn text(&self, paint: Painter) -> String {
        self.render_painted(paint)
    }

    fn markdown(&self) -> String {
        self.render_markdown()
    }

    fn json(&self) -> Result<String> {
        Ok(format!("{}\n", serde_json::to_string_pretty(self)?))
    }
}

/// `gate run`: the run itself ([`run_shown`]), then the JUnit copy and what goes on stdout,
/// all under the output folder's lock.
///
/// A report that cannot be written once the suites ran never hides the verdict: the summary is
/// still printed on stdout, the failed write is named on stderr, and the exit code is the
/// verdict's (1 for FAIL, 130 when interrupted) — except that a PASS whose record could not be
/// written exits 74, because a pass must come with its record.
pub(super) fn cmd_run(repo: &Git, s: &RunSettings, output: &RunOutput) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    // The key proved readable before any suite runs; gate.toml's digest is of the bytes the
    // run read (once: it may be a FIFO).
    if let Some(key) = s.attest.as_ref().and_then(|a| a.key.as_ref()) {
        candidate::attest::check_key(key)?;
    }
    // Progress is hidden when stdout is JSON; notes never are.
    let mut shows = Reporter::new(Words, output.color, s.json);
    let gated = run_shown(repo, s, output.junit.as_deref(), &mut shows)?;
    let report = &gated.report;
    // The JUnit copy is written with the other files, under the lock (see `crate::run`).
    let mut write_errors: Vec<anyhow::Error> = gated.write_error.into_iter().collect();
    // The attestation last, still under the lock: it states the report as written. A failed
    // run is attested too (`FAILED`), so an earlier PASS at FILE never outlives this run.
    if let Some(a) = &s.attest {
        let statement = crate::attest::statement(report, &s.config, &gated.config_sha256);
        match candidate::attest::write(&a.file, &statement, a.key.as_deref()) {
            Ok(()) => shows.emit(&Event::Attested {
                text: &crate::attest::written_text(&statement, a),
            }),
            Err(e) => write_errors.push(e.context("writing the attestation")),
        }
    }
    // The report's files are written: stdout only shows them, and no failure to write it
    // (a closed pipe, a full disk) changes the exit code (see `cmdline::exit::show`).
    shows.show_document(report, output.format)?;
    // The one rule from a report to its exit code (see `GateReport::exit`): the record's
    // own `exit_code` is what it gives with every file written.
    let exit = report.exit(&write_errors);
    if write_errors.is_empty() {
        return Ok(shows.finish(exit));
    }
    let stdout_closed = shows.stdout_closed();
    for error in &write_errors {
        shows.emit(&Event::OwedNotWritten {
            error,
            verdict: report.verdict,
            stdout_closed,
        });
    }
    // A PASS that ends with exit 74 (its attestation could not be written): gate.json says the
    // code the run ended with, as every record does, where it still can be written.
    let rewritten = exit.code() != report.exit_code;
    if rewritten {
        let mut ended = report.clone();
        ended.exit_code = exit.code();
        let json = s.out.join(crate::run::REPORT_FILE);
        if let Err(error) = report::json::write_atomic(&json, &ended) {
            shows.emit(&Event::RewriteFailed {
                path: &json,
                error: &error,
            });
        }
    }
    // The JUnit copy, written as a PASS, says so too, or a CI view would show green for a run
    // that failed.
    if let Some(path) = output.junit.as_deref().filter(|_| rewritten) {
        let why = write_errors
            .iter()
            .map(|e| cmdline::exit::one_line(e.as_ref()))
            .collect::<Vec<_>>()
            .join("; ");
        let ending = report::junit::Ending::new(exit.code(), why);
        let xml = crate::junit::render_ending(report, &ending);
        if let Err(error) = files::atomic::write_text_atomic(path, &xml) {
            shows.emit(&Event::RewriteFailed {
                path,
                error: &error,
            });
        }
    }
    Ok(shows.finish(exit))
}
