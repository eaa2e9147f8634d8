//! `mutation-report.json`: the run in the mutation-testing-elements schema, version 2, as
//! Stryker writes it, so its viewers and dashboards read our runs.
//!
//! The one thing to know is the mapping of our verdicts onto its statuses ([`status`]): a
//! control is `Ignored`, never `Survived`, because a held control is the suite doing its job;
//! a mutant a run cut short never judged is `Pending` (the schema's "not yet run"), never
//! `Killed`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::Sources;
use crate::record::{Row, RunReport};
use crate::verdict::Verdict;

/// `mutation-report.json`, pretty, with a final newline.
pub(crate) fn render(report: &RunReport, sources: &Sources) -> String {
    let mut text =
        serde_json::to_string_pretty(&mutation_report(report, sources)).unwrap_or_default();
    text.push('\n');
    text
}

/// Our verdict as a mutation-testing-elements status, and the reason shown beside it.
///
/// A hang is `Timeout` (as Stryker reports one); a suite that could not start is
/// `RuntimeError`, never `Killed`. A control is not a mutant in Stryker's sense (it must
/// survive), so controls are `Ignored` with the verdict as the reason: counting a held control as
/// `Survived` would lower the mutation score for the suite doing its job.
pub(crate) fn status(row: &Row) -> (&'static str, String) {
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
        // Stryker's own word for a mutant no test covers.
        Verdict::NotCovered => (
            "NoCoverage",
            "not covered: no test runs the mutated lines, and the whole suite passed".into(),
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
        // Stryker's own word for a mutant that does not compile.
        Verdict::Unviable => (
            "CompileError",
            match &row.run {
                Some(run) => format!(
                    "unviable: the generated mutant does not build ({})",
                    run.status
                ),
                None => "unviable: the generated mutant does not build".into(),
            },
        ),
    }
}

/// `mutation-report.json` (schema version 2).
fn mutation_report(report: &RunReport, sources: &Sources) -> Value {
    let mut files: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &report.mutants {
        let (status, reason) = status(r);
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
        // A kill says why at a glance: a crash (`TypeError`) is not an assertion.
        let reason = match (&r.verdict, r.run.as_ref()) {
            (Verdict::Killed | Verdict::KilledHang, Some(run)) => {
                let failed = run.failed_text(0);
                if failed.is_empty() {
                    reason
                } else {
                    format!("{reason}: {failed}")
                }
            }
            _ => reason,
        };
        let mut m = json!({
            "id": r.index.saturating_add(1).to_string(),
            // A generated mutant's operator is what Stryker calls its mutator.
            "mutatorName": r.operator.clone().or_else(|| r.site.clone()).unwrap_or_else(|| r.name.clone()),
            "replacement": r.replace,
            "description": if r.claim_named {
                r.undoes.clone().unwrap_or_else(|| r.name.clone())
            } else {
                format!("{}: {}", crate::origin::NOT_NAMED, r.name)
            },
            "location": {"start": start, "end": end},
            "status": status,
            "statusReason": reason,
        });
        if let Some(run) = &r.run {
            m["duration"] = json!((run.duration_secs * 1000.0).round() as u64);
            // Stryker's `killedBy` names the tests that noticed: only a kill (or a hang) has them.
            if !run.failed_tests.is_empty() && r.verdict.is_kill() {
                m["killedBy"] = json!(run.failed_tests);
            }
            // Stryker's `coveredBy`: the tests a coverage map says reach the mutant, as they
            // were selected (the first of them, when there were many).
            if let Some(sel) = run.selection.as_ref().filter(|s| !s.every) {
                m["coveredBy"] = json!(sel.tests);
            }
            if let Some(c) = run.counts {
                // Summed here without overflow: a merged shard's counts are outside input.
                let total = c.passed.saturating_add(c.failed).saturating_add(c.skipped);
                m["testsCompleted"] = json!(total);
            }
        }
        files.entry(r.file.clone()).or_default().push(m);
    }
    // A mutant not judged (the run was cut short) is `Pending`, the schema's "not yet run":
    // never `Killed`, so no viewer counts it as a mutant the suite noticed. It has no place
    // yet, so the file's start, as for a skip.
    for u in &report.unjudged {
        files.entry(u.file.clone()).or_default().push(json!({
            "id": u.index.saturating_add(1).to_string(),
            "mutatorName": u.name,
            "location": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}},
            "status": "Pending",
            "statusReason": match report.cut_short_text() {
                Some(cut) => format!("not judged: the run was {cut}"),
                None => "not judged: a suite failed without any mutant (BASELINE FAILED)".into(),
            },
        }));
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
