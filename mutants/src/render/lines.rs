//! What a run's notes read as on stderr: `mutants run`'s renderer for the `cmdline` output seam.
//! The session hands its [`Note`]s to a `cmdline::Reporter`, which asks [`Lines`] for each
//! one's words and where they go (a note, a finished step, the live line); every word of what
//! the run says while it goes is here or in [`super::progress`], and every piece of outside
//! text is escaped here.

use cmdline::Shown;
use report::text::plural;
use report::Painter;

use super::progress;
use crate::session::note::Note;

/// The renderer of a run's notes: the painter is for stderr, where the lines go.
#[derive(Debug)]
pub(crate) struct Lines {
    pub paint: Painter,
}

impl cmdline::Render<Note<'_>> for Lines {
    fn render(&self, note: &Note<'_>) -> Shown {
        match note {
            Note::CanaryRunning { file, suite } => {
                Shown::Status(progress::canary_running(file, suite))
            }
            Note::CanaryRan(c) => Shown::Step(progress::canary_line(c)),
            Note::BaselineRunning { suites } => {
                let names: Vec<_> = suites.iter().map(|s| files::escape::text(s)).collect();
                Shown::Status(format!("baseline: {} running unmutated", names.join(", ")))
            }
            Note::Covering { suite } => Shown::Status(format!(
                "coverage: suite {} running unmutated to map its tests",
                files::escape::text(suite)
            )),
            Note::Checking { count } => Shown::Status(format!(
                "select: {} running on the unmutated code",
                plural(*count, "covering selection")
            )),
            Note::FloorRunning { suite } => Shown::Status(format!(
                "floor: {} starting with no test selected",
                files::escape::text(suite)
            )),
            Note::Judged { row, done, total } => {
                Shown::Step(progress::finished_line(row, *done, *total, self.paint))
            }
            Note::Judging { tally, running } => {
                Shown::Status(progress::live_status(tally, running))
            }
            Note::Engine(crate::run::Event::SetupChanged { checkout, what }) => {
                Shown::Note(note_text(&Note::SetupChanged { checkout, what }))
            }
            Note::Engine(event) => match progress::checkout_line(event) {
                line if line.is_empty() => Shown::Nothing,
                line => Shown::Note(line),
            },
            other => Shown::Note(note_text(other)),
        }
    }
}

/// The lines of a note that is said whatever the format.
fn note_text(note: &Note<'_>) -> String {
    let path = |p: &std::path::Path| files::escape::path(p);
    match note {
        Note::LinkedChanged(changed) => format!("mutants: {changed}"),
        Note::Covered {
            suite,
            tests,
            files,
            kept,
        } => format!(
            "coverage: suite {}: {} over {}{}; each mutant runs the tests that reach it first",
            files::escape::text(suite),
            plural(*tests, "test"),
            plural(*files, "file"),
            if *kept {
                " (kept from an earlier run of this code)"
            } else {
                ""
            }
        ),
        Note::NotMapped { suite, why } => format!(
            "coverage: suite {}: no map ({}); its mutants run it whole",
            files::escape::text(suite),
            files::escape::text(why)
        ),
        Note::WorktreeFromConfig { theirs } => {
            format!("mutants: [worktree] from {} (the spec has none)", path(theirs))
        }
        Note::WorktreeOverConfig { ours, theirs } => format!(
            "mutants: [worktree] from {}; {}'s is not used (the spec's own wins)",
            path(ours),
            path(theirs)
        ),
        Note::WorktreeFromSpec { ours } => format!("mutants: [worktree] from {}", path(ours)),
        Note::NoJobserver(e) => {
            format!("mutants: jobserver: none ({e}); each build may use every core")
        }
        Note::JobserverOwn {
            tokens,
            jobs,
            cores,
        } => format!(
            "mutants: jobserver: {} shared by {} on {}",
            plural(*tokens, "token"),
            plural(*jobs, "job"),
            plural(*cores, "core")
        ),
        Note::JobserverInherited { jobs } => format!(
            "mutants: jobserver: the one this run was started under (MAKEFLAGS), for {}",
            plural(*jobs, "job")
        ),
        Note::BuildSlot => {
            "mutants: build slot: builds other than cargo run one job at a time".to_string()
        }
        Note::ManifestBefore(check) => {
            format!("mutants: candidate manifest before the first mutant: {check}")
        }
        Note::Reused { kept, planned } => format!(
            "mutants: incremental: {kept} of {planned} mutants keep their verdicts (each mutant and what it reads unchanged); judging {}",
            planned - kept
        ),
        Note::Rejudged(stale) => {
            // The first few name why; a changed file can make hundreds stale at once.
            const SHOWN: usize = 10;
            let mut text = String::from("mutants: incremental: judged again:");
            for (name, why) in stale.iter().take(SHOWN) {
                text.push_str(&format!(
                    "\n  {}: {}",
                    files::escape::text(name),
                    super::stale::why(why)
                ));
            }
            if stale.len() > SHOWN {
                text.push_str(&format!("\n  and {} more", stale.len() - SHOWN));
            }
            text
        }
        Note::NothingToReuse(why) => format!(
            "mutants: incremental: nothing to reuse ({}); judging every mutant",
            files::escape::text(why)
        ),
        Note::CandidateDoesNotHold(summary) => {
            format!("mutants: the candidate does not hold: manifest {summary}")
        }
        Note::ManifestAfter(check) => {
            format!("mutants: candidate manifest after the last mutant: {check}")
        }
        Note::SetupChanged { checkout, what } => format!(
            "mutants: {}: the setup changed the checkout: {}",
            path(checkout),
            files::escape::text(what)
        ),
        Note::BaselineStarts { suites, checkouts } => {
            format!("mutants: baseline: {suites} suite(s) in {checkouts} checkout(s)")
        }
        Note::BaselineAgainCold => "mutants: cache: the baseline failed on restored build outputs; discarding them and running it again cold".to_string(),
        Note::FailFastOff { suite, test } => format!(
            "mutants: suite {:?}: fail_fast is off for this run: its passing baseline's output reads as a failed test ({}), so its mutants run whole",
            files::escape::text(suite),
            files::escape::text(test)
        ),
        Note::BaselineFailed {
            suite,
            status,
            why,
            tail,
            log,
        } => {
            let mut text = format!(
                "mutants: baseline failed: suite {suite:?} {} without any mutant; no mutant judged",
                files::escape::text(status),
            );
            for line in tail {
                text.push_str(&format!("\n  | {}", files::escape::terminal_line(line)));
            }
            for line in why {
                text.push_str(&format!("\n  {}", files::escape::text(line)));
            }
            text.push_str(&format!("\n  log {}", path(log)));
            text
        }
        Note::IgnoredMissing { paths } => {
            format!("mutants: {}", candidate::ignored::describe(paths))
        }
        Note::Floor { suite, floor, log } => match (floor.secs, &floor.failed) {
            (Some(secs), _) => format!(
                "mutants: floor: suite {suite:?} starts in {secs:.2}s with no test selected (median of {}{})",
                plural(floor.runs.len(), "run"),
                match &floor.kept_from {
                    Some(at) => format!(
                        ", kept in the cache from the run of {}; log {}",
                        files::escape::text(at),
                        path(log)
                    ),
                    None => String::new(),
                }
            ),
            (None, why) => format!(
                "mutants: floor: suite {suite:?}: `{}` did not pass ({}), so no floor is reported; verdicts are unaffected; log {}",
                files::escape::text(&floor.command),
                files::escape::text(why.as_deref().unwrap_or("no run")),
                path(log)
            ),
        },
        Note::CacheNone { outputs, dir } => format!(
            "mutants: cache: none yet for {} in {}; building cold",
            outputs.join(", "),
            path(dir)
        ),
        Note::CacheRestored {
            outputs,
            dir,
            stamped,
            forgotten,
        } => format!(
            "mutants: cache: {} restored from {} ({stamped} unchanged source file(s) keep their build{})",
            outputs.join(", "),
            path(dir),
            match forgotten {
                0 => String::new(),
                n => format!("; {n} unit(s) that held the old path rebuild"),
            }
        ),
        Note::CacheDiscarded(why) => format!(
            "mutants: cache: discarded ({}); building cold",
            files::escape::text(why)
        ),
        Note::CacheNotKept(e) => format!(
            "mutants: cache: the build outputs could not be kept ({e}); the other checkouts build cold"
        ),
        Note::NotHanded { folder, why } => format!(
            "mutants: {} is not handed to the other checkouts nor kept: {why}; each checkout builds it itself",
            files::escape::text(folder)
        ),
        Note::BuildsCold { checkout, error } => format!(
            "mutants: checkout {checkout} builds cold: its build outputs could not be copied ({error})"
        ),
        Note::CacheSaved { outputs, dir } => format!(
            "mutants: cache: {} saved in {} (mutants clean removes it)",
            outputs.join(", "),
            path(dir)
        ),
        Note::CacheNotSaved(e) => format!("mutants: cache: not saved ({e})"),
        Note::CanariesSkipped => "mutants: canaries skipped (--no-canary): nothing proves the suites read the checkout".to_string(),
        Note::CanarySurvived { canary: c, dir } => format!(
            "mutants: canary SURVIVED: suite {:?} passed with {} made unloadable in the checkout {}, so it does not read the files under review and no verdict of it could be trusted (exit 4). Usual causes: {}. Log: {}",
            c.suite,
            files::escape::text(&c.file),
            path(dir),
            candidate::canary::USUAL_CAUSES,
            c.log
        ),
        Note::Checked { count, failed } => format!(
            "select: {} passed on the unmutated code before the first mutant{}",
            match failed {
                0 => format!("all {}", plural(*count, "covering selection")),
                _ => format!("{} of {}", count - failed, plural(*count, "covering selection")),
            },
            match failed {
                0 => String::new(),
                n => format!(
                    "; {} did not: {} run the whole suite",
                    plural(*n, "selection"),
                    if *n == 1 { "its mutants" } else { "their mutants" }
                ),
            }
        ),
        Note::Kept(dir) => format!("mutants: kept checkout {}", path(dir)),
        Note::ReportIn(dir) => format!("mutants: report in {}", path(dir)),
        Note::Interrupted { judged, planned } => format!(
            "mutants: interrupted after {judged} of {planned} mutants; checkouts removed"
        ),
        Note::CanaryRunning { .. }
        | Note::CanaryRan(_)
        | Note::BaselineRunning { .. }
        | Note::Covering { .. }
        | Note::Checking { .. }
        | Note::FloorRunning { .. }
        | Note::Judged { .. }
        | Note::Judging { .. }
        | Note::Engine(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmdline::Render as _;
    use std::path::Path;

    fn note(n: &Note<'_>) -> String {
        match (Lines {
            paint: Painter::plain(),
        })
        .render(n)
        {
            Shown::Note(text) => text,
            other => panic!("not a note: {other:?}"),
        }
    }

    #[test]
    fn a_failed_baseline_reads_as_its_lines_with_outside_text_escaped() {
        let failed = Note::BaselineFailed {
            suite: "unit",
            status: "exit\n1",
            why: vec!["test_add failed", "x\u{1b}[2J"],
            tail: vec!["FAIL: \u{1b}[31mred"],
            log: Path::new("/out/logs/baseline.unit.log"),
        };
        assert_eq!(
            note(&failed),
            "mutants: baseline failed: suite \"unit\" exit\\n1 without any mutant; no mutant judged\n  | FAIL: \u{1b}[31mred\n  test_add failed\n  x\\u{1b}[2J\n  log /out/logs/baseline.unit.log"
        );
    }

    #[test]
    fn the_notes_of_a_run_read_as_they_always_did() {
        assert_eq!(
            note(&Note::JobserverOwn {
                tokens: 3,
                jobs: 2,
                cores: 1
            }),
            "mutants: jobserver: 3 tokens shared by 2 jobs on 1 core"
        );
        assert_eq!(
            note(&Note::JobserverInherited { jobs: 1 }),
            "mutants: jobserver: the one this run was started under (MAKEFLAGS), for 1 job"
        );
        let outputs = ["target".to_string(), "node_modules".to_string()];
        assert_eq!(
            note(&Note::CacheRestored {
                outputs: &outputs,
                dir: Path::new("/c/r"),
                stamped: 4,
                forgotten: 2
            }),
            "mutants: cache: target, node_modules restored from /c/r (4 unchanged source file(s) keep their build; 2 unit(s) that held the old path rebuild)"
        );
        assert_eq!(
            note(&Note::BuildsCold {
                checkout: 2,
                error: &"No space left on device"
            }),
            "mutants: checkout 2 builds cold: its build outputs could not be copied (No space left on device)"
        );
        assert_eq!(
            note(&Note::Interrupted {
                judged: 3,
                planned: 9
            }),
            "mutants: interrupted after 3 of 9 mutants; checkouts removed"
        );
    }
}
