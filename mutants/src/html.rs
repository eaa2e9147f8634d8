//! `mutants.html`: one self-contained page a reviewer opens in a browser.
//!
//! Written by hand, with no script and no third-party bundle: the page must open from a CI
//! artifact or an email attachment with no network, and must not execute anything it was not
//! reviewed to execute. Every piece of text from the spec, the files or the logs is escaped
//! (a mutant's anchor is very likely to hold `<` or `&`). Each row unfolds (`<details>`) to show
//! the swap as a diff and the tail of the suite's log.

use std::fmt::Write as _;
use std::path::Path;

use crate::output::{comparison_suites, stryker_status};
use crate::record::{RunReport, SuiteRun};

/// How much of each log the page shows.
const LOG_TAIL_LINES: usize = 40;

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
pre{background:#f8f8f8;padding:8px;overflow:auto;max-height:30em;margin:4px 0}
.v{font-weight:600;white-space:nowrap}
.killed{color:#116329}.hang{color:#0a5b8c}.held{color:#116329}
.survived,.control-killed{color:#fff;background:#c62828;padding:0 4px}
.skipped{color:#8a5a00;background:#fff3cd;padding:0 4px}
.error{color:#fff;background:#6a1b9a;padding:0 4px}
.del{color:#b31d28}.add{color:#22863a}
.meta{color:#555}
";

/// The page.
pub fn render(report: &RunReport, out: &Path) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mutants: {}</title><style>{STYLE}</style></head><body>\n",
        esc(&report.spec)
    );
    let _ = writeln!(h, "<h1>mutants: {}</h1>", esc(&report.tally.to_string()));
    let _ = writeln!(h, "<p class=\"meta\">spec {} &middot; ", esc(&report.spec));
    match &report.candidate {
        Some(c) => {
            let _ = write!(
                h,
                "candidate tree {} &middot; manifest before {}, after {}",
                esc(&c.tree),
                esc(&c.manifest_before),
                esc(c.manifest_after.as_deref().unwrap_or("not checked"))
            );
        }
        None => {
            let _ = write!(h, "commit {}", esc(&report.commit));
        }
    }
    let _ = writeln!(h, " &middot; {} to {}</p>", report.start, report.end);
    if report.baseline_failed {
        h.push_str("<p class=\"v survived\">BASELINE FAILED: no mutant was judged.</p>\n");
    }
    if report.interrupted {
        let _ = writeln!(
            h,
            "<p class=\"v skipped\">INTERRUPTED: {} of {} mutants judged.</p>",
            report.mutants.len(),
            report.planned
        );
    }
    let also = comparison_suites(report);
    h.push_str("<table><thead><tr><th>#</th><th>Mutant</th><th>Site</th><th>What it undoes</th><th>Verdict</th><th>Counts</th>");
    for a in &also {
        let _ = write!(h, "<th>{} (comparison)</th>", esc(a));
    }
    h.push_str("<th>Time</th><th>Exit</th><th>Strays</th></tr></thead><tbody>\n");
    for r in &report.mutants {
        let run = r.run.as_ref();
        let _ = write!(
            h,
            "<tr id=\"m{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><span class=\"v {}\">{}</span></td><td>{}</td>",
            r.index + 1,
            r.index + 1,
            esc(&r.name),
            esc(r.site.as_deref().unwrap_or("")),
            esc(r.undoes.as_deref().unwrap_or(if r.control { "(control)" } else { "" })),
            r.verdict.class(),
            esc(&r.verdict.to_string()),
            esc(&run.map(SuiteRun::counts_text).unwrap_or_default()),
        );
        for a in &also {
            match r.also.iter().find(|s| &s.suite == a) {
                Some(s) => {
                    let _ = write!(
                        h,
                        "<td><span class=\"v {}\">{}</span> {}</td>",
                        s.verdict.class(),
                        esc(&s.verdict.to_string()),
                        esc(&s.counts_text())
                    );
                }
                None => h.push_str("<td></td>"),
            }
        }
        let _ = writeln!(
            h,
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            run.map(|s| format!("{:.2}s", s.duration_secs))
                .unwrap_or_default(),
            esc(&run.map(|s| s.status.clone()).unwrap_or_default()),
            run.map(|s| s.strays_killed.to_string()).unwrap_or_default(),
        );
        // The unfolding detail row: diff, failed tests, log tails.
        let cols = 9 + also.len();
        let _ = write!(
            h,
            "<tr><td></td><td colspan=\"{}\"><details><summary>{} &middot; {}</summary>",
            cols - 1,
            esc(&r.file),
            esc(&stryker_status(r).1)
        );
        if let Some(d) = &r.diff {
            h.push_str("<pre>");
            for line in d.lines() {
                let class = match line.as_bytes().first() {
                    Some(b'-') if !line.starts_with("---") => "del",
                    Some(b'+') if !line.starts_with("+++") => "add",
                    _ => "",
                };
                let _ = writeln!(h, "<span class=\"{class}\">{}</span>", esc(line));
            }
            h.push_str("</pre>");
        } else {
            let _ = write!(
                h,
                "<p>anchor <code>{}</code> occurs {} times in {}: nothing was swapped.</p>",
                esc(&r.anchor),
                r.matches,
                esc(&r.file)
            );
        }
        for s in run.into_iter().chain(r.also.iter()) {
            if !s.failed_tests.is_empty() {
                let _ = write!(
                    h,
                    "<p>failed under {}: {}</p>",
                    esc(&s.suite),
                    esc(&s.failed_tests.join(", "))
                );
            }
            let _ = write!(
                h,
                "<p class=\"meta\">{}: {} in {:.2}s, timeout {:.0}s, {} strays killed, log <code>{}</code></p><pre>{}</pre>",
                esc(&s.suite),
                esc(&s.status),
                s.duration_secs,
                s.timeout_secs,
                s.strays_killed,
                esc(&s.log),
                esc(&log_tail(&out.join(&s.log)))
            );
        }
        h.push_str("</details></td></tr>\n");
    }
    h.push_str("</tbody></table>\n</body></html>\n");
    h
}

/// The last lines of a log, or a note when it is gone.
fn log_tail(path: &Path) -> String {
    match report::runner::read_tail(path, 64 * 1024) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let from = lines.len().saturating_sub(LOG_TAIL_LINES);
            lines[from..].join("\n")
        }
        Err(e) => format!("(log unavailable: {e})"),
    }
}

/// HTML-escapes text for element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_in_anchors() {
        assert_eq!(
            esc("a < b && c > \"d\""),
            "a &lt; b &amp;&amp; c &gt; &quot;d&quot;"
        );
    }
}
