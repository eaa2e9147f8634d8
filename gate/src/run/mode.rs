//! Whether a `gate run` starts a summary or appends to one, resolved once, before anything
//! runs: [`Mode::Fresh`], or [`Mode::Rerun`] with the summary's report read and proved to be
//! of this candidate (base, head, patch and manifest now; the tree once the candidate is
//! applied). Every later choice that differs between the two (the logs' names, what is cleared,
//! which facts a run may set, the manifest checked again, the canaries) asks the mode.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use candidate::apply::{Applied, Prepared};
use report::Timestamp;

use super::{RunSettings, REPORT_FILE};
use crate::record::{CandidateFacts, GateReport, Rerun};
use crate::suite;

/// How this run stands to the summary in `--out`.
pub(crate) enum Mode {
    /// A new summary (no `--only`, or `--fresh`): what earlier runs wrote there goes.
    Fresh,
    /// `--only` appending to the summary's report.
    Rerun(Box<Previous>),
}

/// The summary a rerun appends to.
pub(crate) struct Previous {
    /// Its report as read, judged again from its facts.
    report: GateReport,
    /// Its path, for the refusals that name it.
    path: PathBuf,
    /// This rerun's number: 1 for the first.
    number: usize,
}

impl Mode {
    /// The mode `s` asks for: a rerun when `--only` names suites without `--fresh` and the
    /// output folder holds a report, refused unless that report is of `prepared`'s candidate.
    pub(crate) fn resolve(s: &RunSettings, prepared: &Prepared) -> Result<Mode> {
        if s.only.is_empty() || s.fresh {
            return Ok(Mode::Fresh);
        }
        let path = s.out.join(REPORT_FILE);
        let Some(mut report) = load(&path)? else {
            return Ok(Mode::Fresh);
        };
        report.judge();
        let c = &report.candidate;
        same_as_summary(&path, "base commit", &prepared.base, &c.base)?;
        // The summary's drift answer is for its head: a moved head needs a summary of its own.
        same_as_summary(&path, "head commit", &prepared.head, &c.head)?;
        same_as_summary(
            &path,
            "patch sha256",
            &prepared.patch_sha256,
            &c.patch_sha256,
        )?;
        same_as_summary(
            &path,
            "manifest sha256",
            &prepared.manifest_sha256,
            &c.manifest_sha256,
        )?;
        let number = report.reruns.len() + 1;
        Ok(Mode::Rerun(Box::new(Previous {
            report,
            path,
            number,
        })))
    }

    /// Whether this run starts a new summary.
    pub(crate) fn is_fresh(&self) -> bool {
        matches!(self, Mode::Fresh)
    }

    /// Refuses a rerun whose applied tree is not the summary's: one summary describes one tree.
    pub(crate) fn check_tree(&self, tree: &str) -> Result<()> {
        match self {
            Mode::Rerun(prev) if prev.report.candidate.tree != tree => bail!(
                "{}: tree id {tree} differs from the summary's {}: one summary describes one \
                 tree, so --only cannot append to it (pass --fresh to start a new summary)",
                prev.path.display(),
                files::escape::text(&prev.report.candidate.tree)
            ),
            _ => Ok(()),
        }
    }

    /// Every suite the summary needs, in order: the summary's, then gate.toml's (a glob
    /// expanded) that it did not name yet.
    pub(crate) fn planned<'a>(&self, expanded: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut names = match self {
            Mode::Fresh => Vec::new(),
            Mode::Rerun(prev) => prev.report.planned.clone(),
        };
        for name in expanded {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        names
    }

    /// What this run's log names start with: nothing, or `rerun-N-`.
    fn prefix(&self) -> String {
        match self {
            Mode::Fresh => String::new(),
            Mode::Rerun(prev) => format!("rerun-{}-", prev.number),
        }
    }

    /// Suite `i`'s log, below `--out`: `logs/{prefix}NN-name.log`.
    pub(crate) fn suite_log(&self, i: usize, name: &str) -> String {
        format!(
            "logs/{}{}",
            self.prefix(),
            suite::log_name(i, name).display()
        )
    }

    /// The `[worktree]` setup's log, below `--out`: `logs/{prefix}00-setup.log`.
    pub(crate) fn setup_log(&self) -> String {
        format!("logs/{}00-setup.log", self.prefix())
    }

    /// The report this run starts from, before its setup and first suite: a new one for the
    /// candidate as `applied`, or the summary's with this rerun added (its manifest as
    /// applied; checked again after the suites). Either is marked incomplete, with this run's
    /// suites scheduled and no precondition yet (a rerun whose setup passes clears an earlier
    /// failure), and judged.
    pub(crate) fn open_report(
        &self,
        started: Timestamp,
        applied: &Applied,
        planned: Vec<String>,
        scheduled: Vec<String>,
    ) -> GateReport {
        let mut report = match self {
            Mode::Fresh => GateReport::new(
                started,
                CandidateFacts::from_applied(applied, &applied.prepared.manifest_sha256),
                planned,
                Vec::new(),
                false,
            ),
            Mode::Rerun(prev) => {
                let mut report = prev.report.clone();
                report.reruns.push(Rerun {
                    at: started,
                    manifest: applied.verification.summary(),
                    tree: applied.tree.clone(),
                    suites: Vec::new(),
                });
                report.planned = planned;
                report
            }
        };
        report.scheduled = scheduled;
        report.interrupted = false;
        report.precondition = None;
        report.complete = false;
        report.judge();
        report
    }
}

/// Refuses a rerun whose candidate is not the summary's (`what` differs).
fn same_as_summary(summary: &Path, what: &str, ours: &str, theirs: &str) -> Result<()> {
    if ours == theirs {
        return Ok(());
    }
    let theirs = if theirs.is_empty() {
        "(none recorded)".into()
    } else {
        files::escape::text(theirs)
    };
    bail!(
        "{}: {what} differs from the summary's ({ours} here, {theirs} in the summary): one \
         summary describes one tree, so --only cannot append to it (pass --fresh to start a \
         new summary)",
        summary.display()
    )
}

/// The report at `path`, or `None` when there is none.
fn load(path: &Path) -> Result<Option<GateReport>> {
    match files::input::read(path) {
        Ok(bytes) => {
            let report: GateReport = serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{}: not a gate report this version can append to (pass --fresh to start a new summary)",
                    path.display()
                )
            })?;
            Ok(Some(report))
        }
        Err(files::input::InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rerun(number: usize) -> Mode {
        let report = crate::record::fixtures::report(&["a"], Vec::new());
        Mode::Rerun(Box::new(Previous {
            report,
            path: PathBuf::from("out/gate.json"),
            number,
        }))
    }

    #[test]
    fn a_runs_logs_are_named_one_way_by_its_mode() {
        assert_eq!(Mode::Fresh.setup_log(), "logs/00-setup.log");
        assert_eq!(rerun(2).setup_log(), "logs/rerun-2-00-setup.log");
        assert_eq!(Mode::Fresh.suite_log(0, "unit"), "logs/01-unit.log");
        assert_eq!(rerun(3).suite_log(1, "e2e"), "logs/rerun-3-02-e2e.log");
    }

    #[test]
    fn a_rerun_keeps_the_summarys_suites_first_and_refuses_another_tree() {
        let mode = rerun(1);
        assert!(!mode.is_fresh());
        assert_eq!(mode.planned(["b", "a", "b"]), ["a", "b"]);
        assert_eq!(Mode::Fresh.planned(["b", "a", "b"]), ["b", "a"]);
        assert!(mode.check_tree(&"a".repeat(40)).is_ok());
        let refused = mode.check_tree(&"c".repeat(40)).unwrap_err().to_string();
        assert!(
            refused.starts_with(&format!(
                "out/gate.json: tree id {} differs",
                "c".repeat(40)
            )),
            "{refused}"
        );
        assert!(Mode::Fresh.check_tree("anything").is_ok());
    }
}
