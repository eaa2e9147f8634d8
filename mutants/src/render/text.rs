//! `mutants.txt` and the table printed on a terminal: what was run, the verdict table, the
//! tally and how the run ended.
//!
//! The verdict table's cells ([`cells`]) are made once, as plain text, and the Markdown table is
//! made from the same cells, so the two can never disagree. On a terminal the verdicts are
//! painted in the colour of their kind ([`crate::verdict::Verdict::style`]): the verdict cell
//! carries that style and [`Table`] pads first and paints after.

use report::color::Style;
use report::table::Cell;
use report::text::plural;
use report::{Painter, Table};

use super::{claim_cell, comparison_suites, secs_text, time_text};
use crate::record::{RunReport, RunVerdict};
use report::text::short_id as short;

/// The verdict table's header and cells, one row per mutant, as plain text.
pub(crate) fn cells(report: &RunReport) -> (Vec<String>, Vec<Vec<String>>) {
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
        let name = match (&r.rerun, super::reused_text(r)) {
            (Some(at), _) => format!("{} (rerun {at})", r.name),
            (None, Some(from)) => format!("{} ({from})", r.name),
            (None, None) => r.name.clone(),
        };
        let mut cells = vec![
            name,
            r.site.clone().unwrap_or_default(),
            claim_cell(r),
            r.verdict_text(),
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
        cells.push(run.map(|s| s.failed_text(3)).unwrap_or_default());
        rows.push(cells);
    }
    (headers, rows)
}

/// The column of [`cells`] that holds the verdict.
pub(crate) const VERDICT_COLUMN: usize = 3;

/// The verdict table, one row per mutant: the part a reviewer pastes. The verdict cell carries
/// its verdict's style, for a painted rendering. In text the names, sites and claims wrap to
/// keep it within 120 columns, and the counts (the mutant's and the comparison suites') and
/// the failed tests, cells of any length, follow under it, one line per mutant.
fn table(report: &RunReport) -> Table {
    let (headers, rows) = cells(report);
    let comparisons = comparison_suites(report).len();
    let failed_column = headers.len() - 1;
    // The status (`not started (build timed out after ...)`) is before Strays and Failed tests.
    let exit_column = headers.len() - 3;
    let mut t = Table::new(headers);
    t.wrap(0).wrap(1).wrap(2).wrap(exit_column);
    for i in VERDICT_COLUMN + 1..VERDICT_COLUMN + 2 + comparisons {
        t.below(i);
    }
    t.below(failed_column);
    for (row, mutant) in rows.into_iter().zip(&report.mutants) {
        t.row(row.into_iter().enumerate().map(|(i, text)| {
            if i == VERDICT_COLUMN {
                Cell::styled(text, mutant.verdict.style())
            } else {
                Cell::from(text)
            }
        }));
    }
    t
}

/// One line per canary (or the word that they were skipped), above the table.
/// `floor: unit 0.4s (median of 3 runs); per mutant 0.6s, 1.5x the floor`: how far the
/// run's time per mutant is from its runner's start-up (`, kept from the run of T` after the
/// runs when the cache held it).
fn floor_line(suite: &str, floor: &crate::record::Floor) -> String {
    use files::escape::text as esc;
    let Some(secs) = floor.secs else {
        return format!(
            "floor: {} not measured: `{}` did not pass ({})\n",
            esc(suite),
            esc(&floor.command),
            esc(floor.failed.as_deref().unwrap_or("no run"))
        );
    };
    let each = match (floor.per_mutant_secs, floor.multiple) {
        (Some(each), Some(x)) => format!("; per mutant {}, {x:.2}x the floor", secs_text(each)),
        _ => "; no mutant judged against it".to_string(),
    };
    let kept = match &floor.kept_from {
        Some(at) => format!(", kept from the run of {}", esc(at)),
        None => String::new(),
    };
    format!(
        "floor: {} {} (median of {}{kept}){each}\n",
        esc(suite),
        secs_text(secs),
        plural(floor.runs.len(), "run")
    )
}

fn canary_lines(report: &RunReport) -> String {
    use files::escape::text as esc;
    if report.canaries_skipped {
        return "canary: skipped (--no-canary): nothing proved the suites read the checkout\n"
            .to_string();
    }
    let mut s = String::new();
    for l in &report.canaries_left_out {
        s.push_str(&format!(
            "canary: {} left out ({}): no canary proves a suite reads it\n",
            esc(&l.file),
            esc(&l.why)
        ));
    }
    for c in &report.canaries {
        s.push_str(&format!(
            "canary: {} made unloadable, suite {}: {} ({}, {})\n",
            esc(&c.file),
            esc(&c.suite),
            c.verdict,
            esc(&c.status),
            secs_text(c.duration_secs)
        ));
    }
    s
}

/// The checkouts put back to the tree under review, under the table: which mutants, and what
/// was not the tree (found before one started, or changed by its suite). The same restoration
/// after many mutants (a suite that leaves the same files behind on every run, as Python's
/// bytecode cache does in a tree that does not ignore it) is one line naming them, not a line
/// per mutant.
fn restored_lines(report: &RunReport) -> String {
    use files::escape::text as esc;
    // (when, what) in the order first seen, with the mutants it concerns.
    let mut groups: Vec<((&str, &str), Vec<&str>)> = Vec::new();
    for r in &report.mutants {
        let found = [("before", &r.restored_before), ("after", &r.restored_after)];
        for (when, what) in found {
            let Some(what) = what else { continue };
            let key = (when, what.as_str());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, names)) => names.push(&r.name),
                None => groups.push((key, vec![&r.name])),
            }
        }
    }
    let mut s = String::new();
    for ((when, what), names) in groups {
        let who = match names.len() {
            1 => esc(names[0]).into_owned(),
            n => {
                let shown: Vec<String> =
                    names.iter().take(3).map(|n| esc(n).into_owned()).collect();
                match n - shown.len() {
                    0 => format!("{n} mutants ({})", shown.join(", ")),
                    more => format!("{n} mutants ({}, and {more} more)", shown.join(", ")),
                }
            }
        };
        s.push_str(&format!("restored {when} {who}: {}\n", esc(what)));
    }
    s
}

/// `mutants.txt`: what was run, the table, the tally and how the run ended.
pub(crate) fn render(report: &RunReport) -> String {
    render_painted(report, Painter::plain())
}

/// [`render`] with the verdict words painted, for a terminal (files stay plain). Every line
/// within 120 columns: the table wraps its own cells, and any other line that quotes a long
/// path or name wraps too ([`report::fit`]).
pub(crate) fn render_painted(report: &RunReport, paint: Painter) -> String {
    report::fit::lines(&unfitted(report, paint))
}

fn unfitted(report: &RunReport, paint: Painter) -> String {
    // Outside text (paths, suite names, statuses, a shard's fields) is escaped on these lines:
    // a name holding a line break or an ANSI escape must not forge a line or reach a terminal.
    // The table's cells are left to `Table`, which escapes them itself.
    use files::escape::text as esc;
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
            c.manifest_before,
            c.manifest_after_text()
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
            "setup: {}{} in each checkout{}\n",
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
    for r in &report.reused {
        s.push_str(&format!("reused: {}\n", esc(r)));
    }
    if !report.toolchains.is_empty() {
        // What judged the verdicts, as each toolchain answered: `--incremental` compares them.
        let each: Vec<String> = report
            .toolchains
            .iter()
            .map(|(tool, version)| format!("{} {}", esc(tool), esc(version)))
            .collect();
        s.push_str(&format!("toolchains: {}\n", each.join("; ")));
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
        if let Some(floor) = &b.floor {
            s.push_str(&floor_line(&b.suite, floor));
        }
    }
    s.push_str(&format!(
        "run: {} to {}, jobs {}\n\n",
        report.start, report.end, report.jobs
    ));
    s.push_str(&canary_lines(report));
    for changed in &report.linked_changed {
        s.push_str(&format!(
            "{} {} (exit 4)\n",
            paint.paint("LINKED FOLDER CHANGED:", Style::Bad),
            files::escape::text(changed)
        ));
    }
    if let Some(why) = &report.precondition {
        s.push_str(&paint.paint(&RunVerdict::SetupFailed.to_string(), Style::Bad));
        s.push_str(&format!(
            ": {}; no baseline ran and no mutant was judged (exit 4).\n",
            esc(why)
        ));
        return s;
    }
    if report.baseline_failed {
        s.push_str(&paint.paint(&RunVerdict::BaselineFailed.to_string(), Style::Bad));
        s.push_str(
            ": a suite fails or hangs without any mutant, so no mutant was judged (exit 4).\n",
        );
        return s;
    }
    if report.canary_survived() {
        s.push_str(&paint.paint(&RunVerdict::CanarySurvived.to_string(), Style::Bad));
        s.push_str(": a suite passed with a mutated file made unloadable, so it does not read the checkout under review; no mutant was judged (exit 4).\n");
        return s;
    }
    s.push_str(&table(report).render_painted(paint));
    s.push('\n');
    s.push_str(&report.tally.to_string());
    s.push('\n');
    let reused = report.mutants.iter().filter(|r| r.reused.is_some()).count();
    if reused > 0 {
        s.push_str(&format!(
            "incremental: {} judged now, {reused} reused (each mutant and what it reads unchanged)\n",
            report.mutants.len() - reused
        ));
    }
    s.push_str(&restored_lines(report));
    if let Some(cut) = report.cut_short_text() {
        let word = report.verdict().to_string();
        s.push_str(&paint.paint(&word, Style::Warn));
        s.push_str(&format!(": {}; no verdict on them.\n", esc(&cut)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Row;
    use crate::verdict::Verdict;

    #[test]
    fn the_same_restoration_after_many_mutants_is_one_line_naming_them() {
        let sample = include_str!("../../tests/data/shard-report.json");
        let mut report: RunReport = serde_json::from_str(sample).unwrap();
        report.mutants.clear();
        let pyc = "its suite changed 2 added (p/__pycache__/a.pyc, p/__pycache__/b.pyc); restored";
        for (i, name) in ["one", "two", "three", "four", "five"].iter().enumerate() {
            let mut row = Row::sample(i, name, Verdict::Killed);
            row.restored_after = Some(pyc.into());
            report.mutants.push(row);
        }
        report.mutants[2].restored_before = Some("1 changed (golden.txt)".into());
        report.mutants[4].restored_after =
            Some("its suite changed 1 changed (golden.txt); restored".into());
        assert_eq!(
            restored_lines(&report),
            format!(
                "restored after 4 mutants (one, two, three, and 1 more): {pyc}\n\
                 restored before three: 1 changed (golden.txt)\n\
                 restored after five: its suite changed 1 changed (golden.txt); restored\n"
            )
        );
    }
}
