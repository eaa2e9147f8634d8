//! `gate run` on the command line: the run ([`crate::run`]), then the JUnit copy and the
//! report on stdout in the format asked for.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Result;

use cmdline::Exit;
use report::{ColorChoice, Format, Painter};

use crate::run::{run_gate, RunSettings};
use candidate::git::Git;

/// How `gate run` shows its report: what goes on stdout, where a JUnit copy goes, and colour.
/// Apart from [`RunSettings`] because these only render a finished report.
#[derive(Debug, Clone, Default)]
pub(super) struct RunOutput {
    pub(super) format: Format,
    pub(super) junit: Option<PathBuf>,
    pub(super) color: ColorChoice,
}

/// `gate run`: the run itself ([`run_gate`]), then the JUnit copy and what goes on stdout,
/// all under the output folder's lock.
///
/// A report that cannot be written once the suites ran never hides the verdict: the summary is
/// still printed on stdout, the failed write is named on stderr, and the exit code is the
/// verdict's (1 for FAIL, 130 when interrupted) — except that a PASS whose record could not be
/// written exits 2, because a pass must come with its record.
pub(super) fn cmd_run(repo: &Git, s: &RunSettings, output: &RunOutput) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    // The key proved readable before any suite runs; gate.toml's digest is of the bytes the
    // run read (once: it may be a FIFO).
    if let Some(key) = s.attest.as_ref().and_then(|a| a.key.as_ref()) {
        candidate::attest::check_key(key)?;
    }
    let gated = run_gate(repo, s, output.junit.as_deref())?;
    let report = &gated.report;
    // The JUnit copy is written with the other files, under the lock (see `crate::run`).
    let mut write_errors: Vec<anyhow::Error> = gated.write_error.into_iter().collect();
    // The attestation last, still under the lock: it states the report as written. A failed
    // run is attested too (`FAILED`), so an earlier PASS at FILE never outlives this run.
    if let Some(a) = &s.attest {
        let statement = crate::attest::statement(report, &s.config, &gated.config_sha256);
        if let Err(e) = candidate::attest::write(&a.file, &statement, a.key.as_deref()) {
            write_errors.push(e.context("writing the attestation"));
        }
    }
    let printed = match output.format {
        Format::Json => serde_json::to_string_pretty(report)
            .map_err(anyhow::Error::from)
            .and_then(|json| Ok(cmdline::outln!("{json}")?)),
        Format::Markdown => Ok(cmdline::exit::print(&report.render_markdown())?),
        Format::Text => Ok(cmdline::exit::print(
            &report.render_painted(Painter::new(output.color.for_stdout())),
        )?),
    };
    let verdict = if report.interrupted {
        Exit::Interrupted
    } else if report.precondition_failed() {
        Exit::Precondition
    } else {
        Exit::from_held(report.passed())
    };
    let on_stdout = match printed {
        Ok(()) => "; the report on stdout is complete",
        // The reader of stdout went away: the work is done and its files are written.
        Err(e) if cmdline::exit::is_stdout_closed(e.as_ref()) => "",
        Err(e) => {
            write_errors.push(e.context("printing the report on stdout"));
            ""
        }
    };
    if write_errors.is_empty() {
        return Ok(verdict);
    }
    for e in &write_errors {
        let _ = writeln!(
            std::io::stderr(),
            "gate: error: {} (the verdict {} stands{on_stdout})",
            cmdline::exit::one_line(e.as_ref()),
            report.verdict
        );
    }
    Ok(cmdline::exit::after_writing(verdict, &write_errors))
}
