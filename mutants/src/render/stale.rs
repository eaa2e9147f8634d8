//! Why a mutant is judged again by `--incremental`, in words, and the listing a dry
//! incremental run (`--dry-run`) prints: text, Markdown and JSON from the same values.

use report::color::Style;
use report::Painter;

use crate::session::incremental::{Dry, Stale};
use files::escape::text as esc;
use report::text::short_id;

/// How many changed paths a reason names before it counts the rest.
const NAMED: usize = 3;

/// `a.rs, b.rs, c.rs and 4 more`.
fn paths(list: &[String]) -> String {
    let named: Vec<String> = list
        .iter()
        .take(NAMED)
        .map(|p| esc(p).into_owned())
        .collect();
    match list.len().saturating_sub(NAMED) {
        0 => named.join(", "),
        more => format!("{} and {more} more", named.join(", ")),
    }
}

/// Why the mutant's verdict in the report does not hold now, in words.
pub(crate) fn why(stale: &Stale) -> String {
    let version = |v: &Option<String>| match v {
        Some(v) => esc(v).into_owned(),
        None => "not recorded".to_string(),
    };
    match stale {
        Stale::New => "no verdict in the report (new, or never judged)".to_string(),
        Stale::Changed => {
            "the mutant changed (its file, anchor, replacement, expectation or suites)".to_string()
        }
        Stale::Moved { from } => format!("it moved in the spec (from position {})", from + 1),
        Stale::Error => "its verdict was `error`, which proves nothing".to_string(),
        Stale::Candidate => "the candidate changed (its patch or manifest)".to_string(),
        Stale::Toolchain { tool, was, now } => format!(
            "toolchain {tool} changed ({} -> {})",
            version(was),
            version(now)
        ),
        Stale::Code { changed } => match changed.as_deref() {
            Some(list) if !list.is_empty() => format!(
                "the code changed ({}) and a suite of it declares no `inputs`",
                paths(list)
            ),
            _ => "the code changed and a suite of it declares no `inputs`".to_string(),
        },
        Stale::File { file } => format!("{} changed", esc(file)),
        Stale::Inputs { suite, changed } => match changed.as_deref() {
            Some(list) if !list.is_empty() => format!(
                "the inputs of suite {} changed ({})",
                esc(suite),
                paths(list)
            ),
            _ => format!("the inputs of suite {} changed", esc(suite)),
        },
        Stale::Lockfile { path } => format!("lockfile {} changed", esc(path)),
        Stale::Covered { changed } => {
            format!("a file its tests read changed ({})", paths(changed))
        }
    }
}

/// A dry run's listing, shown on stdout in the chosen format.
pub(crate) struct Shown<'a>(pub &'a Dry);

impl Shown<'_> {
    /// Which report it compared with, then what it found: two lines.
    fn head(&self) -> String {
        let d = self.0;
        let (tree, start) = &d.report;
        let against = format!(
            "incremental (dry run) against {} (tree {}, {start})",
            files::escape::path(&d.out.join("mutants.json")),
            short_id(tree)
        );
        let found = if d.current() {
            format!("every verdict of {} mutant(s) is current", d.compared)
        } else {
            format!(
                "{} of {} mutant(s) would be judged again and {} row(s) dropped:",
                d.stale.len(),
                d.compared,
                d.gone.len()
            )
        };
        format!("{against}\n{found}")
    }

    fn lines(&self) -> Vec<String> {
        let d = self.0;
        let stale = d
            .stale
            .iter()
            .map(|(name, stale)| format!("{}: {}", esc(name), why(stale)));
        let gone = d
            .gone
            .iter()
            .map(|name| format!("{}: in the report, no longer in the spec", esc(name)));
        stale.chain(gone).collect()
    }
}

impl cmdline::Document for Shown<'_> {
    fn text(&self, paint: Painter) -> String {
        let style = match self.0.current() {
            true => Style::Good,
            false => Style::Bad,
        };
        let mut s = paint.paint(&self.head(), style);
        s.push('\n');
        for line in self.lines() {
            s.push_str(&format!("  {line}\n"));
        }
        // Within 120 columns, whatever a name or a path holds.
        report::fit::lines(&s)
    }

    fn markdown(&self) -> String {
        let head: Vec<String> = self.head().lines().map(report::markdown::escape).collect();
        let mut s = format!("{}\n\n", head.join("  \n"));
        for line in self.lines() {
            s.push_str(&format!("- {}\n", report::markdown::escape(&line)));
        }
        s
    }

    fn json(&self) -> anyhow::Result<String> {
        let d = self.0;
        let value = serde_json::json!({
            "report": d.out.join("mutants.json").display().to_string(),
            "report_tree": d.report.0,
            "report_start": d.report.1.to_string(),
            "compared": d.compared,
            "current": d.current(),
            "stale": d.stale.iter().map(|(name, stale)| serde_json::json!({
                "name": name,
                "why": why(stale),
            })).collect::<Vec<_>>(),
            "gone": d.gone,
        });
        Ok(format!("{}\n", serde_json::to_string_pretty(&value)?))
    }
}
