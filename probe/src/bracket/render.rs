//! The results for a person: the text report (results.txt, and stdout unless asked otherwise),
//! GitHub-flavoured Markdown for a pull request or a job summary, and the progress line per
//! point. Colour comes from the verdict's kind and only ever reaches stdout.

use super::events::{Finished, Note, Observer, Search, Step};
use super::results::{CheckRecord, CheckVerdict, Point, Results, UnitsRecord};
use crate::units::Measure;
use cmdline::{Render, Shown};
use report::fit::lines as fit_lines;
use report::markdown::{self, code};
use report::table::Cell;
use report::text::clip;
use report::{ColorChoice, Painter, Table};

/// The points in order of n: verdict, units received, time, status, message.
fn points_table(r: &Results) -> Table {
    let mut points: Vec<&Point> = r.points.iter().collect();
    points.sort_by_key(|p| (p.fill != r.fill, p.fill.to_string(), p.n));
    // A fill column only when the run used more than one (the unit's search).
    let fills = points.iter().any(|p| p.fill != r.fill);
    let mut headers = vec!["n", "verdict", "received", "time", "status", "message"];
    if fills {
        headers.insert(1, "fill");
    }
    let mut table = Table::new(headers);
    // The message (what the client said, up to 100 characters) wraps inside its column.
    table.wrap(if fills { 6 } else { 5 });
    for p in points {
        let mut cells = vec![
            Cell::from(p.n.to_string()),
            Cell::styled(p.verdict.to_string(), p.verdict.style()),
            Cell::from(
                p.received_units
                    .map(|u| u.to_string())
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::from(format!("{:.1}s", p.duration_secs)),
            Cell::from(p.status.clone()),
            Cell::from(
                p.message
                    .as_deref()
                    .map(|m| clip(m, 100))
                    .unwrap_or_default(),
            ),
        ];
        if fills {
            cells.insert(1, Cell::from(p.fill.to_string()));
        }
        table.row(cells);
    }
    table
}

/// The text report: the client, the table of points, the threshold, and for `check` its
/// verdict (in `paint`'s colours) and the suggested cap.
pub(crate) fn text(r: &Results, paint: Painter) -> String {
    let mut head = String::new();
    let version = client_version(r);
    // The command and the version come from outside (the version from the client itself):
    // escaped, so a newline in them cannot forge a `threshold:` line.
    head.push_str(&format!(
        "client: {}\n",
        files::escape::text(&r.client.command)
    ));
    head.push_str(&format!(
        "version: {}\n",
        files::escape::text(version.as_deref().unwrap_or("unknown"))
    ));
    head.push_str(&format!(
        "started: {}  finished: {}\n\n",
        r.started, r.finished
    ));
    let mut tail = format!("\nthreshold: {}\n", r.threshold.text);
    if r.calls > 1 {
        tail.push_str(&format!(
            "turn: {} results asked for at once; n is their total\n",
            r.calls
        ));
    }
    if let Some(b) = &r.bisect {
        if !b.held {
            tail.push_str(&format!("bisect: {}\n", b.why.as_deref().unwrap_or("")));
        }
    }
    if let Some(u) = &r.units {
        for (key, line) in units_lines(u) {
            tail.push_str(&format!("{key}: {line}\n"));
        }
    }
    if r.interrupted {
        tail.push_str("interrupted: the results above are partial\n");
    } else if !r.complete {
        tail.push_str("partial: written while the run was going; the points above are those finished so far\n");
    }
    if let Some(c) = &r.check {
        tail.push_str(&check_lines(r, c, paint));
    }
    // The table keeps within the text width by itself; the lines around it are fitted to it.
    format!(
        "{}{}{}",
        fit_lines(&head),
        points_table(r).render_painted(paint),
        fit_lines(&tail)
    )
}

/// What bracketing with every fill says of the unit, one line each (text and Markdown alike):
/// the unit and the limit in it, which fills agree, the wrapper a client counts with the reply.
fn units_lines(u: &UnitsRecord) -> Vec<(&'static str, String)> {
    let fills = |fills: &[mcp::emit::Fill]| {
        fills
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(i) = &u.inference else {
        let tried: Vec<_> = u.observations.iter().map(|o| o.fill).collect();
        let why = if tried.is_empty() {
            "no fill gave a threshold".to_string()
        } else {
            format!("no unit makes the {} fills agree", fills(&tried))
        };
        return vec![("unit", format!("not inferred: {why}"))];
    };
    let word = Measure::from(i.unit).words();
    let mut lines = vec![(
        "unit",
        format!(
            "{} (inline up to {} {word}{}; fills {})",
            i.unit,
            i.limit,
            if i.exact {
                ""
            } else {
                ", an estimate: the fills miss by under 1%"
            },
            fills(&i.fills)
        ),
    )];
    if !i.also.is_empty() {
        let also: Vec<_> = i.also.iter().map(|u| u.to_string()).collect();
        lines.push((
            "unit also",
            format!("{} (these fills cannot tell them apart)", also.join(", ")),
        ));
    }
    lines.push((
        "wrapper",
        match i.offset {
            Some(o) => format!(
                "{o} {word} counted with the reply (the limit is likely {})",
                i.limit + o
            ),
            None => "none seen (the limit is round, or not near a round number)".to_string(),
        },
    ));
    if let Some(t) = i.tokens_estimate {
        lines.push(("tokens", format!("~{t} at four bytes a token")));
    }
    lines
}

/// `check`'s lines under the report: its verdict, why a search stopped, the suggested cap.
fn check_lines(r: &Results, c: &CheckRecord, paint: Painter) -> String {
    let n = c.expect;
    let verdict = c.verdict();
    let word = paint.paint(&verdict.to_string(), verdict.style());
    let mut out = match verdict {
        CheckVerdict::NoVerdict => format!(
            "check: {word} at {n} and {}: the client could not be judged\n",
            n + 1
        ),
        CheckVerdict::Held => format!("check: {word}, inline up to {n}, not from {}\n", n + 1),
        CheckVerdict::Moved => format!(
            "check: {word}, expected inline up to {n}; now {}\n",
            r.threshold.text
        ),
    };
    if let Some(note) = &c.note {
        out.push_str(&format!("note: {}\n", files::escape::text(note)));
    }
    for (key, line) in unit_lines(c) {
        out.push_str(&format!("{key}: {}\n", files::escape::text(&line)));
    }
    out
}

/// What `check` says of the unit and the cap, one line each (text and Markdown alike): whether
/// the astral fill agreed at the size it was checked at, or why it was not checked; the cap,
/// only in a unit not shown wrong.
fn unit_lines(c: &CheckRecord) -> Vec<(&'static str, String)> {
    let word = unit_word(c);
    let mut lines = Vec::new();
    match (c.unit_held, c.unit_at) {
        (Some(true), Some(at)) => lines.push((
            "unit",
            format!("{word}, the astral fill also stops at {at} {word}"),
        )),
        (Some(false), Some(at)) => lines.push((
            "unit",
            format!(
                "not {word}: at {at} {word} the astral fill did not stop where the ascii fill did"
            ),
        )),
        _ => {}
    }
    if let Some(note) = &c.unit_note {
        lines.push(("unit", format!("{word} {note}")));
    }
    if let (Some(t), Some(cap)) = (c.measured, c.suggested_cap) {
        lines.push((
            "suggested cap",
            format!("{cap} {word} ({t} less {}%)", (c.margin * 100.0).round()),
        ));
    } else if c.unit_held == Some(false) {
        lines.push((
            "suggested cap",
            format!(
                "none in {word}, which the client does not count in; \
                 `probe bracket --bisect LO..HI --units` finds the unit it does"
            ),
        ));
    }
    lines
}

/// The unit `check`'s numbers are in: the one expected, or "units" (UTF-16, as emit counts).
fn unit_word(c: &CheckRecord) -> &'static str {
    c.unit.map_or("units", crate::units::Measure::name)
}

/// The client's version as the report shows it: what `--version` said, or the MCP clientInfo.
fn client_version(r: &Results) -> Option<String> {
    r.client.version.clone().or_else(|| {
        r.client.mcp_client.as_ref().map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap_or("?"),
                c["version"].as_str().unwrap_or("?")
            )
        })
    })
}

/// The results as GitHub-flavoured Markdown, for a pull request or a job summary: a heading
/// with the threshold (and for `check`, whether it held), the facts, then the points.
pub(crate) fn render_markdown(r: &Results) -> String {
    let mut out = match &r.check {
        Some(c) => format!("## probe check: {}\n\n", c.verdict()),
        None => format!("## probe {}\n\n", r.command),
    };
    let mut facts = vec![
        ("client", code(&files::escape::text(&r.client.command))),
        (
            "version",
            client_version(r)
                .map(|v| code(&files::escape::text(&v)))
                .unwrap_or_else(|| "unknown".into()),
        ),
        ("threshold", markdown::escape(&r.threshold.text)),
    ];
    if r.calls > 1 {
        facts.push((
            "turn",
            format!("{} results at once; n is their total", r.calls),
        ));
    }
    if let Some(c) = &r.check {
        facts.push(("expected", format!("inline up to {}", c.expect)));
        for (key, line) in unit_lines(c) {
            facts.push((key, markdown::escape(&line)));
        }
        if let Some(note) = &c.note {
            facts.push(("note", markdown::escape(note)));
        }
    }
    if let Some(b) = &r.bisect {
        if !b.held {
            facts.push(("bisect", markdown::escape(b.why.as_deref().unwrap_or(""))));
        }
    }
    if let Some(u) = &r.units {
        for (key, line) in units_lines(u) {
            facts.push((key, markdown::escape(&line)));
        }
    }
    facts.push(("time", format!("{} .. {}", r.started, r.finished)));
    if r.interrupted {
        facts.push(("interrupted", "yes: the results are partial".into()));
    } else if !r.complete {
        facts.push(("partial", "yes: the run had not finished".into()));
    }
    out.push_str(&markdown::facts(facts));
    out.push('\n');
    out.push_str(&points_table(r).render_markdown());
    out
}

/// The results as stdout shows them, one rendering per `--format`: the JSON record, the
/// Markdown summary, or the text painted for stdout.
pub(crate) struct Document<'a>(pub &'a Results);

impl cmdline::Document for Document<'_> {
    fn text(&self, paint: Painter) -> String {
        text(self.0, paint)
    }

    fn markdown(&self) -> String {
        render_markdown(self.0)
    }

    fn json(&self) -> anyhow::Result<String> {
        Ok(format!("{}\n", serde_json::to_string_pretty(self.0)?))
    }
}

/// What a probe command shows on stderr: a line per finished point, the live line while one
/// runs (on a terminal), and the commands' notes. The runners report typed steps (see
/// [`super::events`]); the words are here.
#[derive(Debug)]
pub(crate) struct Lines;

/// The progress a person sees and the one writer of stdout: the `cmdline` reporter with
/// probe's [`Lines`].
pub(crate) type ProgressView = cmdline::Reporter<Lines>;

/// A reporter for `total` points at most; `quiet` shows no progress (JSON on stdout), `color`
/// is for stdout.
pub(crate) fn progress(total: usize, quiet: bool, color: ColorChoice) -> ProgressView {
    let mut view = cmdline::Reporter::new(Lines, color, quiet);
    view.steps(total);
    view
}

/// ` (turn of N)` when a turn holds more than one call.
fn turn(calls: u64) -> String {
    if calls > 1 {
        format!(" (turn of {calls})")
    } else {
        String::new()
    }
}

impl Render<Step> for Lines {
    fn render(&self, step: &Step) -> Shown {
        Shown::Status(match *step {
            Step::Point { n, calls } => format!("n={n}{}", turn(calls)),
            Step::Between { n, lo, hi, calls } => {
                format!("n={n}{} (between {lo} and {hi})", turn(calls))
            }
        })
    }
}

impl Render<Search> for Lines {
    fn render(&self, search: &Search) -> Shown {
        Shown::Status(match search {
            Search::Client(preset) => preset.to_string(),
            Search::Turn(preset, calls) => format!("{preset}: turns of {calls} results"),
        })
    }
}

impl Render<Finished<'_>> for Lines {
    fn render(&self, finished: &Finished<'_>) -> Shown {
        Shown::Step(progress_line(finished.0))
    }
}

impl Render<Note<'_>> for Lines {
    fn render(&self, note: &Note<'_>) -> Shown {
        Shown::Note(match note {
            Note::NoVerdict { points } => format!(
                "probe: no run of the client gave a verdict (see {})",
                files::escape::path(points)
            ),
            Note::NoClientMeasured => {
                "probe: no client could be measured (scripts/install-clients.sh installs them)"
                    .to_string()
            }
        })
    }
}

impl Observer for ProgressView {
    fn point(
        &mut self,
        step: Step,
        work: &mut dyn FnMut() -> anyhow::Result<Point>,
    ) -> anyhow::Result<Point> {
        // Whatever the plan said, this point is one of the total.
        self.expect_more(1);
        let p = self.during(&step, work)?;
        self.emit(&Finished(&p));
        Ok(p)
    }

    fn search(&mut self, search: Search) {
        self.emit(&search);
    }

    fn plan(&mut self, runs: usize) {
        self.expect_more(runs);
    }

    fn clear(&mut self) {
        cmdline::Reporter::clear(self);
    }
}

/// A progress line per finished point.
pub(crate) fn progress_line(p: &Point) -> String {
    let message = p
        .message
        .as_deref()
        .map(|m| {
            let first = clip(m.lines().next().unwrap_or(""), 80);
            format!(": {}", files::escape::text(&first))
        })
        .unwrap_or_default();
    let turn = if p.calls > 1 {
        format!(" (turn of {})", p.calls)
    } else {
        String::new()
    };
    format!(
        "n={}{turn} {} ({:.1}s){message}",
        p.n, p.verdict, p.duration_secs
    )
}
