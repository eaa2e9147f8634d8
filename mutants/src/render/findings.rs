//! `run --suggested`'s survivors as review findings: each surviving mutant's file and line,
//! the change around it (the hunk its row carries as `context`), and the mutation, as a
//! reviewer reads a code-review comment. Markdown (`--format markdown`, for a pull request)
//! puts each hunk in a fenced `diff` block whose fence is longer than any run of backticks
//! inside it, so no line of the hunk can close it; text is for a terminal, every line of outside
//! text escaped.

use report::markdown::{self, code};

use crate::record::{Row, RunReport};
use crate::verdict::Verdict;

/// The rows that are findings: mutants the suite did not notice.
fn findings(report: &RunReport) -> Vec<&Row> {
    report
        .mutants
        .iter()
        .filter(|r| r.verdict == Verdict::Survived)
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

/// The findings section in Markdown: a heading, then per survivor its place, the mutation,
/// the claim and its hunk in a fenced diff block. Empty when nothing survived.
pub(crate) fn markdown(report: &RunReport) -> String {
    let rows = findings(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n### Review findings: {} the suite did not notice\n",
        report::text::plural(rows.len(), "mutant")
    );
    for r in rows {
        out.push_str(&format!(
            "\n**{}**{}: {} replaced by {} and every test still passed ({})\n",
            code(&place(r)),
            r.site
                .as_deref()
                .map(|s| format!(" in {}", code(s)))
                .unwrap_or_default(),
            code(&r.anchor),
            code(&r.replace),
            markdown::escape(&claim(r)),
        ));
        if let Some(hunk) = &r.context {
            out.push('\n');
            out.push_str(&fenced("diff", hunk));
        }
    }
    out
}

/// `text` in a fenced block whose fence is longer than any run of backticks in it (and at
/// least three), so nothing inside can close it; every line made safe to show.
pub(crate) fn fenced(info: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{fence}{info}\n");
    for line in text.lines() {
        out.push_str(&files::escape::terminal_line(line));
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
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
    fn a_fence_outgrows_every_backtick_run_inside() {
        assert_eq!(fenced("diff", "+a\n"), "```diff\n+a\n```\n");
        let inner = "+let s = `x`;\n+```rust\n+````\n";
        let block = fenced("diff", inner);
        assert!(block.starts_with("`````diff\n"), "{block}");
        assert!(block.ends_with("\n`````\n"), "{block}");
        // No line inside is a fence as long as the block's.
        let lines: Vec<&str> = block.lines().collect();
        assert!(lines[1..lines.len() - 1]
            .iter()
            .all(|l| !l.trim_start().starts_with("`````")));
        // A control character cannot reach the reader raw.
        assert!(fenced("diff", "+a\u{1b}]0;x\u{7}\n").contains("\\u{1b}"));
    }
}
