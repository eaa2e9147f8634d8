//! `probe bracket`: runs a client once per n and finds where its tool results stop coming back
//! inline.
//!
//! Each run is judged from two sides: what the server sent (its log names n and the nonce in the
//! markers) and what the client handed on (its output, or for the Claude preset what the model
//! stand-in received). Only the end marker with that very nonce proves a full delivery; a spill
//! message ("Output has been saved to", ...) proves a save; a start marker without the end marker
//! is a cut. Every client run goes through `runner`: its own process group, a timeout,
//! and strays killed, so a hung client is an `error (hang)`, never a verdict.
//!
//! The concerns, one file each: [`driver`] runs the client for one point; [`judge`] turns what
//! came back into a [`Verdict`]; [`results`] holds the points, the threshold and what
//! `results.json` records; [`render`] shows them as text and Markdown; [`search`] picks the
//! points (a list, N-S, N and N+S around a point, or a bisection), reporting each to an
//! [`events::Observer`] that [`render::ProgressView`] shows; [`turn`] judges a point of the
//! per-turn budget (`--turn K`: K results in one turn, n their total). `probe check` is built
//! from the same parts and ends the same way ([`conclude`], [`publish`]).

mod compare;
mod driver;
pub(crate) mod events;
mod fills;
mod judge;
pub(crate) mod render;
mod results;
mod search;
mod turn;

#[cfg(test)]
pub(crate) use compare::compare as compare_for_test;
pub(crate) use compare::Shape;
pub(crate) use driver::{set_serve_prefix, Driver};
pub(crate) use fills::bracket_units;
pub(crate) use judge::Verdict;
pub(crate) use render::ProgressView;
#[cfg(test)]
pub(crate) use results::point_for_test;
pub(crate) use results::{threshold, CheckRecord, Point, Results, UnitsRecord};
pub(crate) use search::{around, bisect, bisect_range, run_observed, BisectEnd, Plan};
pub(crate) use turn::{split, MAX_CALLS};

use cmdline::Exit;
use mcp::emit::Fill;
use regex::Regex;
use report::{ColorChoice, Format, Timestamp};
use runner::stop::Interrupted;
use std::path::PathBuf;
use std::time::Duration;

/// What a client is: a preset (`crate::presets`) with its executable, or a shell command with
/// `{n}` and `{mcp_config}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Client {
    Preset {
        preset: crate::presets::Preset,
        bin: PathBuf,
        /// What the stand-in's token counter answers (`None`: units / 4).
        count_tokens: Option<u64>,
    },
    Command(String),
}

/// How a client is run and judged, shared by `bracket` and `check`.
#[derive(Debug, Clone)]
pub(crate) struct ClientSettings {
    pub client: Client,
    pub fill: Fill,
    /// The results the model asks for at once in one turn: 1 measures one result's limit, more
    /// the turn's total (each point's n is then the total, split over the calls).
    pub calls: u64,
    /// Regexes that mark a reply as saved; empty means [`DEFAULT_SPILL_PATTERNS`].
    pub spill_patterns: Vec<Regex>,
    pub timeout: Duration,
    pub out: PathBuf,
    pub json: bool,
    /// What to print on stdout (`json` true means [`Format::Json`]); the files are the same.
    pub format: Format,
    /// Colour for the verdict words printed on stdout (never in files).
    pub color: ColorChoice,
}

impl ClientSettings {
    /// The format to print in, `--json` included.
    pub(crate) fn output_format(&self) -> Format {
        self.format.with_json_flag(self.json)
    }
}

/// What `bracket` takes.
#[derive(Debug, Clone)]
pub(crate) struct BracketSettings {
    pub client: ClientSettings,
    pub plan: Plan,
    /// After a bisection, bisect with the other fills and infer the unit.
    pub units: bool,
}

/// The messages Claude Code substitutes for a result it saved to a file: what a
/// command client is judged by unless `--spill-pattern` says otherwise (presets bring their
/// own).
pub(crate) const DEFAULT_SPILL_PATTERNS: [&str; 3] = [
    "exceeds maximum allowed tokens",
    "Output has been saved to",
    "persisted-output",
];

/// `probe bracket`.
pub(crate) fn run_bracket(settings: &BracketSettings) -> anyhow::Result<Exit> {
    let started = Timestamp::now();
    let mut driver = Driver::new(&settings.client)?;
    let quiet = settings.client.output_format() == Format::Json;
    let mut progress = render::progress(settings.plan.runs(), quiet, settings.client.color);
    let mut bisect_record = None;
    let mut units = None;
    let outcome: anyhow::Result<()> = (|| {
        match &settings.plan {
            Plan::Points(points) => {
                for &n in points {
                    search::run_observed(&mut driver, n, &mut progress)?;
                    driver.write_partial("bracket", started)?;
                }
            }
            Plan::Bisect { lo, hi } => {
                bisect_record = Some(search::bisect_range(&mut driver, *lo, *hi, &mut progress)?);
                if settings.units {
                    units = Some(bracket_units(&mut driver, *lo, *hi, &mut progress)?);
                }
            }
        }
        Ok(())
    })();
    let mut results = conclude("bracket", &driver, started, &mut progress, outcome)?;
    results.bisect = bisect_record;
    results.units = units;
    publish(&driver, &results, &mut progress)?;
    if results.interrupted {
        return Ok(progress.finish(Exit::Interrupted));
    }
    let judged = results
        .points
        .iter()
        .filter(|p| p.verdict.is_judged())
        .count();
    if judged == 0 && results.points.iter().all(|p| p.verdict == Verdict::Error) {
        progress.emit(&events::Note::NoVerdict {
            points: &driver.settings().out.join("points"),
        });
        return Ok(progress.finish(Exit::Precondition));
    }
    let held = judged == results.points.len() && results.bisect.as_ref().is_none_or(|b| b.held);
    Ok(progress.finish(Exit::from_held(held)))
}

/// The results of a bracket or check run that ended with `outcome`, before the command adds
/// its own record: an interrupt keeps what was finished (marked partial), any other error ends
/// the command.
pub(crate) fn conclude(
    command: &'static str,
    driver: &Driver,
    started: Timestamp,
    observer: &mut dyn events::Observer,
    outcome: anyhow::Result<()>,
) -> anyhow::Result<Results> {
    observer.clear();
    let interrupted = match outcome {
        Ok(()) => false,
        Err(e) if e.is::<Interrupted>() => true,
        Err(e) => return Err(e),
    };
    let mut results = Results::new(command, driver, started);
    results.interrupted = interrupted;
    results.complete = !interrupted;
    Ok(results)
}

/// Writes `results.txt` and `results.json` into --out, printing nothing.
pub(crate) fn save_results(driver: &Driver, results: &Results) -> anyhow::Result<()> {
    results::write_results(
        &driver.settings().out,
        results,
        &render::text(results, report::Painter::plain()),
    )
}

/// Writes `results.txt` and `results.json` into --out and shows the results on stdout through
/// `out` in the chosen format (the text coloured only there, never in the file).
pub(crate) fn publish(
    driver: &Driver,
    results: &Results,
    out: &mut ProgressView,
) -> anyhow::Result<()> {
    let settings = driver.settings();
    results::write_results(
        &settings.out,
        results,
        &render::text(results, report::Painter::plain()),
    )?;
    out.show_document(&render::Document(results), settings.output_format())
}
