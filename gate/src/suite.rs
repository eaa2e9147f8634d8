//! The suites of a gate.toml: expanded (a `glob` becomes one suite per file), then run in order
//! in the candidate's checkout through the `runner` crate.
//!
//! Each suite gets a scratch `TMPDIR` of its own, removed afterwards, so one suite cannot see
//! (or be broken by) another's temp files, and a suite that litters /tmp leaves nothing.
//!
//! A `glob` runs files the candidate brings, so each match is checked before it runs: only a
//! regular file inside the tree (or a link to one inside it) is run, and one without its exec
//! bit is not started. Either way it still gets its row (`not executable`, `a link out of the
//! tree`), a finding, so a script the candidate broke can never vanish from the summary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

use report::RunRecord;
use runner::{Outcome, DEFAULT_TIMEOUT};

use candidate::suite::{Alone, Command, Suite, SuiteJob, Timeouts};
use report::text::shell_quote;

/// A suite ready to run: a shell command (its own, or one file its glob matched) with its
/// build step and limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    pub name: String,
    pub script: String,
    /// The suite as gate.toml gives it: its `build` (run before `script`, in the checkout's
    /// root: a build that fails or times out is the suite failing, its row says why and names
    /// the build's log), its `env`, where its counts are read from.
    pub suite: Suite,
    /// The suite's own timeout and its build's (gate.toml's, else 30 minutes each).
    pub timeouts: Timeouts,
    /// Why this match of a glob is not run (`not executable`), if it is not.
    pub refused: Option<String>,
}

impl Planned {
    /// `log` (the suite's log name in `logs/`) and its build's beside it when it has a build:
    /// every file a run of it may write there.
    pub fn logs(&self, log: &str) -> Vec<String> {
        let build = candidate::suite::run::build_log(Path::new(log));
        let build = build.to_string_lossy().into_owned();
        std::iter::once(log.to_string())
            .chain(self.suite.build.as_ref().map(|_| build))
            .collect()
    }
}

/// One suite's run, as reported.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SuiteResult {
    pub name: String,
    pub command: String,
    #[schemars(range(min = 0.0))]
    pub timeout_secs: f64,
    pub outcome: Outcome,
    /// The suite's run; when its build did not pass, the build's run (its log is the build's).
    pub record: RunRecord,
    /// Why the suite was not started at all (a glob match that is `not executable`, or a link
    /// out of the tree); `null` for a suite that ran.
    #[serde(default)]
    pub refused: Option<String>,
    /// Its `build` step as it ran, for a suite with one (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub build: Option<BuildResult>,
}

/// A suite's `build` step as it ran, before the suite.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct BuildResult {
    pub command: String,
    #[schemars(range(min = 0.0))]
    pub timeout_secs: f64,
    /// Its wall time, in seconds.
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// Why it did not pass (`build failed (exit 2)`, `build timed out after 5m00s ...`), so
    /// the suite never ran and failed; `null` for a build that passed.
    pub failed: Option<String>,
    /// Its log, kept beside the suite's (`logs/01-unit.build.log`).
    pub log: PathBuf,
}

impl SuiteResult {
    /// The row of `suite` as it ran (or was refused), its outcome read from the record.
    fn of(suite: &Planned, ran: candidate::suite::Ran, refused: Option<String>) -> SuiteResult {
        let build = match (&suite.suite.build, ran.build) {
            (Some(command), Some(built)) => Some(BuildResult {
                command: command.clone(),
                timeout_secs: suite.timeouts.build.as_secs_f64(),
                duration_secs: built.secs,
                failed: built.failed,
                log: built.log,
            }),
            _ => None,
        };
        SuiteResult {
            name: suite.name.clone(),
            command: suite.script.clone(),
            timeout_secs: suite.timeouts.run.as_secs_f64(),
            outcome: ran.record.outcome(),
            record: ran.record,
            refused,
            build,
        }
    }

    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Passed
    }

    /// `exit 0`, `exit 1`, `hang (killed at 15m00s)`, `SIGSEGV`, `not started`, `build failed
    /// (exit 2)`, plus strays.
    pub fn result_text(&self) -> String {
        let r = &self.record;
        if let Some(why) = &self.refused {
            return why.clone();
        }
        let build_failed = self.build.as_ref().and_then(|b| b.failed.clone());
        let mut text = match (build_failed, self.outcome) {
            (Some(why), _) => why,
            (None, Outcome::Hang) => format!(
                "hang (killed at {})",
                report::duration::human(Duration::from_secs_f64(self.timeout_secs))
            ),
            (None, Outcome::CouldNotStart) if r.run.ended.could_not_start().is_some() => {
                "not started".to_string()
            }
            (None, Outcome::CouldNotStart) => format!("{} (could not start)", r.status_text()),
            (None, _) => r.status_text(),
        };
        if r.run.strays_killed > 0 {
            text.push_str(&format!(", {} strays killed", r.run.strays_killed));
        }
        text
    }

    pub fn counts_text(&self) -> String {
        self.record
            .counts
            .map(|c| c.to_string())
            .unwrap_or_else(|| "unknown".to_string())
    }
}

/// Expands globs against the checkout; `run` suites pass through.
pub(crate) fn expand(specs: &[Suite], root: &Path) -> Result<Vec<Planned>> {
    let mut planned = Vec::new();
    for spec in specs {
        let timeouts = Timeouts {
            run: spec.timeout.unwrap_or(DEFAULT_TIMEOUT),
            build: spec.build_timeout.unwrap_or(DEFAULT_TIMEOUT),
        };
        let plan = |name: String, script: String, refused: Option<String>| Planned {
            name,
            script,
            suite: spec.clone(),
            timeouts,
            refused,
        };
        match &spec.command {
            Command::Run(script) => planned.push(plan(spec.name.clone(), script.clone(), None)),
            Command::Glob(pattern) => {
                let files = glob_files(root, pattern)?;
                if files.is_empty() {
                    bail!("suite glob {pattern:?} matches no file in the candidate");
                }
                for file in files {
                    let refused = runnable(root, &file).err();
                    planned.push(plan(
                        file.clone(),
                        format!("./{}", shell_quote(&file)),
                        refused,
                    ));
                }
            }
        }
    }
    Ok(planned)
}

/// Runs one suite in `dir` with the candidate-wide `env` under it, logging to `log` (its
/// build to the `.build.log` beside it): the one suite run ([`candidate::suite::run_suite`]),
/// one suite at a time.
pub(crate) fn run_suite(
    suite: &Planned,
    dir: &Path,
    env: &BTreeMap<String, String>,
    log: &Path,
    echo: bool,
) -> Result<SuiteResult> {
    if let Some(why) = &suite.refused {
        return refused(suite, dir, log, why);
    }
    let mut job = SuiteJob::of(&suite.suite, &suite.script, env, suite.timeouts);
    job.echo = echo;
    let ran = candidate::suite::run_suite(&job, dir, log, &Alone)?;
    Ok(SuiteResult::of(suite, ran, None))
}

/// The row of a suite that is not started: its log says why, its outcome is "could not start".
fn refused(suite: &Planned, dir: &Path, log: &Path, why: &str) -> Result<SuiteResult> {
    // Through the output folder's record, as every log is: a file a run writes and leaves off
    // `.gatekit-written` would be "not ours" to the next run into the same --out.
    let line = format!(
        "gatekit: not started: {}: {why}\n",
        files::escape::text(&suite.name)
    );
    files::outputs::create(log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .with_context(|| format!("creating log {}", log.display()))?;
    let mut record = RunRecord::not_yet_run(
        vec!["sh".into(), "-c".into(), suite.script.clone()],
        dir.to_path_buf(),
        log.to_path_buf(),
    );
    record.run.ended = runner::Ended::CouldNotStart {
        why: why.to_string(),
        status: runner::Status::default(),
    };
    let ran = candidate::suite::Ran {
        record,
        build: None,
    };
    Ok(SuiteResult::of(suite, ran, Some(why.to_string())))
}

/// `Ok` when the glob match `rel` can be run as `./rel`: a regular file inside `root` (itself,
/// or through a link that stays inside) with an exec bit; otherwise why not.
pub(crate) fn runnable(root: &Path, rel: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let path = root.join(rel);
    let own = std::fs::symlink_metadata(&path).map_err(|e| format!("unreadable: {e}"))?;
    if own.file_type().is_symlink() {
        let inside = match (path.canonicalize(), root.canonicalize()) {
            (Ok(real), Ok(real_root)) => real.starts_with(real_root),
            _ => false,
        };
        if !inside {
            return Err("a link out of the tree".into());
        }
    }
    let meta = std::fs::metadata(&path).map_err(|e| format!("unreadable: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err("not executable".into());
    }
    Ok(())
}

/// A file name for a suite's log: its position and a slug of its name.
pub(crate) fn log_name(index: usize, name: &str) -> PathBuf {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let slug = slug.trim_matches('-');
    let slug: String = slug.chars().take(60).collect();
    PathBuf::from(format!("{:02}-{slug}.log", index + 1))
}

/// Files under `root` (relative, `/`-separated, sorted) that match a shell-style glob: `*` and
/// `?` within one path component, `**` across components, `[...]` classes (`[!...]` negated).
pub(crate) fn glob_files(root: &Path, pattern: &str) -> Result<Vec<String>> {
    let glob = glob_matcher(pattern)?;
    let mut files: Vec<String> = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_type().is_dir())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?.to_str()?.to_string();
            glob.is_match(&rel).then_some(rel)
        })
        .collect();
    // Sorted as strings, so the suites' order is the same whatever order the walk found them in.
    files.sort();
    Ok(files)
}

/// The glob as a shell reads it: a `*` never crosses a `/` (globset's literal separator), so
/// `scripts/test-*.sh` leaves `scripts/sub/test-a.sh` alone and `**/` is how to reach it.
fn glob_matcher(pattern: &str) -> Result<GlobMatcher> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .with_context(|| format!("suite glob {pattern:?}"))?;
    Ok(glob.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_within_and_across_components() {
        let m = |p: &str, s: &str| glob_matcher(p).unwrap().is_match(s);
        assert!(m("scripts/test-*.sh", "scripts/test-a.sh"));
        assert!(!m("scripts/test-*.sh", "scripts/sub/test-a.sh"));
        assert!(!m("scripts/*.sh", "scripts/sub/test-a.sh"));
        assert!(!m("scripts/test-*.sh", "scripts/test-x/y.sh"));
        assert!(m("**/test-*.sh", "scripts/sub/test-a.sh"));
        assert!(m("**/test-*.sh", "test-a.sh"));
        assert!(m("t?.sh", "t1.sh"));
        assert!(m("t[0-9].sh", "t7.sh"));
        assert!(!m("t[!0-9].sh", "t7.sh"));
        assert!(!m("a.sh", "a_sh"));
    }

    #[test]
    fn glob_discovery_finds_files_by_component_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "scripts/test-b.sh",
            "scripts/test-a.sh",
            "scripts/sub/test-c.sh",
            "scripts/test-x/y.sh",
            "scripts/build.sh",
            "test-top.sh",
            ".git/test-hidden.sh",
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "").unwrap();
        }
        // A folder whose name matches is not a suite.
        std::fs::create_dir_all(root.join("scripts/test-dir.sh")).unwrap();
        assert_eq!(
            glob_files(root, "scripts/test-*.sh").unwrap(),
            ["scripts/test-a.sh", "scripts/test-b.sh"]
        );
        assert_eq!(
            glob_files(root, "**/test-*.sh").unwrap(),
            [
                "scripts/sub/test-c.sh",
                "scripts/test-a.sh",
                "scripts/test-b.sh",
                "test-top.sh"
            ]
        );
        assert!(glob_files(root, "scripts/*.py").unwrap().is_empty());
        let bad = glob_files(root, "scripts/[test.sh").unwrap_err();
        assert!(format!("{bad:#}").contains("suite glob"), "{bad:#}");
    }

    #[test]
    fn odd_file_names_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("scripts/test-a.sh"), "scripts/test-a.sh");
        assert_eq!(shell_quote("it's here.sh"), "'it'\\''s here.sh'");
    }

    #[test]
    fn log_names_are_ordered_and_safe() {
        assert_eq!(log_name(0, "bus"), PathBuf::from("01-bus.log"));
        assert_eq!(
            log_name(11, "scripts/test-a.sh"),
            PathBuf::from("12-scripts-test-a-sh.log")
        );
    }
}
