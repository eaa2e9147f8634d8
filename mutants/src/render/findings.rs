//! `run --suggested`'s survivors as review findings on a terminal: each surviving mutant's file
//! and line, the mutation, the claim, and the change around it (the hunk its row carries as
//! `context`), every line of outside text escaped. The Markdown for a pull request is the
//! summary's own (`markdown::in_context`, each hunk in a fenced `diff` block).

use crate::record::{Row, RunReport};
use crate::verdict::Verdict;

/// The rows that are findings: mutants the suite did not notice.
fn findings(report: &RunReport) -> Vec<&Row> {
    report
        .mutants
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Survived | Verdict::NotCovered))
        .collect()
}

/// `src/lib.rs:42`: the file and the line the anchor starts on.
fn place(r: &Row) -> String {
    match &r.span {
        Some(s) => format!("{}:{}", r.file, s.start_line),
        None => r.file.clone(),
    }
}

/// The words for the claim: the one named, or that none is yet.
fn claim(r: &Row) -> String {
    match (&r.undoes, r.claim_named) {
        (Some(u), true) => format!("undoes: {u}"),
        _ => crate::origin::NOT_NAMED.to_string(),
    }
}

/// The findings section as text: each survivor's place, mutation and claim, then its hunk
/// indented. Empty when nothing survived.
pub(crate) fn text(report: &RunReport) -> String {
    let rows = findings(report);
    if rows.is_empty() {
        return String::new();
    }
    let esc = |s: &str| files::escape::text(s).into_owned();
    let mut out = format!(
        "\nReview findings: {} the suite did not notice\n",
        report::text::plural(rows.len(), "mutant")
    );
    for r in rows {
        out.push_str(&format!(
            "\n{}{}: {} -> {} ({})\n",
            esc(&place(r)),
            r.site
                .as_deref()
                .map(|s| format!(" in {}", esc(s)))
                .unwrap_or_default(),
            esc(&r.anchor),
            esc(&r.replace),
            esc(&claim(r)),
        ));
        if let Some(hunk) = &r.context {
            for line in hunk.lines() {
                out.push_str("    ");
                out.push_str(&files::escape::terminal_line(line));
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_survivors_are_shown_each_with_its_hunk_indented_and_escaped() {
        let sample = include_str!("../../tests/data/shard-report.json");
        let mut report: RunReport = serde_json::from_str(sample).unwrap();
        let mut survivor = Row::sample(0, "m", Verdict::Survived);
        survivor.context = Some("@@ -3 +3 @@\n-\ta < b\n+\ta <= b\u{1b}]0;x\n".into());
        survivor.claim_named = false;
        survivor.undoes = Some("TODO: x".into());
        let mut killed = Row::sample(1, "k", Verdict::Killed);
        killed.context = Some("@@ -9 +9 @@\n-x\n+y\n".into());
        report.mutants = vec![survivor, killed];
        let shown = text(&report);
        assert_eq!(
            shown,
            "\nReview findings: 1 mutant the suite did not notice\n\nf: a -> b (claim not named)\n    @@ -3 +3 @@\n    -\ta < b\n    +\ta <= b\\u{1b}]0;x\n"
        );
        report.mutants.truncate(1);
        report.mutants[0].verdict = Verdict::ControlKilled;
        assert_eq!(text(&report), "");
    }
}
