//! What a bracket or check run found, as `results.json` records it: the points, the threshold
//! read off them, and the record `check` and `--bisect` add.
//!
//! The field names and their order are the file's layout (docs/schema/results.schema.json); the
//! records' fields are declared in sorted order because they were JSON maps, sorted, before.

use super::{Driver, Verdict};
use anyhow::Context;
use mcp::emit::Fill;
use report::color::Style;
use report::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// One run of the client at one n.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Point {
    /// The units asked for: of the one result, or of all results of the turn together.
    pub n: u64,
    /// The fill this point ran with (the run's `fill`, or another one for the unit).
    pub fill: Fill,
    /// How many results the model asked for at once in the turn (1: one result; more: a
    /// point of the per-turn budget, n split over them).
    #[schemars(range(min = 1))]
    pub calls: u64,
    /// Each result of a turn of several, judged on its own, in call order (empty for one).
    pub results: Vec<TurnResult>,
    pub verdict: Verdict,
    /// What the client substituted or why the run failed (first 300 characters).
    pub message: Option<String>,
    /// The file the client said holds the full text, when it named one.
    pub saved_path: Option<String>,
    /// How what came back differs from what was sent: where, what took its place, how much came
    /// back, the client's note (none when it came back exactly, or nothing was judged).
    pub shape: Option<super::compare::Shape>,
    /// UTF-16 units of what the client handed on (the stand-in's view; presets only).
    pub received_units: Option<u64>,
    /// How many times the client asked the token counter (presets only).
    pub count_tokens_calls: Option<u64>,
    pub nonce: Option<String>,
    pub status: String,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    pub strays_killed: u32,
    pub start: Timestamp,
    pub dir: PathBuf,
}

/// One result of a turn of several calls, judged exactly on its own.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct TurnResult {
    /// The units its call asked for.
    pub n: u64,
    pub verdict: Verdict,
    /// What the client substituted or why it was not judged (first 300 characters).
    pub message: Option<String>,
    pub saved_path: Option<String>,
    /// How what came back differs from what was sent (none when it came back exactly).
    pub shape: Option<super::compare::Shape>,
    /// UTF-16 units of what the client handed on for it.
    pub received_units: Option<u64>,
    /// The nonce its call was served with (none for a call the client never made).
    pub nonce: Option<String>,
}

impl TurnResult {
    pub(crate) fn of(
        n: u64,
        nonce: Option<&str>,
        judgment: super::judge::Judgment,
        received_units: Option<u64>,
    ) -> TurnResult {
        TurnResult {
            n,
            verdict: judgment.verdict,
            message: judgment.message.map(|m| report::text::clip(&m, 300)),
            saved_path: judgment.saved_path,
            shape: judgment.shape,
            received_units,
            nonce: nonce.map(String::from),
        }
    }
}

/// Where the results put the threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Threshold {
    /// The largest n that came back inline, below every n that did not.
    pub last_inline: Option<u64>,
    /// The smallest n that came back saved or truncated.
    pub first_over: Option<u64>,
    /// How that first n came back.
    pub over_verdict: Option<Verdict>,
    /// `first_over == last_inline + 1`: the threshold is pinned to one unit.
    pub exact: bool,
    /// No inline point lies above an over point.
    pub monotone: bool,
    /// "inline up to 50000, saved from 50001".
    pub text: String,
}

/// Reads the threshold off the points run with `fill` and `calls` results a turn.
pub(crate) fn threshold(points: &[Point], fill: Fill, calls: u64) -> Threshold {
    let mut sorted: Vec<&Point> = points
        .iter()
        .filter(|p| p.fill == fill && p.calls == calls)
        .collect();
    sorted.sort_by_key(|p| p.n);
    let first = sorted.iter().find(|p| p.verdict.is_over());
    let first_over = first.map(|p| p.n);
    let last_inline = sorted
        .iter()
        .filter(|p| p.verdict == Verdict::Inline && first_over.is_none_or(|f| p.n < f))
        .map(|p| p.n)
        .max();
    let monotone = !sorted
        .iter()
        .any(|p| p.verdict == Verdict::Inline && first_over.is_some_and(|f| p.n > f));
    let over_verdict = first.map(|p| p.verdict);
    let mut text = match (last_inline, first_over, over_verdict) {
        (Some(li), Some(fo), Some(v)) => format!("inline up to {li}, {v} from {fo}"),
        (Some(li), None, _) => format!("inline up to {li}; no limit found"),
        (None, Some(fo), Some(v)) => format!("{v} from {fo}; nothing came back inline"),
        _ => "no threshold: no point came back inline, saved or truncated".to_string(),
    };
    if !monotone {
        text.push_str(" (not monotone: a larger n came back inline)");
    }
    Threshold {
        last_inline,
        first_over,
        over_verdict,
        exact: matches!((last_inline, first_over), (Some(li), Some(fo)) if fo == li + 1),
        monotone,
        text,
    }
}

/// What is known about the client being measured.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct ClientInfo {
    /// The preset's name (`claude`, `codex`, ...) or `command`.
    #[schemars(extend("enum" = ["claude", "codex", "gemini", "qwen", "opencode", "cline", "copilot", "continue", "command"]))]
    pub kind: String,
    pub command: String,
    /// What `BIN --version` printed (presets).
    pub version: Option<String>,
    /// The model slug the preset configures, where the client's limit depends on it.
    pub model: Option<String>,
    /// The `clientInfo` the client sent in MCP `initialize` (name and version).
    #[schemars(schema_with = "object_or_null")]
    pub mcp_client: Option<Value>,
}

/// The schema of a JSON object the client sent as it sent it, or null.
fn object_or_null(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "The clientInfo the client sent in MCP initialize, as it sent it.",
        "type": ["object", "null"],
    })
}

/// The version of the results.json layout; bumped when a field changes meaning or goes away.
pub(crate) const RESULTS_VERSION: u32 = 1;

/// Everything one bracket (or check) run found: what `results.json` holds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(
    deny_unknown_fields,
    title = "results.json",
    description = "What `probe bracket` and `probe check` write to OUT/results.json (and print with --format json). `version` is bumped when a field changes meaning or goes away."
)]
pub(crate) struct Results {
    #[schemars(extend("const" = 1))]
    pub version: u32,
    #[schemars(extend("const" = "probe"))]
    pub tool: &'static str,
    #[schemars(extend("enum" = ["bracket", "check"]))]
    pub command: &'static str,
    pub client: ClientInfo,
    pub fill: Fill,
    /// The results asked for in one turn (`--turn K`; 1 without): with more than one, n and
    /// the threshold are the turn's total.
    #[schemars(range(min = 1))]
    pub calls: u64,
    pub spill_patterns: Vec<String>,
    pub started: Timestamp,
    pub finished: Timestamp,
    pub interrupted: bool,
    /// Whether the run finished: false in the copies written as points finish (and in an
    /// interrupted run's), whose points are those done so far.
    pub complete: bool,
    pub points: Vec<Point>,
    pub threshold: Threshold,
    /// `check` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub check: Option<CheckRecord>,
    /// `--bisect` only: whether LO came back inline and HI did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub bisect: Option<BisectRecord>,
    /// The unit the client counts in, when more than one fill was run (`--units`, `check`
    /// with a unit, `clients`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub units: Option<UnitsRecord>,
}

/// What bracketing with more than one fill found: each fill's threshold, and the unit they
/// agree in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct UnitsRecord {
    pub observations: Vec<crate::units::Observation>,
    /// `None` when no unit makes the thresholds agree.
    pub inference: Option<crate::units::Inference>,
}

impl Results {
    pub(crate) fn new(command: &'static str, driver: &Driver, started: Timestamp) -> Results {
        Results {
            version: RESULTS_VERSION,
            tool: "probe",
            command,
            client: driver.info.clone(),
            fill: driver.settings().fill,
            calls: driver.settings().calls,
            spill_patterns: driver
                .settings()
                .spill_patterns
                .iter()
                .map(|re| re.as_str().to_string())
                .collect(),
            started,
            finished: Timestamp::now(),
            interrupted: false,
            complete: false,
            points: driver.points.clone(),
            threshold: threshold(
                &driver.points,
                driver.settings().fill,
                driver.settings().calls,
            ),
            check: None,
            bisect: None,
            units: None,
        }
    }
}

/// Writes `results.txt` and `results.json` (atomically, so a reader never sees half).
pub(crate) fn write_results(out: &Path, r: &Results, text: &str) -> anyhow::Result<()> {
    report::json::write_atomic(&out.join("results.json"), r)
        .with_context(|| format!("writing {}", out.join("results.json").display()))?;
    files::atomic::write_text_atomic(&out.join("results.txt"), text)
        .with_context(|| format!("writing {}", out.join("results.txt").display()))?;
    Ok(())
}

/// What `check` adds to the results: the threshold expected, whether it held, the cap.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct CheckRecord {
    /// The threshold expected, in `unit` (UTF-16 units without one).
    pub expect: u64,
    /// The unit expected (`--expect 51200bytes`, `25000tokens`), or none.
    pub unit: Option<crate::units::Measure>,
    /// Whether the astral fill stopped at the same size in the unit as the threshold found
    /// (`None`: no unit, `lines` or `tokens`, or not checked: see `unit_note`).
    pub unit_held: Option<bool>,
    /// The size, in `unit`, the astral fill was checked at: the threshold expected when it
    /// held, the one measured when it moved.
    pub unit_at: Option<u64>,
    /// Why a unit of text was not checked (no threshold pinned, a turn, no verdict).
    pub unit_note: Option<String>,
    /// N came back inline and N+1 saved or truncated.
    pub held: bool,
    /// Both N and N+1 gave a verdict (inline, saved or truncated).
    pub judged: bool,
    /// The fraction under the threshold the suggested cap keeps.
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1))]
    pub margin: f64,
    /// The threshold measured, when it is exact, in `unit`.
    pub measured: Option<u64>,
    /// Why the search for the new threshold stopped, when it did.
    pub note: Option<String>,
    pub suggested_cap: Option<u64>,
}

impl CheckRecord {
    pub(crate) fn verdict(&self) -> CheckVerdict {
        if !self.judged {
            CheckVerdict::NoVerdict
        } else if self.held {
            CheckVerdict::Held
        } else {
            CheckVerdict::Moved
        }
    }
}

/// `check`'s verdict on the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckVerdict {
    Held,
    Moved,
    /// N or N+1 gave no verdict: the client could not be judged.
    NoVerdict,
}

impl CheckVerdict {
    /// The colour the verdict is shown in.
    pub(crate) fn style(self) -> Style {
        match self {
            CheckVerdict::Held => Style::Good,
            CheckVerdict::Moved => Style::Bad,
            CheckVerdict::NoVerdict => Style::Warn,
        }
    }
}

impl fmt::Display for CheckVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckVerdict::Held => "held",
            CheckVerdict::Moved => "MOVED",
            CheckVerdict::NoVerdict => "no verdict",
        })
    }
}

/// What `--bisect LO..HI` adds to the results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct BisectRecord {
    /// LO came back inline, HI did not, and every midpoint steered the search.
    pub held: bool,
    pub hi: u64,
    pub lo: u64,
    /// Why it did not hold.
    pub why: Option<String>,
}

/// A point at `n`, inline, with every other field empty (for tests elsewhere).
#[cfg(test)]
pub(crate) fn point_for_test(n: u64) -> Point {
    tests::point(n, Verdict::Inline)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn point(n: u64, verdict: Verdict) -> Point {
        Point {
            n,
            fill: Fill::Ascii,
            calls: 1,
            results: Vec::new(),
            verdict,
            message: None,
            saved_path: None,
            shape: None,
            received_units: None,
            count_tokens_calls: None,
            nonce: None,
            status: "exit 0".into(),
            duration_secs: 0.0,
            strays_killed: 0,
            start: Timestamp::now(),
            dir: PathBuf::new(),
        }
    }

    fn of(points: &[(u64, Verdict)]) -> Threshold {
        threshold(
            &points.iter().map(|&(n, v)| point(n, v)).collect::<Vec<_>>(),
            Fill::Ascii,
            1,
        )
    }

    #[test]
    fn the_threshold_is_exact_only_one_unit_apart() {
        let t = of(&[(101, Verdict::Saved), (100, Verdict::Inline)]);
        assert_eq!((t.last_inline, t.first_over), (Some(100), Some(101)));
        assert!(t.exact && t.monotone);
        assert_eq!(t.text, "inline up to 100, saved from 101");
        let t = of(&[(99, Verdict::Inline), (101, Verdict::Truncated)]);
        assert!(!t.exact);
        assert_eq!(t.text, "inline up to 99, truncated from 101");
    }

    #[test]
    fn an_inline_point_above_the_first_over_is_not_monotone_and_not_the_last_inline() {
        let t = of(&[
            (100, Verdict::Inline),
            (110, Verdict::Saved),
            (120, Verdict::Inline),
        ]);
        assert_eq!(t.last_inline, Some(100));
        assert_eq!(t.first_over, Some(110));
        assert!(!t.monotone);
        assert!(t
            .text
            .ends_with("(not monotone: a larger n came back inline)"));
    }

    #[test]
    fn errors_and_uncalled_points_place_no_threshold() {
        let t = of(&[(100, Verdict::Inline), (200, Verdict::Error)]);
        assert_eq!(t.text, "inline up to 100; no limit found");
        let t = of(&[(100, Verdict::NotCalled)]);
        assert_eq!(
            t.text,
            "no threshold: no point came back inline, saved or truncated"
        );
        let t = of(&[(100, Verdict::Saved)]);
        assert_eq!(t.text, "saved from 100; nothing came back inline");
        assert_eq!(t.over_verdict, Some(Verdict::Saved));
    }

    #[test]
    fn the_check_verdict_follows_its_record() {
        let mut r = CheckRecord {
            expect: 5,
            unit: None,
            unit_held: None,
            unit_at: None,
            unit_note: None,
            held: true,
            judged: true,
            margin: 0.2,
            measured: Some(5),
            note: None,
            suggested_cap: Some(4),
        };
        assert_eq!(r.verdict(), CheckVerdict::Held);
        r.held = false;
        assert_eq!(r.verdict(), CheckVerdict::Moved);
        r.judged = false;
        assert_eq!(r.verdict(), CheckVerdict::NoVerdict);
        assert_eq!(CheckVerdict::Held.style(), Style::Good);
        assert_eq!(CheckVerdict::Moved.style(), Style::Bad);
    }

    #[test]
    fn the_committed_schema_is_the_one_the_record_types_generate() {
        let schema = report::schema::generate::<Results>(
            "https://example.invalid/gatekit/schema/results.schema.json",
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/schema/results.schema.json");
        if let Err(why) = report::schema::check_committed(&path, &schema) {
            panic!("{why}");
        }
    }
}
