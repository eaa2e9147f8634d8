//! The summary as GitHub-flavoured Markdown (`gate run --format markdown`), for a pull
//! request: rendered from the [record](crate::record) alone, every outside text quoted so a
//! `*` or `|` in a suite name cannot turn bold or split a table.

use std::fmt::Write as _;

use manifests::Status;
use report::markdown::{self, code};
use report::text::short_id as short;
use report::Table;

use crate::record::{EntryFact, GateReport};
use crate::suite::SuiteResult;
use crate::text::{drift_text, total_line};

impl GateReport {
    /// The summary as GitHub-flavoured Markdown, for a pull request: the verdict as a heading,
    /// the candidate's facts as a table, the suites as a table, each rerun after them.
    pub(crate) fn render_markdown(&self) -> String {
        let c = &self.candidate;
        let mut out = format!("## gate {}\n\n", self.verdict);
        let verdict = if self.findings.is_empty() {
            format!("**{}**: every check held", self.verdict)
        } else {
            format!(
                "**{}**: {}",
                self.verdict,
                markdown::escape(&crate::record::joined(&self.findings))
            )
        };
        let deleted = if c.deleted.is_empty() {
            "none".to_string()
        } else {
            let gone = c.deleted.iter().filter(|d| d.gone).count();
            let names: Vec<String> = c
                .deleted
                .iter()
                .map(|d| {
                    if d.gone {
                        code(&d.path)
                    } else {
                        format!("{} (**STILL PRESENT**)", code(&d.path))
                    }
                })
                .collect();
            format!("{gone}/{} gone: {}", c.deleted.len(), names.join(", "))
        };
        let mut facts = vec![("verdict", verdict)];
        if let Some(cut) = self.cut_short_text() {
            facts.push(("run", markdown::escape(&cut)));
        }
        facts.extend([
            ("base", with_typed(&c.base, &c.base_rev)),
            ("head", with_typed(&c.head, &c.head_rev)),
            (
                "patch",
                format!("{} sha256 {}", code(&c.patch), code(&c.patch_sha256)),
            ),
            ("manifest", manifest_cell(c)),
            ("deleted", deleted),
        ]);
        facts.extend(extra_rows(c));
        facts.extend([
            ("drift", markdown::escape(&drift_text(c))),
            ("tree", code(&c.tree)),
            ("time", format!("{} .. {}", self.started, self.finished)),
        ]);
        out.push_str(&markdown::facts(facts));
        let bad: Vec<&EntryFact> = c
            .manifest
            .entries
            .iter()
            .filter(|e| e.status != Status::Ok)
            .collect();
        if !bad.is_empty() {
            out.push_str("\nManifest entries that did not check OK:\n\n");
            for e in bad {
                let detail = e
                    .detail
                    .as_ref()
                    .map(|d| format!(" ({})", markdown::escape(d)))
                    .unwrap_or_default();
                let _ = writeln!(out, "- {}: **{}**{detail}", code(&e.path), e.status);
            }
        }
        for commit in &c.landed {
            let _ = writeln!(
                out,
                "\nThe candidate itself, landed as {} {}: not drift.",
                code(short(&commit.sha)),
                markdown::escape(&commit.subject)
            );
        }
        if !c.base_side.is_empty() {
            out.push_str(
                "\nCommits on the base's side (head..base) that touch candidate paths:\n\n",
            );
            for commit in &c.base_side {
                let _ = writeln!(
                    out,
                    "- {} {}",
                    code(short(&commit.sha)),
                    markdown::escape(&commit.subject)
                );
            }
        }
        if !c.drift.is_empty() {
            out.push_str("\nCommits since the base that touch candidate paths:\n\n");
            for commit in &c.drift {
                let paths: Vec<String> = commit.paths.iter().map(|p| code(p)).collect();
                let _ = writeln!(
                    out,
                    "- {} {}{}{}",
                    code(short(&commit.sha)),
                    markdown::escape(&commit.subject),
                    if commit.merge { " (merge)" } else { "" },
                    if paths.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", paths.join(", "))
                    }
                );
            }
        }
        out.push_str("\n### Suites\n\n");
        out.push_str(&suite_table_markdown(&self.suites).render_markdown());
        let _ = writeln!(
            out,
            "\n{}",
            total_line(&self.suites).trim_start_matches("total").trim()
        );
        for rerun in &self.reruns {
            let _ = writeln!(
                out,
                "\n### Rerun {}\n\nmanifest {}, tree {}\n",
                rerun.at,
                rerun.manifest,
                code(&rerun.tree)
            );
            out.push_str(&suite_table_markdown(&rerun.suites).render_markdown());
            let _ = writeln!(
                out,
                "\n{}",
                total_line(&rerun.suites).trim_start_matches("total").trim()
            );
        }
        out
    }
}

/// The suite table with its cells quoted for Markdown (a suite name from a glob is outside
/// text: `*` or `_` in it must not turn bold).
fn suite_table_markdown(suites: &[SuiteResult]) -> Table {
    let mut t = Table::new(["suite", "start", "end", "time", "result", "counts"]);
    for s in suites {
        t.row([
            markdown::escape(&s.name),
            s.record.start().to_string(),
            s.record.end().to_string(),
            report::duration::human(s.record.duration()),
            markdown::escape(&s.result_text()),
            s.counts_text(),
        ]);
    }
    t
}

/// `` `id` (`rev`) ``, or `` `id` `` alone when the revision typed was the id.
fn with_typed(id: &str, rev: &str) -> String {
    match crate::text::as_typed(id, rev) {
        Some(rev) => format!("{} ({})", code(id), code(rev)),
        None => code(id),
    }
}

/// The manifest's cell: its file and counts, then the files the patch changes that it does
/// not name.
fn manifest_cell(c: &crate::record::CandidateFacts) -> String {
    let mut cell = format!("{} {}", code(&c.manifest.file), c.manifest.summary);
    if !c.unnamed.is_empty() {
        let names: Vec<String> = c.unnamed.iter().map(|p| code(p)).collect();
        let _ = write!(cell, "; **does not name** {}", names.join(", "));
    }
    cell
}

/// Rows only some candidates have: submodules (checked from the patch) and paths a `filter=`
/// driver would write (not checked).
fn extra_rows(c: &crate::record::CandidateFacts) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if !c.submodules.is_empty() {
        let moved: Vec<String> = c
            .submodules
            .iter()
            .map(|s| format!("{} at {}", code(&s.path), code(&s.commit)))
            .collect();
        rows.push((
            "submodules",
            format!(
                "{} (checked from the patch: no sha256sum line holds a gitlink)",
                moved.join(", ")
            ),
        ));
    }
    if !c.filtered.is_empty() {
        rows.push((
            "filtered",
            format!(
                "**not checked**, a `filter=` driver lives in config: {}",
                markdown::escape(&crate::record::first_few(&c.filtered))
            ),
        ));
    }
    rows
}
