//! Every rendering of a [`RunReport`]: the files in `--out` and what is printed on stdout.
//!
//! The record ([`crate::record`]) is the one thing a run produces; each module here turns it
//! into one format and nothing else: [`text`] (`mutants.txt` and the table on a terminal),
//! [`markdown`] (for a pull request), [`json`] (`mutants.json`, the record serialized),
//! [`stryker`] (`mutation-report.json`), [`html`] (`mutants.html`), [`junit`] (`junit.xml`),
//! [`sarif`] (`--sarif FILE`, for code scanning), [`progress`] and [`lines`] (what a run says on stderr as it goes, its notes rendered for the `cmdline` output seam). The file names are gate's too, so a reader who
//! knows one tool's layout knows the other's.
//!
//! The files are rewritten whole (atomically) after every mutant, so an interrupted or killed
//! run leaves a consistent report of what it finished; until the run's last write they say
//! it is not complete (`complete: false`, exit code 130, "cut short after N of M", the
//! unjudged mutants as JUnit errors and Stryker `Pending`), so no file of a run cut short
//! reads as green.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use report::duration::human;
use report::{ColorChoice, Format, Painter};

use crate::record::{Row, RunReport};

pub(crate) mod findings;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod lines;
pub(crate) mod markdown;
pub(crate) mod progress;
pub(crate) mod sarif;
pub(crate) mod stale;
pub(crate) mod stryker;
pub(crate) mod text;

/// The original text of every mutated file, for `mutation-report.json` (lossy for non-UTF-8).
pub(crate) type Sources = BTreeMap<String, String>;

/// The report files a run writes in `--out` (and `mutants merge` in its `--out`).
pub(crate) const FILES: [&str; 5] = [
    "mutants.json",
    "mutants.txt",
    "mutation-report.json",
    "mutants.html",
    "junit.xml",
];

/// Puts `out` with its report files and `logs/` on `plan`, for the one output guard.
pub(crate) fn plan_outputs(plan: &mut files::outputs::Plan, out: &Path) {
    plan.folder("--out", out).folder_in(out, "logs");
    for name in FILES {
        plan.file_in(out, name);
    }
}

/// Puts `--sarif FILE` on `plan`, for the one output guard: never through a link, never onto
/// an input or another output.
pub(crate) fn plan_sarif(plan: &mut files::outputs::Plan, sarif: Option<&Path>) {
    if let Some(path) = sarif {
        plan.file("--sarif", path);
    }
}

/// Writes every report file into `out` (and the SARIF log to `sarif` when asked for),
/// `mutants.json` last.
pub(crate) fn write_all(
    report: &RunReport,
    sources: &Sources,
    out: &Path,
    sarif: Option<&Path>,
) -> Result<()> {
    let write = |name: &str, text: &str| {
        files::atomic::write_text_atomic(&out.join(name), text)
            .with_context(|| format!("writing {}", out.join(name).display()))
    };
    write("mutants.txt", &text::render(report))?;
    write("mutation-report.json", &stryker::render(report, sources))?;
    write("mutants.html", &html::render(report, out))?;
    write("junit.xml", &junit::render(report, out))?;
    if let Some(path) = sarif {
        files::atomic::write_text_atomic(path, &sarif::render(report))
            .with_context(|| format!("writing {}", files::escape::path(path)))?;
    }
    // The record last: one that says it is complete is on disk only once every other file
    // is, and a write that fails (a full disk) stops before it, leaving the one that says not.
    write("mutants.json", &json::render(report)?)?;
    Ok(())
}

/// A finished report as it is shown on stdout: `mutants.json` as written, the Markdown
/// summary, or the text table (its verdicts painted when stdout takes colour). The run's
/// `cmdline::Reporter` shows it, after its files are written: no failure to write stdout
/// changes the run's exit code or stops what follows (the attestation).
pub(crate) struct Shown<'a>(pub &'a RunReport);

impl cmdline::Document for Shown<'_> {
    fn text(&self, paint: Painter) -> String {
        text::render_painted(self.0, paint)
    }

    fn markdown(&self) -> String {
        markdown::render(self.0)
    }

    fn json(&self) -> Result<String> {
        json::render(self.0)
    }
}

/// Shows a finished report on stdout in `format` (`mutants merge`'s joined report), through
/// the same seam a run's report goes through.
pub(crate) fn print(report: &RunReport, format: Format, color: ColorChoice) -> Result<()> {
    cmdline::Reporter::new((), color, true).show_document(&Shown(report), format)
}

/// Where a row an `--incremental` run kept came from: `reused from 4f2a9c01d3e7, judged
/// 2026-12-06T10:31:02Z` (the tree its verdict was judged on, and when); `None` for a row
/// judged by the run that wrote the report.
pub(crate) fn reused_text(r: &crate::record::Row) -> Option<String> {
    r.reused.as_ref().map(|from| {
        format!(
            "reused from {}, judged {}",
            report::text::short_id(&from.tree),
            from.at
        )
    })
}

/// The "What it undoes" cell of every table (text, Markdown, HTML): the claim, `claim not
/// named` while it still says `TODO:`, `(control)` for a control that names none.
pub(crate) fn claim_cell(r: &Row) -> String {
    match &r.undoes {
        _ if !r.claim_named => crate::origin::NOT_NAMED.to_string(),
        Some(u) => u.clone(),
        None if r.control => "(control)".to_string(),
        None => String::new(),
    }
}

/// The comparison suites named anywhere in the report, in first-seen order.
pub(crate) fn comparison_suites(report: &RunReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &report.mutants {
        for a in &r.also {
            if !names.contains(&a.suite) {
                names.push(a.suite.clone());
            }
        }
    }
    names
}

/// `0.31s`, or with a `build` step `0.31s + 1.20s build`: the run and the build apart, so a
/// slow build is never mistaken for a slow suite.
pub(crate) fn time_text(run_secs: f64, build_secs: Option<f64>) -> String {
    match build_secs {
        Some(b) => format!("{} + {} build", secs_text(run_secs), secs_text(b)),
        None => secs_text(run_secs),
    }
}

/// Seconds as `human` writes them; a value no duration can hold (negative, NaN, vast: only a
/// crafted report has one) shows as `?`, never a panic.
pub(crate) fn secs_text(secs: f64) -> String {
    std::time::Duration::try_from_secs_f64(secs).map_or_else(|_| "?".to_string(), human)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_step_is_timed_apart_and_impossible_seconds_show_as_a_question_mark() {
        assert_eq!(time_text(0.31, None), "0.31s");
        assert_eq!(time_text(0.31, Some(1.2)), "0.31s + 1.20s build");
        assert_eq!(secs_text(-1.0), "?");
        assert_eq!(secs_text(f64::NAN), "?");
    }
}
