//! The report as GitHub-flavoured Markdown for a pull request (`gh pr comment --body-file`):
//! the run's verdict as a heading, the run's facts as a table, then the verdict table.
//!
//! Every cell is escaped (a mutant's name or claim may hold `*`, `<` or `|`), and the verdict of
//! a row that does not hold is in bold, decided by the row's typed verdict, not its word.

use report::markdown::{self, code};
use report::Table;

use super::text::{cells, VERDICT_COLUMN};
use super::{claim_cell, time_text};
use crate::record::RunReport;
use report::text::short_id as short;

/// Each finding that has a `context` (`run --suggested` sets the diff hunk of the change it
/// came from) as a review finding: its verdict, file and line, the mutation and the claim,
/// then the hunk; empty when no finding has one.
fn in_context(report: &RunReport) -> String {
    let mut out = String::new();
    for r in &report.mutants {
        let Some(context) = r.context.as_ref().filter(|_| !r.verdict.holds()) else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\n### Findings in context\n");
        }
        out.push_str(&format!(
            "\n**{}** {}{}: {} -> {}{}; {}\n\n",
            markdown::escape(&r.verdict.to_string()),
            code(&r.file),
            r.span
                .map(|s| format!(" line {}", s.start_line))
                .unwrap_or_default(),
            code(&r.anchor),
            code(&r.replace),
            r.operator
                .as_ref()
                .map(|op| format!(" ({})", markdown::escape(op)))
                .unwrap_or_default(),
            markdown::escape(&claim_cell(r)),
        ));
        out.push_str(&markdown::fenced("diff", context));
    }
    out
}

/// The Markdown summary.
pub(crate) fn render(report: &RunReport) -> String {
    let verdict = report.verdict();
    let mut out = format!("## mutants {verdict}\n\n");
    let mut facts = vec![
        (
            "verdict",
            format!(
                "**{verdict}**: {}",
                markdown::escape(&report.tally.to_string())
            ),
        ),
        (
            "spec",
            format!(
                "{} (sha256 {})",
                code(&report.spec),
                code(short(&report.spec_sha256))
            ),
        ),
    ];
    match &report.candidate {
        Some(c) => {
            facts.push((
                "candidate",
                format!("{} base {}", code(&c.config), code(short(&c.base))),
            ));
            facts.push(("tree", code(&c.tree)));
            facts.push((
                "manifest",
                format!(
                    "before: {}, after: {}",
                    markdown::escape(&c.manifest_before.to_string()),
                    markdown::escape(&c.manifest_after_text())
                ),
            ));
        }
        None => facts.push((
            "commit",
            format!(
                "{}{}",
                code(short(&report.commit)),
                report
                    .carried
                    .as_ref()
                    .map(|c| format!(" + {}", markdown::escape(c)))
                    .unwrap_or_default()
            ),
        )),
    }
    if let Some(shard) = report.shard {
        facts.push(("shard", shard.to_string()));
    }
    for b in &report.baseline {
        facts.push((
            "baseline",
            format!(
                "{} {} in {}{}",
                code(&b.suite),
                if b.passed {
                    "passed".to_string()
                } else {
                    format!("**FAILED** ({})", markdown::escape(&b.status))
                },
                time_text(b.duration_secs, b.build_secs),
                b.counts.map(|c| format!(" ({c})")).unwrap_or_default()
            ),
        ));
    }
    facts.push(("time", format!("{} .. {}", report.start, report.end)));
    out.push_str(&markdown::facts(facts));
    if let Some(why) = &report.precondition {
        out.push_str(&format!(
            "\nThe setup failed ({}), so no mutant was judged.\n",
            code(why)
        ));
        return out;
    }
    if report.baseline_failed {
        out.push_str("\nA suite fails or hangs without any mutant, so no mutant was judged.\n");
        return out;
    }
    let (headers, rows) = cells(report);
    let mut t = Table::new(headers);
    for (row, r) in rows.into_iter().zip(&report.mutants) {
        let cells = row.into_iter().enumerate().map(|(i, cell)| {
            let text = markdown::escape(&cell);
            if i == VERDICT_COLUMN && !r.verdict.holds() && !text.is_empty() {
                format!("**{text}**")
            } else {
                text
            }
        });
        t.row(cells.collect::<Vec<_>>());
    }
    out.push('\n');
    out.push_str(&t.render_markdown());
    out.push_str(&in_context(report));
    if let Some(cut) = report.cut_short_text() {
        out.push_str(&format!(
            "\n**{verdict}**: {}; no verdict on them.\n",
            markdown::escape(&cut)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    #[test]
    fn a_finding_with_context_is_shown_with_its_hunk_and_a_kill_is_not() {
        let sample = include_str!("../../tests/data/shard-report.json");
        let mut report: RunReport = serde_json::from_str(sample).unwrap();
        let mut survivor = crate::record::Row::sample(0, "m", Verdict::Survived);
        survivor.context = Some("@@ -3 +3 @@\n-a < b\n+a <= b\n".into());
        survivor.claim_named = false;
        survivor.operator = Some("boundary".into());
        let mut killed = crate::record::Row::sample(1, "k", Verdict::Killed);
        killed.context = Some("@@ -9 +9 @@\n-x\n+y\n".into());
        report.mutants = vec![survivor, killed];
        let text = in_context(&report);
        assert_eq!(
            text,
            "\n### Findings in context\n\n**SURVIVED** `f`: `a` -> `b` (boundary); claim not named\n\n```diff\n@@ -3 +3 @@\n-a < b\n+a <= b\n```\n"
        );
        report.mutants.truncate(0);
        assert_eq!(in_context(&report), "");
    }
}
