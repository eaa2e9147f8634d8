//! The report files in `--out`: `mutants.txt`, `mutants.json`, `mutation-report.json`,
//! `mutants.html` and `junit.xml`, all rendered from one [`RunReport`]; and the renderings of it
//! printed on stdout (text, painted on a terminal, or Markdown for a pull request).
//!
//! They are rewritten whole (atomically) after every mutant, so an interrupted or killed run
//! leaves a consistent report of what it finished. `mutation-report.json` follows the
//! mutation-testing-elements schema, version 2, as Stryker writes it, so its viewers and
//! dashboards read our runs; the mapping of our verdicts onto its statuses is in
//! [`stryker_status`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use report::color::Style;
use report::duration::human;
use report::markdown::{self, code};
use report::{Painter, Table};

use crate::record::{Row, RunReport};
use crate::verdict::Verdict;
use report::text::short_id as short;

/// The original text of every mutated file, for `mutation-report.json` (lossy for non-UTF-8).
pub type Sources = BTreeMap<String, String>;

/// Writes every report file into `out`.
pub fn write_all(report: &RunReport, sources: &Sources, out: &Path) -> Result<()> {
    let write = |name: &str, text: &str| {
        report::json::write_text_atomic(&out.join(name), text)
            .with_context(|| format!("writing {}", out.join(name).display()))
    };
    report::json::write_atomic(&out.join("mutants.json"), report)
        .with_context(|| format!("writing {}", out.join("mutants.json").display()))?;
    write("mutants.txt", &render_text(report))?;
    let mut stryker =
        serde_json::to_string_pretty(&mutation_report(report, sources)).unwrap_or_default();
    stryker.push('\n');
    write("mutation-report.json", &stryker)?;
    write("mutants.html", &crate::html::render(report, out))?;
    write("junit.xml", &crate::junit::render(report, out))?;
    Ok(())
}

/// The comparison suites named anywhere in the report, in first-seen order.
pub fn comparison_suites(report: &RunReport) -> Vec<String> {
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

/// The verdict table's header and cells, one row per mutant, as plain text: the text table and
/// the Markdown one are both made from these, so they cannot disagree.
pub fn table_cells(report: &RunReport) -> (Vec<String>, Vec<Vec<String>>) {
    let also = comparison_suites(report);
    let mut headers: Vec<String> = ["Mutant", "Site", "What it undoes", "Verdict", "Counts"]
        .map(String::from)
        .to_vec();
    for a in &also {
        headers.push(format!("{a} (comparison)"));
    }
    headers.extend(["Time", "Exit", "Strays", "Failed tests"].map(String::from));
    let mut rows = Vec::new();
    for r in &report.mutants {
        let run = r.run.as_ref();
        let name = match &r.rerun {
            Some(at) => format!("{} (rerun {at})", r.name),
            None => r.name.clone(),
        };
        let mut cells = vec![
            name,
            r.site.clone().unwrap_or_default(),
            r.undoes.clone().unwrap_or_else(|| {
                if r.control {
                    "(control)".into()
                } else {
                    String::new()
                }
            }),
            r.verdict.to_string(),
            run.map(|s| s.counts_text()).unwrap_or_default(),
        ];
        for a in &also {
            cells.push(
                r.also
                    .iter()
                    .find(|s| &s.suite == a)
                    .map(|s| {
                        let counts = s.counts_text();
                        if counts.is_empty() {
                            s.verdict.to_string()
                        } else {
                            format!("{} ({counts})", s.verdict)
                        }
                    })
                    .unwrap_or_default(),
            );
        }
        cells.push(
            run.map(|s| time_text(s.duration_secs, s.build_secs))
                .unwrap_or_default(),
        );
        cells.push(run.map(|s| s.status.clone()).unwrap_or_default());
        cells.push(run.map(|s| s.strays_killed.to_string()).unwrap_or_default());
        cells.push(
            run.map(|s| failed_names(&s.failed_tests))
                .unwrap_or_default(),
        );
        rows.push(cells);
    }
    (headers, rows)
}

/// The column of [`table_cells`] that holds the verdict.
const VERDICT_COLUMN: usize = 3;

/// The verdict table, one row per mutant: the part a reviewer pastes.
pub fn table(report: &RunReport) -> Table {
    let (headers, rows) = table_cells(report);
    let mut t = Table::new(headers);
    for r in rows {
        t.row(r);
    }
    t
}

/// `0.31s`, or with a `build` step `0.31s + 1.20s build`: the run and the build apart, so a
/// slow build is never mistaken for a slow suite.
pub fn time_text(run_secs: f64, build_secs: Option<f64>) -> String {
    match build_secs {
        Some(b) => format!("{} + {} build", secs_text(run_secs), secs_text(b)),
        None => secs_text(run_secs),
    }
}

/// Seconds as `human` writes them; a value no duration can hold (negative, NaN, vast: only a
/// crafted report has one) shows as `?`, never a panic.
pub fn secs_text(secs: f64) -> String {
    std::time::Duration::try_from_secs_f64(secs).map_or_else(|_| "?".to_string(), human)
}

fn failed_names(names: &[String]) -> String {
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, +{} more", names[..3].join(", "), n - 3),
    }
}

/// `mutants.txt`: what was run, the table, the tally and how the run ended.
pub fn render_text(report: &RunReport) -> String {
    render_painted(report, Painter::plain())
}

/// [`render_text`] with the verdict words painted, for a terminal (files stay plain).
pub fn render_painted(report: &RunReport, paint: Painter) -> String {
    // Outside text (paths, suite names, statuses, a shard's fields) is escaped on these lines:
    // a name holding a line break or an ANSI escape must not forge a line or reach a terminal.
    // The table's cells are left to `Table`, which escapes them itself.
    use report::escape::text as esc;
    let mut s = String::new();
    s.push_str(&format!(
        "spec: {} (sha256 {})\n",
        esc(&report.spec),
        esc(short(&report.spec_sha256))
    ));
    match &report.candidate {
        Some(c) => s.push_str(&format!(
            "candidate: {} (base {}, tree {}); manifest before: {}, after: {}\n",
            esc(&c.config),
            esc(short(&c.base)),
            esc(&c.tree),
            esc(&c.manifest_before),
            esc(c.manifest_after.as_deref().unwrap_or("not checked"))
        )),
        None => s.push_str(&format!(
            "worktree: {} at {}{}\n",
            esc(&report.dir),
            esc(short(&report.commit)),
            report
                .carried
                .as_ref()
                .map(|c| format!(" + {}", esc(c)))
                .unwrap_or_default()
        )),
    }
    if let Some(shard) = report.shard {
        s.push_str(&format!("shard: {shard}\n"));
    }
    if let Some(setup) = &report.setup {
        let linked: Vec<String> = setup.linked.iter().map(|l| esc(l).into_owned()).collect();
        let times: Vec<String> = setup.secs.iter().map(|t| secs_text(*t)).collect();
        s.push_str(&format!(
            "setup: {}{} in each working copy{}\n",
            if setup.command.is_empty() {
                "none".to_string()
            } else {
                format!("{} passed", esc(&setup.command))
            },
            if linked.is_empty() {
                String::new()
            } else {
                format!(", linked {}", linked.join(", "))
            },
            if times.is_empty() {
                String::new()
            } else {
                format!(" ({})", times.join(", "))
            }
        ));
    }
    for b in &report.baseline {
        s.push_str(&format!(
            "baseline: {} {} in {}{}; mutant timeout {} ({})\n",
            esc(&b.suite),
            if b.passed {
                "passed".to_string()
            } else {
                format!("FAILED ({})", esc(&b.status))
            },
            time_text(b.duration_secs, b.build_secs),
            b.counts.map(|c| format!(" ({c})")).unwrap_or_default(),
            secs_text(b.mutant_timeout_secs),
            esc(&b.timeout_source)
        ));
    }
    s.push_str(&format!(
        "run: {} to {}, jobs {}\n\n",
        report.start, report.end, report.jobs
    ));
    if report.baseline_failed {
        s.push_str(&paint.paint("BASELINE FAILED", Style::Bad));
        s.push_str(
            ": a suite fails or hangs without any mutant, so no mutant was judged (exit 4).\n",
        );
        return s;
    }
    s.push_str(&paint_verdicts(&table(report).render_text(), paint));
    s.push('\n');
    s.push_str(&report.tally.to_string());
    s.push('\n');
    if report.interrupted {
        s.push_str(&format!(
            "INTERRUPTED: {} of {} mutants judged; the rest were not run.\n",
            report.mutants.len(),
            report.planned
        ));
    } else if report.mutants.len() < report.planned {
        s.push_str(&format!(
            "INCOMPLETE: {} of {} mutants judged.\n",
            report.mutants.len(),
            report.planned
        ));
    }
    s
}

/// Paints the verdict cell of every data row of a rendered text table. The table is aligned
/// first and painted after, because escape sequences would count as width.
fn paint_verdicts(table: &str, paint: Painter) -> String {
    if !paint.is_on() {
        return table.to_string();
    }
    let mut lines = table.lines();
    let (Some(header), Some(rule)) = (lines.next(), lines.next()) else {
        return table.to_string();
    };
    // The verdict column starts where its rule of dashes starts (counted in chars).
    let mut starts = Vec::new();
    let mut prev = ' ';
    for (i, c) in rule.chars().enumerate() {
        if c == '-' && prev == ' ' {
            starts.push(i);
        }
        prev = c;
    }
    let Some(&col) = starts.get(VERDICT_COLUMN) else {
        return table.to_string();
    };
    let mut out = format!("{header}\n{rule}\n");
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        let rest: String = chars.iter().skip(col).collect();
        // The cell ends at the two spaces that separate columns.
        let cell_len = rest.find("  ").unwrap_or(rest.len());
        let cell = &rest[..cell_len];
        let before: String = chars.iter().take(col).collect();
        out.push_str(&before);
        out.push_str(&paint.verdict(cell));
        out.push_str(&rest[cell_len..]);
        out.push('\n');
    }
    out
}

/// `mutants PASS`, `FAIL`, `INTERRUPTED` or `BASELINE FAILED`: the run's verdict in a word.
pub fn run_verdict(report: &RunReport) -> &'static str {
    if report.interrupted {
        "INTERRUPTED"
    } else if report.baseline_failed {
        "BASELINE FAILED"
    } else if report.held() {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The report as GitHub-flavoured Markdown for a pull request (`gh pr comment --body-file`):
/// the verdict as a heading, the run's facts as a table, then the verdict table with every
/// cell escaped (a mutant's name or claim may hold `*`, `<` or `|`) and findings in bold.
pub fn render_markdown(report: &RunReport) -> String {
    let verdict = run_verdict(report);
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
                    markdown::escape(&c.manifest_before),
                    markdown::escape(c.manifest_after.as_deref().unwrap_or("not checked"))
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
    if report.baseline_failed {
        out.push_str("\nA suite fails or hangs without any mutant, so no mutant was judged.\n");
        return out;
    }
    let (headers, rows) = table_cells(report);
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
    if report.interrupted || report.mutants.len() < report.planned {
        out.push_str(&format!(
            "\n{} of {} mutants judged; the rest were not run.\n",
            report.mutants.len(),
            report.planned
        ));
    }
    out
}

/// Our verdict as a mutation-testing-elements status, and the reason shown beside it.
///
/// A hang is `Timeout` (as Stryker reports one); a suite that could not start is
/// `RuntimeError`, never `Killed`. A control is not a mutant in Stryker's sense (it must
/// survive), so controls are `Ignored` with the verdict as the reason: counting a held control as
/// `Survived` would lower the mutation score for the suite doing its job.
pub fn stryker_status(row: &Row) -> (&'static str, String) {
    match row.verdict {
        Verdict::Killed => ("Killed", "the suite failed".into()),
        Verdict::KilledHang => (
            "Timeout",
            "the suite timed out; its process group was killed".into(),
        ),
        Verdict::Survived => (
            "Survived",
            "the suite passed with the mutant in place".into(),
        ),
        Verdict::Skipped { matches } => (
            "Ignored",
            format!("skipped: the anchor occurs {matches} times, not exactly once"),
        ),
        Verdict::ControlHeld => (
            "Ignored",
            "control held: the suite did not notice this no-op edit, as it should not".into(),
        ),
        Verdict::ControlKilled => (
            "Ignored",
            "CONTROL KILLED: the suite noticed an edit it must not notice".into(),
        ),
        // The run's own status says why (a build that failed or timed out, a suite that
        // replaced the mutated file); a row without a run could not start at all.
        Verdict::Error => (
            "RuntimeError",
            match &row.run {
                Some(run) if !run.status.is_empty() => format!("error: {}", run.status),
                _ => "the suite could not start".into(),
            },
        ),
    }
}

/// `mutation-report.json` (schema version 2).
pub fn mutation_report(report: &RunReport, sources: &Sources) -> Value {
    let mut files: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &report.mutants {
        let (status, reason) = stryker_status(r);
        let (start, end) = match r.span {
            Some(s) => (
                json!({"line": s.start_line, "column": s.start_column}),
                json!({"line": s.end_line, "column": s.end_column}),
            ),
            // Skipped: no single place; Stryker requires a location, so the file's start.
            None => (
                json!({"line": 1, "column": 1}),
                json!({"line": 1, "column": 1}),
            ),
        };
        let mut m = json!({
            "id": r.index.saturating_add(1).to_string(),
            "mutatorName": r.site.clone().unwrap_or_else(|| r.name.clone()),
            "replacement": r.replace,
            "description": r.undoes.clone().unwrap_or_else(|| r.name.clone()),
            "location": {"start": start, "end": end},
            "status": status,
            "statusReason": reason,
        });
        if let Some(run) = &r.run {
            m["duration"] = json!((run.duration_secs * 1000.0).round() as u64);
            if !run.failed_tests.is_empty() && matches!(status, "Killed" | "Timeout") {
                m["killedBy"] = json!(run.failed_tests);
            }
            if let Some(c) = run.counts {
                // Summed here without overflow: a merged shard's counts are outside input.
                let total = c.passed.saturating_add(c.failed).saturating_add(c.skipped);
                m["testsCompleted"] = json!(total);
            }
        }
        files.entry(r.file.clone()).or_default().push(m);
    }
    let files: serde_json::Map<String, Value> = files
        .into_iter()
        .map(|(path, mutants)| {
            let language = language_of(&path);
            let source = sources.get(&path).cloned().unwrap_or_default();
            (
                path,
                json!({"language": language, "source": source, "mutants": mutants}),
            )
        })
        .collect();
    json!({
        "$schema": "https://git.io/mutation-testing-schema",
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "projectRoot": report.dir,
        "files": files,
        "framework": {"name": "gatekit mutants", "version": report.tool_version},
    })
}

/// The language name Stryker's viewer uses for highlighting, from the extension.
fn language_of(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "mts" | "cts" | "tsx" => "typescript",
        "rs" => "rust",
        "py" => "python",
        "go" => "go",
        "cs" => "csharp",
        "java" => "java",
        "scala" => "scala",
        "html" | "htm" => "html",
        "vue" => "vue",
        "svelte" => "svelte",
        "sh" => "shell",
        "md" => "markdown",
        _ => "text",
    }
}
