//! `probe clients`: every installed preset measured the same way, in one table: its version,
//! the model slug where it matters, the limit in the unit it counts, what happens above it,
//! and the reply cap a server should keep under (in that unit).
//!
//! Each client gets its own bracket folder (`OUT/NAME/results.json`, with the unit record);
//! `OUT/clients.json` (docs/schema/clients.schema.json) and `OUT/clients.txt` hold the table.
//! A client that is not installed is listed as such, never measured; a client that could not
//! be judged is a row with its reason, and the command goes on to the next.

use super::kinds::{self, Finding, Limit, LimitKind};
use crate::bracket::events::{Observer, Search};
use crate::bracket::{
    bracket_units, conclude, save_results, Client, ClientSettings, Driver, ProgressView,
};
use crate::check::suggested_cap;
use crate::presets::Preset;
use crate::units::Unit;
use mcp::emit::Fill;
use report::color::Style;
use report::{ColorChoice, Format, Timestamp};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// What `probe clients` takes.
#[derive(Debug, Clone)]
pub(crate) struct MatrixSettings {
    /// The presets to run; empty is all.
    pub only: Vec<Preset>,
    pub lo: u64,
    pub hi: u64,
    pub margin: f64,
    pub timeout: Duration,
    pub out: PathBuf,
    pub format: Format,
    pub color: ColorChoice,
}

/// How a client's row came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RowStatus {
    /// Limit and unit found.
    Measured,
    /// Runs were judged, but no unit made the fills agree, or no limit was in the range.
    Partial,
    /// Its executable was not found.
    NotInstalled,
    /// It could not be run or judged.
    Failed,
}

impl RowStatus {
    pub(crate) fn style(self) -> Style {
        match self {
            RowStatus::Measured => Style::Good,
            RowStatus::Partial | RowStatus::NotInstalled => Style::Warn,
            RowStatus::Failed => Style::Bad,
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            RowStatus::Measured => "measured",
            RowStatus::Partial => "partial",
            RowStatus::NotInstalled => "not installed",
            RowStatus::Failed => "failed",
        }
    }
}

/// One client's row.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Row {
    pub client: Preset,
    pub status: RowStatus,
    /// The model API the client calls (the stand-in's shape).
    pub api: standin::Api,
    pub bin: String,
    /// The version the preset was written against (install-clients.sh's pin).
    pub pinned: &'static str,
    pub version: Option<String>,
    pub model: Option<String>,
    /// The largest reply, in `unit`, that came back whole.
    pub limit: Option<u64>,
    pub unit: Option<Unit>,
    /// The room a wrapper the client adds before counting takes, in `unit`.
    pub offset: Option<u64>,
    /// For a bytes limit: the tokens it is at four bytes a token.
    pub tokens_estimate: Option<u64>,
    /// The fills stopped up to 1% apart in `unit`: `limit` is an estimate (the largest).
    pub estimate: bool,
    /// How the first reply over the limit came back (ascii fill).
    pub above: Option<crate::bracket::Verdict>,
    /// What the client did to that reply, in its own words: where the text first differs, what
    /// took its place, and the note it put there (quoted, escaped, capped).
    pub above_shape: Option<crate::bracket::Shape>,
    /// A reply cap `margin` under the limit, in `unit`.
    pub suggested_cap: Option<u64>,
    /// Why the row is not measured, or what to know about it.
    pub note: Option<String>,
    /// Every kind of limit looked for (size, lines, tokens, the per-turn total), each found or
    /// said why not (empty when the client was not run).
    pub limits: Vec<Limit>,
    /// The client's bracket folder (results.json with every point).
    pub dir: String,
}

/// What `clients.json` holds.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(
    deny_unknown_fields,
    title = "probe clients.json",
    description = "The table `probe clients` writes to OUT/clients.json (and prints with --format json): one row per preset, each measured in its own folder (OUT/NAME/results.json, results.schema.json). `version` is bumped when a field changes meaning or goes away."
)]
pub(crate) struct Matrix {
    #[schemars(extend("const" = 1))]
    pub version: u32,
    #[schemars(extend("const" = "probe"))]
    pub tool: &'static str,
    #[schemars(extend("const" = "clients"))]
    pub command: &'static str,
    pub started: Timestamp,
    pub finished: Timestamp,
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1))]
    pub margin: f64,
    /// LO and HI of the bisection, in emit's n (UTF-16 units).
    pub range: [u64; 2],
    pub rows: Vec<Row>,
}

/// A table of one row (Claude, not installed), for the renderer's tests.
#[cfg(test)]
pub(crate) fn one_row_for_test() -> Matrix {
    let settings = MatrixSettings {
        only: Vec::new(),
        lo: 1,
        hi: 2,
        margin: 0.2,
        timeout: Duration::from_secs(1),
        out: PathBuf::from("/nonexistent"),
        format: Format::Text,
        color: ColorChoice::Never,
    };
    let mut row = blank_row(Preset::Claude, &settings);
    row.version = Some("2.1.332".into());
    Matrix {
        version: 1,
        tool: "probe",
        command: "clients",
        started: Timestamp::now(),
        finished: Timestamp::now(),
        margin: 0.2,
        range: [1, 2],
        rows: vec![row],
    }
}

/// A preset's row before it is measured: not installed, nothing found.
fn blank_row(preset: Preset, settings: &MatrixSettings) -> Row {
    Row {
        client: preset,
        status: RowStatus::NotInstalled,
        api: preset.spec().api,
        bin: preset.find_bin().display().to_string(),
        pinned: preset.spec().version,
        version: None,
        model: preset.spec().model.map(String::from),
        limit: None,
        unit: None,
        offset: None,
        tokens_estimate: None,
        estimate: false,
        above: None,
        above_shape: None,
        suggested_cap: None,
        note: None,
        limits: Vec::new(),
        dir: settings.out.join(preset.name()).display().to_string(),
    }
}

/// Measures one preset into its row.
pub(super) fn measure(
    preset: Preset,
    settings: &MatrixSettings,
    progress: &mut ProgressView,
    interrupted: &mut bool,
) -> anyhow::Result<Row> {
    let bin = preset.find_bin();
    let dir = settings.out.join(preset.name());
    let mut row = blank_row(preset, settings);
    if !bin.is_file() {
        row.note = Some(format!("scripts/install-clients.sh {preset} installs it"));
        return Ok(row);
    }
    let client = ClientSettings {
        client: Client::Preset {
            preset,
            bin,
            count_tokens: None,
        },
        fill: mcp::emit::Fill::Ascii,
        calls: 1,
        spill_patterns: Vec::new(),
        timeout: settings.timeout,
        out: dir,
        json: false,
        format: Format::Text,
        color: ColorChoice::Never,
    };
    let started = Timestamp::now();
    let mut driver = match Driver::new(&client) {
        Ok(d) => d,
        Err(e) => {
            row.status = RowStatus::Failed;
            row.note = Some(files::escape::text(&format!("{e:#}")).into_owned());
            return Ok(row);
        }
    };
    row.version = driver.info.version.clone();
    // At most three bisections of the range (one per fill) and one of the turn's total.
    let runs = 4 * (2 + (64 - (settings.hi - settings.lo).leading_zeros()) as usize);
    progress.steps(runs);
    progress.search(Search::Client(preset));
    let mut record = None;
    let mut turn = None;
    let outcome = bracket_units(&mut driver, settings.lo, settings.hi, progress).and_then(|r| {
        let size = r
            .observations
            .iter()
            .find(|o| o.fill == Fill::Ascii && o.first_over.is_some())
            .map(|o| o.last_inline);
        record = Some(r);
        let limit = kinds::turn(
            &mut driver,
            preset,
            size,
            settings.lo,
            settings.hi,
            progress,
        )?;
        turn = Some(limit);
        Ok(())
    });
    let mut results = conclude("bracket", &driver, started, progress, outcome)?;
    *interrupted = results.interrupted;
    results.units = record.clone();
    save_results(&driver, &results)?;
    row.above = results.threshold.over_verdict;
    row.above_shape = results
        .points
        .iter()
        .find(|p| Some(p.n) == results.threshold.first_over && p.fill == Fill::Ascii)
        .and_then(|p| p.shape.clone());
    let units = record.clone();
    match record.and_then(|r| r.inference) {
        Some(i) => {
            row.status = if i.first_over.is_some() {
                RowStatus::Measured
            } else {
                RowStatus::Partial
            };
            if i.first_over.is_none() {
                row.note = Some(format!("inline up to {} in every fill", settings.hi));
            } else if !i.exact {
                row.note = Some(format!(
                    "an estimate: the fills stop up to 1% apart in {} (the largest is shown)",
                    i.unit
                ));
            } else if !i.also.is_empty() {
                row.note = Some(format!(
                    "also agrees in {}",
                    i.also
                        .iter()
                        .map(|u| u.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            row.suggested_cap = Some(suggested_cap(i.limit, settings.margin));
            row.limit = Some(i.limit);
            row.unit = Some(i.unit);
            row.offset = i.offset;
            row.tokens_estimate = i.tokens_estimate;
            row.estimate = !i.exact;
        }
        None => {
            let judged = results.points.iter().any(|p| p.verdict.is_judged());
            row.status = if judged {
                RowStatus::Partial
            } else {
                RowStatus::Failed
            };
            let why = results
                .points
                .iter()
                .find(|p| !p.verdict.is_judged())
                .and_then(|p| p.message.clone());
            row.note = Some(unmeasured_note(
                judged,
                why.as_deref(),
                &results.threshold.text,
            ));
        }
    }
    row.limits = limits(&row, units.as_ref(), &results.points, turn, settings.hi);
    Ok(row)
}

/// Why a row has no size limit: a point that was not judged (its message, which stopped the
/// search there) comes first, since "no limit found" would claim a search that never ran.
fn unmeasured_note(judged: bool, why: Option<&str>, ascii: &str) -> String {
    match (judged, why) {
        (true, Some(why)) => format!(
            "ascii: {ascii}; the search stopped at a point that was no verdict: {}",
            files::escape::text(why)
        ),
        (true, None) => format!("no unit makes the fills agree; ascii: {ascii}"),
        (false, Some(why)) => files::escape::text(why).into_owned(),
        (false, None) => "no point was judged".into(),
    }
}

/// Every kind of limit for a measured row: its size limit as the row says it, then lines,
/// tokens and the per-turn total, each found or said why not.
fn limits(
    row: &Row,
    units: Option<&crate::bracket::UnitsRecord>,
    points: &[crate::bracket::Point],
    turn: Option<Limit>,
    hi: u64,
) -> Vec<Limit> {
    let size = match (row.status, row.limit) {
        (RowStatus::Measured, Some(limit)) => Limit {
            kind: LimitKind::Size,
            found: Finding::Found,
            limit: Some(limit),
            unit: row.unit.map(|u| match row.offset {
                Some(o) => format!("{u} (+{o} wrapper)"),
                None => u.to_string(),
            }),
            calls: None,
            above: row.above,
            above_shape: row.above_shape.clone(),
            note: row
                .estimate
                .then(|| "an estimate: the fills stop up to 1% apart".into()),
        },
        _ => Limit {
            kind: LimitKind::Size,
            found: if row.status == RowStatus::Partial && row.limit.is_none() {
                Finding::NoneFound
            } else {
                Finding::NotMeasured
            },
            limit: None,
            unit: None,
            calls: None,
            above: None,
            above_shape: None,
            note: row.note.clone(),
        },
    };
    let not_run = |kind| Limit {
        kind,
        found: Finding::NotMeasured,
        limit: None,
        unit: None,
        calls: None,
        above: None,
        above_shape: None,
        note: Some("the run stopped before this kind was searched".into()),
    };
    vec![
        size,
        units.map_or_else(|| not_run(LimitKind::Lines), |u| kinds::lines(u, hi)),
        units.map_or_else(|| not_run(LimitKind::Tokens), |u| kinds::tokens(u, points)),
        turn.unwrap_or_else(|| not_run(LimitKind::Turn)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_schema_is_the_one_the_record_types_generate() {
        let schema = report::schema::generate::<Matrix>(
            "https://example.invalid/gatekit/schema/clients.schema.json",
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/schema/clients.schema.json");
        if let Err(why) = report::schema::check_committed(&path, &schema) {
            panic!("{why}");
        }
    }

    #[test]
    fn a_row_stopped_by_a_point_with_no_verdict_says_so_not_that_no_limit_was_found() {
        // Continue's CLI: 1000 inline, HI dropped with the conversation (an error).
        let note = unmeasured_note(
            true,
            Some("no result reached the stand-in\n(exit 0)"),
            "inline up to 1000; no limit found",
        );
        assert_eq!(
            note,
            "ascii: inline up to 1000; no limit found; the search stopped at a point that was \
             no verdict: no result reached the stand-in\\n(exit 0)"
        );
        assert!(unmeasured_note(true, None, "x").starts_with("no unit makes the fills agree"));
        assert_eq!(unmeasured_note(false, None, "x"), "no point was judged");
        assert_eq!(unmeasured_note(false, Some("hung"), "x"), "hung");
    }
}
