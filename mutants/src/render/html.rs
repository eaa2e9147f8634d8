//! `mutants.html`: one self-contained page a reviewer opens in a browser.
//!
//! Written by hand, with no third-party bundle and no network: the page must open from a CI
//! artifact or an email attachment. Every piece of text from the spec, the files or the logs is
//! escaped (a mutant's anchor is very likely to hold `<` or `&`). The page is readable at a
//! glance: each verdict is a coloured badge, the tally sits at the top, and each mutant is one
//! `<tbody>` whose second row unfolds (`<details>`) to the swap as a diff and the tail of each
//! suite's log.
//!
//! The only script is `SCRIPT`, a few lines that filter the rows (all, findings, survivors) and
//! honour the same choice from the URL fragment (`mutants.html#survivors`), so a link can point
//! straight at what needs attention. Without script every row shows and the filter is hidden.

use std::fmt::Write as _;
use std::path::Path;

use super::{claim_cell, comparison_suites, stryker, time_text};
use crate::record::{Row, RunReport, RunVerdict, SuiteRun};
use crate::verdict::Verdict;

/// How much of each log the page shows.
const LOG_TAIL_LINES: usize = 40;

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em 2em;color:#1f2328;background:#fff}
h1{font-size:1.5em;margin:0 0 .3em}
h1 .v{font-size:.8em;vertical-align:middle}
.meta{color:#59636e;margin:.2em 0}
.tally{margin:.8em 0;display:flex;flex-wrap:wrap;gap:.5em}
.tally span.v{font-size:1em;padding:3px 10px}
nav.filter{margin:1em 0;padding:.5em .8em;background:#f6f8fa;border:1px solid #d1d9e0;border-radius:6px;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}
nav.filter label{cursor:pointer;white-space:nowrap}
nav.filter #shown{color:#59636e;margin-left:auto}
table{border-collapse:collapse;width:100%}
th,td{padding:5px 8px;text-align:left;vertical-align:top}
thead th{background:#f6f8fa;border-bottom:2px solid #d1d9e0;white-space:nowrap}
tbody.mutant{border-bottom:1px solid #d1d9e0}
tbody.mutant td:first-child{border-left:5px solid #d1d9e0}
tbody.finding td:first-child{border-left-color:#cf222e}
tbody.holds td:first-child{border-left-color:#1a7f37}
tbody.noted td:first-child{border-left-color:#8c959f}
tbody.finding{background:#fff5f5}
tr.detail td{padding-top:0}
details summary{cursor:pointer;color:#0969da}
pre{background:#f6f8fa;border:1px solid #d1d9e0;border-radius:4px;padding:8px;overflow:auto;max-height:30em;margin:4px 0;font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}
code{font:12px ui-monospace,'DejaVu Sans Mono',monospace;background:#f6f8fa;padding:0 3px}
.v{font-weight:600;white-space:nowrap;border-radius:10px;padding:1px 8px;font-size:.9em;display:inline-block}
.killed{color:#fff;background:#1a7f37}
.hang{color:#fff;background:#0969da}
.held{color:#1a7f37;background:#dafbe1;border:1px solid #1a7f37}
.survived,.not-covered,.control-killed{color:#fff;background:#cf222e}
.skipped{color:#6f4e00;background:#fff1c2;border:1px solid #d4a72c}
.error{color:#fff;background:#8250df}
.unviable{color:#59636e;background:#eaeef2;border:1px solid #8c959f}
.pass{color:#fff;background:#1a7f37}.fail{color:#fff;background:#cf222e}
.del{color:#b31d28;background:#ffebe9}.add{color:#116329;background:#dafbe1}
";

/// Filters the rows by the radio buttons and by the URL fragment (`#all`, `#findings`,
/// `#survivors`): each mutant's `<tbody>` gets `hidden` when it does not match, so the choice
/// is visible in the DOM as well as on screen.
const SCRIPT: &str = "
(function(){
  var rows=[].slice.call(document.querySelectorAll('tbody.mutant'));
  var names=['all','findings','survivors'];
  function matches(tb,f){
    if(f==='survivors'){var v=tb.getAttribute('data-verdict');return v==='survived'||v==='not-covered';}
    if(f==='findings')return tb.classList.contains('finding');
    return true;
  }
  function show(f){
    var n=0;
    rows.forEach(function(tb){var on=matches(tb,f);tb.hidden=!on;if(on)n++;});
    document.getElementById('shown').textContent='showing '+n+' of '+rows.length;
    var input=document.querySelector('input[name=filter][value='+f+']');
    if(input)input.checked=true;
    document.body.setAttribute('data-filter',f);
  }
  function fromUrl(){
    var f=location.hash.slice(1)||new URLSearchParams(location.search).get('filter')||'all';
    show(names.indexOf(f)>=0?f:'all');
  }
  [].forEach.call(document.querySelectorAll('input[name=filter]'),function(i){
    i.addEventListener('change',function(){history.replaceState(null,'','#'+i.value);show(i.value);});
  });
  window.addEventListener('hashchange',fromUrl);
  document.querySelector('nav.filter').hidden=false;
  fromUrl();
})();
";

/// The page.
pub(crate) fn render(report: &RunReport, out: &Path) -> String {
    let mut h = String::new();
    let verdict = report.verdict();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>mutants {verdict}: {}</title><style>{STYLE}</style></head><body data-filter=\"all\">\n",
        esc(&report.spec)
    );
    let _ = writeln!(
        h,
        "<h1>mutants <span class=\"v {}\">{verdict}</span></h1>",
        if verdict == RunVerdict::Pass {
            "pass"
        } else {
            "fail"
        }
    );
    let _ = write!(
        h,
        "<p class=\"meta\">spec <code>{}</code> &middot; ",
        esc(&report.spec)
    );
    match &report.candidate {
        Some(c) => {
            let _ = write!(
                h,
                "candidate tree <code>{}</code> &middot; manifest before {}, after {}",
                esc(&c.tree),
                c.manifest_before,
                c.manifest_after_text()
            );
        }
        None => {
            let _ = write!(h, "commit <code>{}</code>", esc(&report.commit));
            if let Some(c) = &report.carried {
                let _ = write!(h, " + {}", esc(c));
            }
        }
    }
    let _ = writeln!(h, " &middot; {} to {}</p>", report.start, report.end);
    for b in &report.baseline {
        let _ = writeln!(
            h,
            "<p class=\"meta\">baseline <code>{}</code>: {} in {}{}; each mutant's timeout {:.0}s ({})</p>",
            esc(&b.suite),
            if b.passed { "passed".to_string() } else { format!("<span class=\"v fail\">FAILED ({})</span>", esc(&b.status)) },
            esc(&time_text(b.duration_secs, b.build_secs)),
            b.counts.map(|c| format!(" ({c})")).unwrap_or_default(),
            b.mutant_timeout_secs,
            esc(&b.timeout_source)
        );
    }
    tally_badges(&mut h, report);
    if let Some(why) = &report.precondition {
        let _ = writeln!(
            h,
            "<p><span class=\"v fail\">SETUP FAILED</span> {}; no mutant was judged.</p>",
            esc(why)
        );
    }
    if report.baseline_failed {
        h.push_str("<p><span class=\"v fail\">BASELINE FAILED</span> a suite fails or hangs without any mutant, so no mutant was judged.</p>\n");
    }
    if let Some(cut) = report.cut_short_text() {
        let _ = writeln!(
            h,
            "<p class=\"cut-short\"><span class=\"v fail\">{verdict}</span> {}; no verdict on them.</p>",
            esc(&cut)
        );
    }
    let findings = report.mutants.iter().filter(|r| !r.verdict.holds()).count();
    let survivors = report
        .mutants
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Survived | Verdict::NotCovered))
        .count();
    let _ = writeln!(
        h,
        "<nav class=\"filter\" hidden><strong>Show</strong>\
         <label><input type=\"radio\" name=\"filter\" value=\"all\" checked> all ({})</label>\
         <label><input type=\"radio\" name=\"filter\" value=\"findings\"> findings ({findings})</label>\
         <label><input type=\"radio\" name=\"filter\" value=\"survivors\"> survivors ({survivors})</label>\
         <span id=\"shown\"></span></nav>",
        report.mutants.len()
    );
    let also = comparison_suites(report);
    h.push_str("<table><thead><tr><th>#</th><th>Mutant</th><th>Site</th><th>What it undoes</th><th>Verdict</th><th>Counts</th>");
    for a in &also {
        let _ = write!(h, "<th>{} (comparison)</th>", esc(a));
    }
    h.push_str("<th>Time</th><th>Exit</th><th>Strays</th></tr></thead>\n");
    let cols = 9 + also.len();
    for r in &report.mutants {
        mutant_rows(&mut h, r, &also, cols, out);
    }
    h.push_str("</table>\n");
    let _ = writeln!(h, "<script>{SCRIPT}</script>\n</body></html>");
    h
}

/// One badge per verdict that occurs, with its count.
fn tally_badges(h: &mut String, report: &RunReport) {
    let t = &report.tally;
    h.push_str("<div class=\"tally\">");
    let _ = write!(h, "<span class=\"meta\">{} mutants:</span>", t.total);
    for (n, word, kind) in t.counts() {
        if n > 0 {
            let class = kind.class();
            let _ = write!(h, "<span class=\"v {class}\">{n} {word}</span>");
        }
    }
    h.push_str("</div>\n");
}

/// A mutant's `<tbody>`: its table row, then the row that unfolds to its diff and logs.
fn mutant_rows(h: &mut String, r: &Row, also: &[String], cols: usize, out: &Path) {
    let run = r.run.as_ref();
    let _ = write!(
        h,
        "<tbody class=\"mutant {}\" id=\"m{}\" data-verdict=\"{}\"><tr class=\"row\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><span class=\"v {}\">{}</span>{}</td><td>{}</td>",
        // An unviable proposal is no finding, but nothing the suite did either: grey, not green.
        match r.verdict {
            Verdict::Unviable => "noted",
            v if v.holds() => "holds",
            _ => "finding",
        },
        r.index.saturating_add(1),
        r.verdict.class(),
        r.index.saturating_add(1),
        esc(&r.name),
        esc(r.site.as_deref().unwrap_or("")),
        esc(&claim_cell(r)),
        r.verdict.class(),
        esc(&r.verdict_text()),
        super::reused_text(r)
            .map(|t| format!(" <small>({})</small>", esc(&t)))
            .unwrap_or_default(),
        esc(&run.map(SuiteRun::counts_text).unwrap_or_default()),
    );
    for a in also {
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
        esc(&run
            .map(|s| time_text(s.duration_secs, s.build_secs))
            .unwrap_or_default()),
        esc(&run.map(|s| s.status.clone()).unwrap_or_default()),
        run.map(|s| s.strays_killed.to_string()).unwrap_or_default(),
    );
    let _ = write!(
        h,
        "<tr class=\"detail\"><td></td><td colspan=\"{}\"><details{}><summary>{}: <code>{}</code> &middot; {}</summary>",
        cols - 1,
        // What survived is what a reviewer opened the page for: its diff is already unfolded.
        if matches!(
            r.verdict,
            Verdict::Survived | Verdict::NotCovered | Verdict::ControlKilled
        ) {
            " open"
        } else {
            ""
        },
        if r.diff.is_some() { "diff and log" } else { "anchor" },
        esc(&r.file),
        esc(&stryker::status(r).1)
    );
    if let Some(d) = &r.diff {
        h.push_str("<pre class=\"diff\">");
        for line in d.lines() {
            let class = match line.as_bytes().first() {
                Some(b'-') if !line.starts_with("---") => "del",
                Some(b'+') if !line.starts_with("+++") => "add",
                _ => "ctx",
            };
            let _ = writeln!(h, "<span class=\"{class}\">{}</span>", esc_code(line));
        }
        h.push_str("</pre>");
    } else {
        let _ = write!(
            h,
            "<p>anchor <code>{}</code> occurs {} times in <code>{}</code>: nothing was swapped.</p>",
            esc(&r.anchor),
            r.matches,
            esc(&r.file)
        );
    }
    for s in run.into_iter().chain(r.also.iter()) {
        let failed = s.failed_text(usize::MAX);
        if !failed.is_empty() {
            let _ = write!(h, "<p>failed under {}: {}</p>", esc(&s.suite), esc(&failed));
        }
        let _ = write!(
            h,
            "<p class=\"meta\">{}: {} in {}, timeout {:.0}s, {} strays killed, log <code>{}</code></p><pre class=\"log\">{}</pre>",
            esc(&s.suite),
            esc(&s.status),
            esc(&time_text(s.duration_secs, s.build_secs)),
            s.timeout_secs,
            s.strays_killed,
            esc(&s.log),
            esc_code(&log_tail(&out.join(&s.log)))
        );
    }
    h.push_str("</details></td></tr></tbody>\n");
}

/// The last lines of a log, or a note when it is gone.
fn log_tail(path: &Path) -> String {
    match runner::read_tail(path, 64 * 1024) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let from = lines.len().saturating_sub(LOG_TAIL_LINES);
            lines[from..].join("\n")
        }
        Err(e) => format!("(log unavailable: {e})"),
    }
}

/// HTML-escapes outside text (a name, a path, a status) for element content and attribute
/// values, after [`files::escape::text`]: a line break or an ANSI escape in a name shows as
/// `\n` or `\u{1b}`, never raw in the page.
pub(crate) fn esc(s: &str) -> String {
    html(&files::escape::text(s), false)
}

/// HTML-escapes code or a log for a `<pre>`: its line breaks and tabs stay (and its backslashes
/// stay single, as in the file), but every other control character (an ANSI escape, a carriage
/// return) is shown as an escape, never emitted raw.
fn esc_code(s: &str) -> String {
    html(s, true)
}

fn html(s: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' if keep_lines => out.push(c),
            c if files::escape::is_unsafe(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
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
