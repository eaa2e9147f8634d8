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
/// written exits 74, because a pass must come with its record.
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
        match candidate::attest::write(&a.file, &statement, a.key.as_deref()) {
            Ok(()) => cmdline::errln!(
                "gate: {}",
                files::escape::text(&crate::attest::written_text(&statement, a))
            ),
            Err(e) => write_errors.push(e.context("writing the attestation")),
        }
    }
    // The report's files are written: stdout only shows them, and no failure to write it
    // (a closed pipe, a full disk) changes the exit code (see `cmdline::exit::show`).
    match output.format {
        Format::Json => {
            cmdline::exit::show(&format!("{}\n", serde_json::to_string_pretty(report)?))
        }
        Format::Markdown => cmdline::exit::show(&report.render_markdown()),
        Format::Text => {
            cmdline::exit::show(&report.render_painted(Painter::new(output.color.for_stdout())))
        }
    }
    // The one rule from a report to its exit code (see `GateReport::exit`): the record's
    // own `exit_code` is what it gives with every file written.
    let exit = report.exit(&write_errors);
    let on_stdout = if cmdline::exit::stdout_closed() {
        ""
    } else {
        "; the report on stdout is complete"
    };
    if write_errors.is_empty() {
        return Ok(exit);
    }
    for e in &write_errors {
        let _ = writeln!(
            std::io::stderr(),
            "gate: error: {} (the verdict {} stands{on_stdout})",
            cmdline::exit::one_line(e.as_ref()),
            report.verdict
        );
    }
    // A PASS that ends with exit 74 (its attestation could not be written): gate.json says the
    // code the run ended with, as every record does, where it still can be written.
    let rewritten = exit.code() != report.exit_code;
    if rewritten {
        let mut ended = report.clone();
        ended.exit_code = exit.code();
        let json = s.out.join(crate::run::REPORT_FILE);
        if let Err(e) = report::json::write_atomic(&json, &ended) {
            cmdline::errln!("gate: error: writing {}: {e}", json.display());
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
        if let Err(e) = files::atomic::write_text_atomic(path, &xml) {
            cmdline::errln!("gate: error: writing {}: {e}", path.display());
        }
    }
    Ok(exit)
}
