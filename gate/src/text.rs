//! The text summary (`gate-summary.txt`, and what `gate run` prints): the lines a reviewer
//! pastes into a review, rendered from the [record](crate::record) alone.
//!
//! Every piece of outside text (paths, commit subjects, suite names, findings) is quoted
//! through [`files::escape`], so nothing a candidate names can forge a line such as
//! `verdict   PASS`. Only the verdict word is coloured, by its kind ([`Verdict::style`]), and
//! only on a terminal.
//!
//! [`Verdict::style`]: crate::record::Verdict::style

use std::fmt::Write as _;

use files::escape::text as esc;
use manifests::Status;
use report::text::short_id as short;
use report::{Painter, Table};

use crate::record::{CandidateFacts, DeletedFact, GateReport, Rerun};
use crate::suite::SuiteResult;

impl GateReport {
    /// The whole summary text.
    pub fn render(&self) -> String {
        self.render_painted(Painter::plain())
    }

    /// The summary text with its verdict words painted (for a terminal; `render` is the same
    /// text unpainted, for files). Every line within 120 columns: the suite table wraps its
    /// own cells, and any other line that quotes a long path, name or list wraps too
    /// ([`report::fit`]), whoever added it.
    pub(crate) fn render_painted(&self, paint: Painter) -> String {
        report::fit::lines(&self.unfitted(paint))
    }

    fn unfitted(&self, paint: Painter) -> String {
        let verdict = paint.paint(self.verdict.as_str(), self.verdict.style());
        let mut out = format!("gate {verdict}  {} .. {}\n", self.started, self.finished);
        out.push_str(&render_candidate(&self.candidate));
        if let Some(setup) = &self.setup {
            let linked = if setup.linked.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = setup.linked.iter().map(|l| esc(l).into_owned()).collect();
                format!(", linked {}", names.join(", "))
            };
            if setup.command.is_empty() {
                let _ = writeln!(out, "setup     none{linked}");
            } else {
                let _ = writeln!(
                    out,
                    "setup     {}  {}  {}{linked} ({})",
                    esc(&setup.command),
                    esc(&setup.status),
                    report::duration::human(std::time::Duration::from_secs_f64(
                        setup.duration_secs.max(0.0)
                    )),
                    esc(&setup.log)
                );
            }
        }
        for r in &self.reused {
            let _ = writeln!(out, "reused    {}", esc(r));
        }
        out.push('\n');
        out.push_str(&suite_table(&self.suites).render_text());
        out.push_str(&total_line(&self.suites));
        out.push_str(&why_lines(&self.suites));
        for rerun in &self.reruns {
            out.push('\n');
            out.push_str(&render_rerun(rerun));
        }
        if let Some(runs) = &self.canaries {
            let noticed = runs.iter().filter(|r| r.noticed).count();
            let paths: std::collections::BTreeSet<&str> =
                runs.iter().map(|r| r.path.as_str()).collect();
            let _ = writeln!(
                out,
                "canary    {} source path(s) made unloadable, {} suite run(s), {noticed} noticed",
                paths.len(),
                runs.len()
            );
            for l in &self.canary_left_out {
                let _ = writeln!(
                    out,
                    "canary    left out: {} ({})",
                    esc(&l.path),
                    esc(&l.why)
                );
            }
            for r in runs.iter().filter(|r| !r.noticed) {
                let _ = writeln!(
                    out,
                    "canary    NOT NOTICED: {} with {} unloadable ({}, log {})",
                    esc(&r.suite),
                    esc(&r.path),
                    esc(&r.status),
                    esc(&r.log)
                );
            }
        }
        out.push('\n');
        if let Some(cut) = self.cut_short_text() {
            let _ = writeln!(out, "run       {}", esc(&cut));
        }
        if self.findings.is_empty() {
            let _ = writeln!(out, "verdict   {verdict}: every check held");
        } else {
            let _ = writeln!(
                out,
                "verdict   {verdict}: {}",
                esc(&crate::record::joined(&self.findings))
            );
        }
        out
    }
}

/// The candidate's header lines: base, head, patch, manifest, deletions, drift, tree. Every
/// value is outside text (revisions as typed, paths, subjects) and is escaped.
pub(crate) fn render_candidate(c: &CandidateFacts) -> String {
    let mut out = String::new();
    for (label, id, rev) in [
        ("base", &c.base, &c.base_rev),
        ("head", &c.head, &c.head_rev),
    ] {
        match as_typed(id, rev) {
            Some(rev) => writeln!(out, "{label:<10}{}  ({})", esc(id), esc(rev)),
            None => writeln!(out, "{label:<10}{}", esc(id)),
        }
        .ok();
    }
    let _ = writeln!(
        out,
        "patch     {}  sha256 {}",
        esc(&c.patch),
        esc(&c.patch_sha256)
    );
    let _ = writeln!(
        out,
        "manifest  {}  {}",
        esc(&c.manifest.file),
        c.manifest.summary
    );
    for e in c.manifest.entries.iter().filter(|e| e.status != Status::Ok) {
        let _ = writeln!(
            out,
            "          {}: {}{}",
            esc(&e.path),
            e.status,
            e.detail
                .as_ref()
                .map(|d| format!(" ({})", esc(d)))
                .unwrap_or_default()
        );
    }
    for path in &c.unnamed {
        let _ = writeln!(
            out,
            "          {}: NOT IN THE MANIFEST (the patch adds or changes it)",
            esc(path)
        );
    }
    let _ = writeln!(
        out,
        "deleted   {}{}",
        deleted_text(&c.deleted),
        if c.deleted.is_empty() {
            ""
        } else {
            " (checked from the patch: no sha256sum line holds a deletion)"
        }
    );
    for s in &c.submodules {
        let _ = writeln!(
            out,
            "submodule {} at {} (checked from the patch: no sha256sum line holds a gitlink; \
             the tree binds it)",
            esc(&s.path),
            esc(&s.commit)
        );
    }
    if !c.filtered.is_empty() {
        let _ = writeln!(
            out,
            "filtered  {} with a filter= driver, which lives in config, not the tree: NOT \
             CHECKED as a clone with that driver writes them: {}",
            report::text::plural(c.filtered.len(), "path"),
            esc(&crate::record::first_few(&c.filtered))
        );
    }
    let _ = writeln!(out, "drift     {}", drift_text(c));
    for commit in &c.base_side {
        let _ = writeln!(
            out,
            "          {} {}{} (in head..base: the base's side, not in head)",
            esc(short(&commit.sha)),
            esc(&commit.subject),
            if commit.merge { " (merge)" } else { "" }
        );
    }
    for commit in &c.drift {
        let _ = writeln!(
            out,
            "          {} {}{}",
            esc(short(&commit.sha)),
            esc(&commit.subject),
            if commit.merge { " (merge)" } else { "" }
        );
        if !commit.paths.is_empty() {
            let paths: Vec<String> = commit.paths.iter().map(|p| esc(p).into_owned()).collect();
            let _ = writeln!(out, "            touches {}", paths.join(", "));
        }
    }
    for commit in &c.landed {
        let _ = writeln!(
            out,
            "          the candidate itself, landed as {} {} (not drift)",
            esc(short(&commit.sha)),
            esc(&commit.subject)
        );
    }
    let _ = writeln!(out, "tree      {}", esc(&c.tree));
    let _ = writeln!(
        out,
        "checkout  {}{}",
        esc(&c.worktree),
        if c.worktree_kept {
            " (kept)"
        } else if c.worktree_removed {
            " (removed)"
        } else {
            " (NOT removed: still there; gate clean removes it)"
        }
    );
    out
}

/// The revision as the user typed it, beside the commit id it resolved to; `None` when it was
/// that id already, so a full id is printed once.
pub(crate) fn as_typed<'a>(id: &str, rev: &'a str) -> Option<&'a str> {
    (!rev.eq_ignore_ascii_case(id)).then_some(rev)
}

/// The rerun section: a header with the manifest and tree at that moment, then the suites.
fn render_rerun(rerun: &Rerun) -> String {
    let mut out = format!(
        "rerun {}  manifest {}  tree {}\n",
        rerun.at,
        rerun.manifest,
        esc(&rerun.tree)
    );
    out.push_str(&suite_table(&rerun.suites).render_text());
    out.push_str(&total_line(&rerun.suites));
    out
}

fn suite_table(suites: &[SuiteResult]) -> Table {
    let mut t = Table::new(["suite", "start", "end", "time", "result", "counts"]);
    // Within 120 columns: a long suite name (a glob's path) or result wraps in its column.
    t.wrap(0).wrap(4);
    for s in suites {
        t.row([
            s.name.clone(),
            s.record.start().to_string(),
            s.record.end().to_string(),
            report::duration::human(s.record.duration()),
            s.result_text(),
            s.counts_text(),
        ]);
    }
    t
}

/// For each suite that did not pass, why, as its record says (the failed tests and the first
/// error line of each, how many failed tests are not named, a report the suite names that was
/// not read: [`report::RunRecord::why_lines`]), then the log's path. A record written before
/// it held these reasons has them read from its log, where the log is still on disk. A suite
/// that passed but whose named report was not read says so too.
pub(crate) fn why_lines(suites: &[SuiteResult]) -> String {
    let mut out = String::new();
    for s in suites {
        let log = files::escape::path(&s.record.run.log);
        if s.passed() {
            if let Some(missing) = &s.record.results_missing {
                let _ = writeln!(out, "note      suite {}: {}", esc(&s.name), esc(missing));
            }
            continue;
        }
        let _ = writeln!(
            out,
            "failed    suite {}: {}",
            esc(&s.name),
            esc(&s.result_text())
        );
        let mut why = s.record.why_lines(&log);
        if s.record.why.is_empty() {
            let text = runner::read_tail(&s.record.run.log, 1 << 20).unwrap_or_default();
            let mut read = report::results::why(&text);
            read.extend(why);
            why = read;
        }
        for line in why {
            let _ = writeln!(out, "          {}", esc(&line));
        }
        let _ = writeln!(out, "          log {log}");
    }
    out
}

pub(crate) fn total_line(suites: &[SuiteResult]) -> String {
    let passed = suites.iter().filter(|s| s.passed()).count();
    let secs: f64 = suites.iter().map(|s| s.record.run.duration_secs).sum();
    format!(
        "total     {passed}/{} suites passed in {}\n",
        suites.len(),
        report::duration::human(std::time::Duration::from_secs_f64(secs))
    )
}

fn deleted_text(deleted: &[DeletedFact]) -> String {
    if deleted.is_empty() {
        return "none".to_string();
    }
    let gone = deleted.iter().filter(|d| d.gone).count();
    let names: Vec<String> = deleted
        .iter()
        .map(|d| {
            if d.gone {
                esc(&d.path).into_owned()
            } else {
                format!("{} (STILL PRESENT)", esc(&d.path))
            }
        })
        .collect();
    format!("{gone}/{} gone: {}", deleted.len(), names.join(", "))
}

pub(crate) fn drift_text(c: &CandidateFacts) -> String {
    let range = format!("{}..{}", esc(short(&c.base)), esc(short(&c.head)));
    if c.base_off_head {
        let back = format!("{}..{}", esc(short(&c.head)), esc(short(&c.base)));
        return format!(
            "BASE NOT IN HEAD'S HISTORY: the tree gated is not head plus the candidate; {} of \
             {} commits in {back} and {} of {} in {range} touch candidate paths",
            c.base_side.len(),
            c.base_side_count,
            c.drift.len() + c.landed.len(),
            c.commits_since_base
        );
    }
    if c.commits_since_base == 0 {
        format!("none: head is the base ({range} holds no commit), nothing to compare")
    } else if c.drift.is_empty() && !c.landed.is_empty() {
        format!(
            "none: the only commits in {range} ({} commits) that touch candidate paths are the candidate itself",
            c.commits_since_base
        )
    } else if c.drift.is_empty() {
        format!(
            "none: no commit in {range} ({} commits) touches a candidate path",
            c.commits_since_base
        )
    } else {
        format!(
            "{} of {} commits in {range} touch candidate paths:",
            c.drift.len(),
            c.commits_since_base
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::*;

    #[test]
    fn removed_is_said_only_of_a_checkout_that_is_gone() {
        let mut r = report(&["a"], vec![suite("a", 0)]);
        assert!(render_candidate(&r.candidate).contains("wt (removed)"));
        r.candidate.worktree_removed = false;
        let text = render_candidate(&r.candidate);
        assert!(text.contains("wt (NOT removed"), "{text}");
        r.candidate.worktree_kept = true;
        assert!(render_candidate(&r.candidate).contains("wt (kept)"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Whatever a name holds, no rendering has a line starting at the first column that a
        /// plain name's has not (Markdown has exactly its lines; in text, the pieces of a cell
        /// wrapped to keep a table narrow start indented), no control character but the line
        /// breaks gatekit writes, and one verdict line.
        #[test]
        fn no_outside_text_can_add_a_line_or_a_control_to_any_rendering(
            name in "(\\PC|[\n\r\t\u{1b}\u{7f}\u{85}\u{9b}\u{2028}\u{202e}])*"
        ) {
            let plain = hostile("plain");
            let evil = hostile(&name);
            let md = (plain.render_markdown(), evil.render_markdown());
            proptest::prop_assert_eq!(md.0.lines().count(), md.1.lines().count(), "{}", md.1);
            for (ours, theirs) in [
                (plain.render(), evil.render()),
                md,
                (render_candidate(&plain.candidate), render_candidate(&evil.candidate)),
            ] {
                let own = |t: &str| t.lines().filter(|l| !l.starts_with(' ')).count();
                proptest::prop_assert!(own(&theirs) <= own(&ours), "{}", theirs);
                proptest::prop_assert!(
                    !theirs.chars().any(|c| c != '\n' && files::escape::is_unsafe(c)),
                    "{:?}", theirs
                );
                let verdicts = theirs.lines().filter(|l| l.starts_with("verdict")).count();
                proptest::prop_assert!(verdicts <= 1, "{}", theirs);
            }
        }
    }
}
