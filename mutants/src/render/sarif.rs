//! `--sarif FILE`: the run's findings as SARIF 2.1.0, for GitHub code scanning to show as
//! annotations on the lines each mutant changed.
//!
//! One result per row that is a finding (`SURVIVED`, `CONTROL KILLED`, `skipped`, `error`) and
//! one `note` per `unviable` row (no finding, but a proposal a reviewer may want to drop);
//! killed mutants and held controls are the suite doing its job and have none. Each rule is a
//! kind of verdict ([`RULES`]), so an alert keeps its rule from run to run. A result points at
//! the anchor's lines in the file as the run found it (the row's span, found by the same
//! [`crate::anchor::find_anchor`] as `mutants list`), or at the file's first line when the
//! anchor was not found exactly once; its message is the mutation, the claim (or "claim not
//! named") and the row's `context` (`run --suggested`'s diff hunk); its fingerprint is the
//! file, anchor and replacement, which no rerun changes.

use report::sarif::{
    Configuration, Invocation, Level, Log, Notification, Region, Result, Rule, RuleProperties, Run,
    Text,
};
use serde_json::json;

use crate::origin::NOT_NAMED;
use crate::record::{Row, RunReport, RunVerdict};
use crate::verdict::Verdict;

/// The tool's name in the log.
pub(crate) const TOOL: &str = "gatekit-mutants";

/// The key of each result's fingerprint.
const FINGERPRINT: &str = "gatekitMutant/v1";

/// One rule per kind of verdict that gets a result: (id, name, level, short, full description).
const RULES: [(&str, &str, Level, &str, &str); 6] = [
    (
        "survived",
        "MutantSurvived",
        Level::Error,
        "The suite passed with this mutant in place",
        "The mutant undoes a claim of the change, and the suite still passed: nothing defends \
         that claim. Add or fix a test that fails on this mutant, or name why the claim needs no \
         test.",
    ),
    (
        "not-covered",
        "MutantNotCovered",
        Level::Error,
        "No test runs the lines of this mutant, and the suite passed with it in place",
        "The suite's coverage map names no test that runs the mutated lines, and the whole suite \
         passed with the mutant in place: no test even reaches that claim. Add a test that runs \
         the code and fails on this mutant, or name why the claim needs no test.",
    ),
    (
        "control-killed",
        "ControlKilled",
        Level::Warning,
        "The suite noticed a control, an edit it must not notice",
        "A control is a no-op edit (a comment, a name nobody reads): the suite failed on it, so \
         it is brittle, or the control was not a no-op.",
    ),
    (
        "skipped",
        "AnchorNotUnique",
        Level::Warning,
        "The mutant's anchor does not occur exactly once in its file",
        "Nothing was swapped, so the mutant proves nothing: make its anchor an exact string that \
         occurs once in the file.",
    ),
    (
        "error",
        "MutantError",
        Level::Warning,
        "No verdict: the suite could not start or the run went wrong",
        "The suite could not start, its build failed (a hand-written mutant), or it changed the \
         mutated file: the mutant proves nothing until the run is fixed.",
    ),
    (
        "unviable",
        "MutantUnviable",
        Level::Note,
        "The generated mutant does not build",
        "A generated mutant whose build step failed: it proves nothing about the suite and is \
         not a finding.",
    ),
];

/// The rule of a row's verdict, `None` for a verdict that is no result (a kill, a held control).
fn rule_of(verdict: Verdict) -> Option<&'static str> {
    match verdict {
        Verdict::Survived => Some("survived"),
        Verdict::NotCovered => Some("not-covered"),
        Verdict::ControlKilled => Some("control-killed"),
        Verdict::Skipped { .. } => Some("skipped"),
        Verdict::Error => Some("error"),
        Verdict::Unviable => Some("unviable"),
        Verdict::Killed | Verdict::KilledHang | Verdict::ControlHeld => None,
    }
}

/// The SARIF log of `report`, pretty, with a final newline.
pub(crate) fn render(report: &RunReport) -> String {
    Log::new(run(report)).render()
}

fn run(report: &RunReport) -> Run {
    let rules = RULES
        .iter()
        .map(|&(id, name, level, short, full)| Rule {
            id: id.into(),
            name: name.into(),
            short_description: Text::new(short),
            full_description: Text::new(full),
            help: Text::new(full),
            default_configuration: Configuration { level },
            properties: RuleProperties {
                tags: vec!["mutation-testing".into(), "tests".into()],
            },
        })
        .collect();
    let mut run = Run::new(TOOL, &report.tool_version, rules, invocation(report));
    for row in &report.mutants {
        if let Some(result) = result(row) {
            // Every rule a row can name is in RULES (a unit test holds it), so none is dropped.
            let _ = run.push(result);
        }
    }
    run
}

/// How the run ended: it reached its end (with findings or not) only when complete and exiting
/// 0 or 1; what stopped it otherwise, in a line.
fn invocation(report: &RunReport) -> Invocation {
    let mut notes = Vec::new();
    let stopped = match report.verdict() {
        RunVerdict::SetupFailed => Some(format!(
            "SETUP FAILED: {}; no mutant was judged",
            report.precondition.as_deref().unwrap_or_default()
        )),
        RunVerdict::BaselineFailed => {
            Some("BASELINE FAILED: a suite fails or hangs without any mutant, so no mutant was judged".into())
        }
        RunVerdict::CanarySurvived => Some(
            "CANARY SURVIVED: a suite passed with a mutated file made unloadable; no mutant was judged"
                .into(),
        ),
        RunVerdict::Interrupted | RunVerdict::Incomplete => report
            .cut_short_text()
            .map(|cut| format!("{}: {cut}", report.verdict())),
        RunVerdict::Pass | RunVerdict::Fail => None,
    };
    if let Some(text) = stopped {
        notes.push(Notification {
            level: Level::Error,
            message: Text::new(text),
        });
    }
    Invocation {
        execution_successful: report.complete && report.exit_code <= 1,
        exit_code: i32::from(report.exit_code),
        tool_execution_notifications: notes,
    }
}

/// The result of one row, `None` when its verdict is no result.
fn result(row: &Row) -> Option<Result> {
    let rule = rule_of(row.verdict)?;
    let level = RULES.iter().find(|r| r.0 == rule).map(|r| r.2)?;
    let region = match row.span {
        Some(s) => Region {
            start_line: s.start_line,
            start_column: s.start_column,
            end_line: s.end_line,
            end_column: s.end_column,
        },
        None => Region::first_line(),
    };
    let result = Result::new(
        rule,
        level,
        message(row),
        &row.file,
        region,
        (FINGERPRINT, fingerprint(row)),
    )
    .property("verdict", json!(row.verdict.to_string()))
    .property("mutant", json!(row.name))
    .property("claimNamed", json!(row.claim_named));
    Some(match &row.operator {
        Some(op) => result.property("operator", json!(op)),
        None => result,
    })
}

/// `SURVIVED: mutant "m" (boundary) in src/a.rs: `a < b` -> `a <= b`. The suite passed with
/// the mutant in place. Claim: ...`, then the status of a run that went wrong, then the row's
/// context (a diff hunk) after a blank line.
fn message(row: &Row) -> String {
    let mut text = format!(
        "{}: mutant {:?}{} in {}: `{}` -> `{}`.",
        row.verdict,
        row.name,
        row.operator
            .as_ref()
            .map(|op| format!(" ({op})"))
            .unwrap_or_default(),
        row.file,
        row.anchor,
        row.replace
    );
    let what = match row.verdict {
        Verdict::Survived => "The suite passed with the mutant in place.".to_string(),
        Verdict::NotCovered => {
            "No test runs the mutated lines; the whole suite passed with the mutant in place."
                .to_string()
        }
        Verdict::ControlKilled => "The suite noticed an edit it must not notice.".to_string(),
        Verdict::Skipped { matches } => {
            format!("The anchor occurs {matches} times, not exactly once: nothing was swapped.")
        }
        Verdict::Error | Verdict::Unviable => match &row.run {
            Some(run) => format!("No verdict: {}.", run.status),
            None => "No verdict: the suite could not start.".to_string(),
        },
        Verdict::Killed | Verdict::KilledHang | Verdict::ControlHeld => String::new(),
    };
    text.push(' ');
    text.push_str(&what);
    let claim = match &row.undoes {
        _ if !row.claim_named => Some(NOT_NAMED.to_string()),
        Some(u) => Some(u.clone()),
        None => None,
    };
    if let Some(claim) = claim {
        text.push_str(&format!(" Claim: {claim}."));
    }
    if let Some(context) = &row.context {
        text.push_str("\n\n");
        text.push_str(context.trim_end());
    }
    text
}

/// What the result reports, the same in every run that reports it: the file, the anchor and its
/// replacement (never a line number, which moves with every edit above it).
fn fingerprint(row: &Row) -> String {
    let mut bytes = Vec::new();
    for part in [&row.file, &row.anchor, &row.replace] {
        bytes.extend_from_slice(part.as_bytes());
        bytes.push(0);
    }
    manifests::Digest::of(&bytes).to_hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_that_is_a_result_has_its_rule() {
        for v in [
            Verdict::Survived,
            Verdict::NotCovered,
            Verdict::ControlKilled,
            Verdict::Skipped { matches: 2 },
            Verdict::Error,
            Verdict::Unviable,
        ] {
            let rule = rule_of(v).expect("a rule");
            assert!(RULES.iter().any(|r| r.0 == rule), "{v}");
        }
        assert_eq!(rule_of(Verdict::Killed), None);
        assert_eq!(rule_of(Verdict::ControlHeld), None);
        assert_eq!(rule_of(Verdict::KilledHang), None);
    }

    #[test]
    fn a_findings_message_holds_the_swap_the_claim_and_the_context() {
        let mut row = Row::sample(0, "m", Verdict::Survived);
        row.undoes = Some("TODO: the claim this mutant undoes".into());
        row.claim_named = false;
        row.operator = Some("boundary".into());
        row.context = Some("@@ -1 +1 @@\n-a\n+b\n".into());
        let text = message(&row);
        assert!(
            text.starts_with(
                "SURVIVED: mutant \"m\" (boundary) in f: `a` -> `b`. The suite passed"
            ),
            "{text}"
        );
        assert!(text.contains(" Claim: claim not named."), "{text}");
        assert!(!text.contains("TODO"), "{text}");
        assert!(text.ends_with("\n\n@@ -1 +1 @@\n-a\n+b"), "{text}");
        let a = fingerprint(&row);
        row.name = "renamed".into();
        assert_eq!(fingerprint(&row), a, "a name is not what is reported");
        row.replace = "c".into();
        assert_ne!(fingerprint(&row), a);
    }
}
