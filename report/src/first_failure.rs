//! The first failed test, read while a suite's output streams: fed the log's lines as the runner
//! writes them ([`Reader::line`]), it says when the runner's report of the first failure is
//! complete, its name and, where the runner prints it then, its first error line. mutants stops
//! a mutant's suite there (`fail_fast`): the verdict is `killed` whatever the rest would say.
//!
//! The runners' formats are the ones the after-the-run readers know (the name patterns of
//! [`crate::failures`], TAP's lines and YAML diagnostics of [`crate::tap`], the error lines of
//! [`crate::errors`]), so one place knows each format. Where a runner prints a failure's error
//! only later, the stop is the earliest that names the test, chosen by measuring the real
//! runner:
//!
//! - **TAP** (node's `--test` when not on a terminal, tape, node-tap): `not ok N - name` and its
//!   YAML block (`---` to `...`), printed as the test ends; the name with its parents
//!   (`# Subtest:`) or tape's `# name`, as [`crate::tap::read`] names it. A point without a
//!   block is complete at the next line. `# SKIP` and `# TODO` points are no failure.
//! - **cargo test**: `test x ... FAILED` is printed as the test ends, but its `---- x stdout
//!   ----` block with the panic line only once every test of its binary has ended; a flood in
//!   one binary, or one slow test beside the failed one, would hold the stop back that long.
//!   So the stop is at `test x ... FAILED`, with the panic line when it was printed above it
//!   (`--nocapture`); `-q` prints `x --- FAILED` (Rust 1.92; older ones only marks, and there
//!   the block is read).
//! - **pytest** `-v`: `path::test FAILED [ 50%]` as the test ends, its `E` lines only in the
//!   failures section once every test has run: the stop is at the verbose line, without an
//!   error line. Without `-v` pytest names no test until its closing summary (`FAILED path::id
//!   - message`), a moment before it ends by itself: a stop there would save nothing and lose
//!   the closing counts, so that run goes whole. A suite that wants an early stop passes `-v`,
//!   or `-x`, with which pytest stops itself.
//! - **jest**: a test file's `● describe › test` blocks are printed when the file ends; the
//!   block's first line (`expect(received).toBe(expected)`, `TypeError: ...`) completes it.
//! - **vitest**: its default reporter, when not on a terminal, lists a file's tests when the
//!   file ends, under `❯ file (N tests | M failed)`, each failed one as `× name 3ms` with
//!   `→ message` under it: that line completes the first failure, named `file > name` as the
//!   closing `FAIL  file > name` blocks name it (read too, with their first line). A flood in
//!   one file is thus read only when that file ends; `--reporter=verbose` prints each test as
//!   it ends (`× file > name 3ms`, then `→ message`), the earliest stop vitest offers.
//!
//! A stream in no format known here never stops: the suite runs whole, as without `fail_fast`.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::counts::strip_ansi;
use crate::errors;
use crate::failures::name_patterns;
use crate::tap;

/// The first failed test, as the runner's report named it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FirstFailure {
    /// Its name, as the runner names it (`tests/test_a.py::test_x`, `math > adds`).
    pub test: String,
    /// Its first error line, when the runner printed it before the stop.
    pub error: Option<String>,
    /// Seconds from the suite's start to the line that completed the report.
    #[schemars(range(min = 0.0))]
    pub secs: f64,
}

/// How many lines of context are kept: output above a TAP point, lines before cargo's `FAILED`.
const KEPT: usize = 100;

/// How many lines of one failure's report are read for its error before it is taken as it is.
const BLOCK: usize = 400;

/// A failure named whose report is still being printed.
enum Pending {
    /// A TAP point: its YAML block not started yet (`None`) or being read.
    Tap { yaml: Option<Vec<String>> },
    /// The error is the next line that is not blank (jest's `●` block, vitest's `FAIL` block).
    NextLine,
    /// vitest's `→ message` under the mark, or nothing.
    VitestArrow,
    /// cargo's `---- x stdout ----` block, read to its panic.
    CargoBlock { lines: Vec<String> },
}

/// Reads a streaming log for its first failed test (see the module comment).
pub struct Reader {
    tap: bool,
    node_style: bool,
    /// node's `# Subtest:` names by indent, innermost last.
    subtests: Vec<(usize, String)>,
    /// tape's `# name` above its assertions.
    group: Option<String>,
    /// The last lines seen (TAP's output above a point, cargo's `--nocapture` panic).
    recent: VecDeque<String>,
    vitest_file: Option<String>,
    pending: Option<(String, Pending)>,
    found: Option<FirstFailure>,
}

impl Reader {
    /// A reader of any known format; `tap` when the suite says its runner prints TAP.
    pub fn new(tap: bool) -> Reader {
        Reader {
            tap,
            node_style: false,
            subtests: Vec::new(),
            group: None,
            recent: VecDeque::new(),
            vitest_file: None,
            pending: None,
            found: None,
        }
    }

    /// The first failure, once its report is complete.
    pub fn found(&self) -> Option<&FirstFailure> {
        self.found.as_ref()
    }

    /// Reads a whole log as if it streamed: the first failure it would have stopped at.
    pub fn replay(log: &str, tap: bool) -> Option<FirstFailure> {
        let mut reader = Reader::new(tap);
        for line in log.lines() {
            if reader.line(line, Duration::ZERO) {
                break;
            }
        }
        reader.found
    }

    /// Reads one line printed `at` after the start; `true` once the first failure's report
    /// is complete (and from then on).
    pub fn line(&mut self, raw: &str, at: Duration) -> bool {
        if self.found.is_some() {
            return true;
        }
        let line = strip_ansi(raw.trim_end_matches('\r'));
        if let Some((name, pending)) = self.pending.take() {
            match self.go_on(&name, pending, &line) {
                Ok(error) => return self.complete(name, error, at),
                Err(pending) => {
                    self.pending = Some((name, pending));
                    return false;
                }
            }
        }
        if self.tap || self.read_tap_version(&line) {
            self.tap_line(&line);
        } else if let Some((name, error)) = self.other_line(&line) {
            return self.complete(name, error, at);
        }
        self.keep(line);
        false
    }

    fn complete(&mut self, test: String, error: Option<String>, at: Duration) -> bool {
        self.found = Some(FirstFailure {
            test,
            error: error.map(|e| crate::text::clip(&e, 200)),
            secs: at.as_secs_f64(),
        });
        true
    }

    fn keep(&mut self, line: String) {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(line);
    }

    fn read_tap_version(&mut self, line: &str) -> bool {
        self.tap = tap::patterns().version.is_match(line);
        self.tap
    }

    /// A line of a failure's report: `Ok(error)` when the report is complete, else still
    /// pending.
    fn go_on(
        &mut self,
        name: &str,
        pending: Pending,
        line: &str,
    ) -> Result<Option<String>, Pending> {
        match pending {
            Pending::Tap { yaml: None } if line.trim() == "---" => {
                Err(Pending::Tap { yaml: Some(vec![]) })
            }
            Pending::Tap { yaml: None } => Ok(self.above_error()),
            Pending::Tap { yaml: Some(yaml) } if line.trim() == "..." || yaml.len() >= BLOCK => {
                let lines: Vec<&str> = yaml.iter().map(String::as_str).collect();
                let own = name.rsplit(" > ").next().unwrap_or(name);
                Ok(tap::yaml_error(&lines, own).or_else(|| self.above_error()))
            }
            Pending::Tap {
                yaml: Some(mut yaml),
            } => {
                yaml.push(line.to_string());
                Err(Pending::Tap { yaml: Some(yaml) })
            }
            Pending::NextLine if line.trim().is_empty() => Err(Pending::NextLine),
            Pending::NextLine => {
                let line = line.trim();
                Ok((!line.starts_with("at ") && !line.starts_with('●')).then(|| line.to_string()))
            }
            Pending::VitestArrow => Ok(line.trim().strip_prefix('→').map(|m| m.trim().to_string())),
            Pending::CargoBlock { mut lines } => {
                let end = line.starts_with("---- ") || line == "failures:" || lines.len() >= BLOCK;
                if !end {
                    lines.push(line.to_string());
                }
                // The panic's location line, then its message on the next.
                let panicked = lines.iter().position(|l| l.contains("panicked at"));
                if end || panicked.is_some_and(|i| i + 1 < lines.len()) {
                    Ok(errors::first_error(&lines))
                } else {
                    Err(Pending::CargoBlock { lines })
                }
            }
        }
    }

    /// What the output just above a TAP point says, when it names a cause (node prints why a
    /// file did not load there, above a point that says only `test failed`).
    fn above_error(&self) -> Option<String> {
        let above: Vec<&str> = self.recent.iter().map(String::as_str).collect();
        errors::first_error(&above).filter(|l| !errors::is_generic(l))
    }

    /// A TAP line: a failed point starts its report.
    fn tap_line(&mut self, line: &str) {
        let p = tap::patterns();
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(name) = line.trim_start().strip_prefix("# Subtest:") {
            // node's form: a `# text` line is a test's output, never a tape group.
            self.node_style = true;
            self.group = None;
            self.subtests.retain(|(i, _)| *i < indent);
            self.subtests.push((indent, name.trim().to_string()));
            return;
        }
        let Some(c) = p.point.captures(line) else {
            if !self.node_style && indent == 0 {
                if let Some(name) = line.strip_prefix("# ") {
                    if !p.summary.is_match(line) {
                        self.group = Some(name.trim().to_string());
                    }
                }
            }
            return;
        };
        let text = c.get(3).map_or("", |m| m.as_str());
        let skipped = p.directive.is_match(text);
        let failed = &c[2] == "not ok" && !skipped;
        let name = match p.directive.find(text) {
            Some(d) => text[..d.start()].trim(),
            None => text,
        };
        let mut parts: Vec<String> = self.group.iter().cloned().collect();
        parts.extend(
            self.subtests
                .iter()
                .filter(|(i, _)| *i < indent)
                .map(|(_, n)| n.clone()),
        );
        parts.push(name.to_string());
        self.subtests.retain(|(i, _)| *i < indent);
        if failed {
            self.pending = Some((parts.join(" > "), Pending::Tap { yaml: None }));
        } else {
            self.recent.clear();
        }
    }

    /// A line of a runner that does not print TAP: the failure's name and error when the line
    /// completes one at once, else a failure's report may start.
    fn other_line(&mut self, line: &str) -> Option<(String, Option<String>)> {
        let p = name_patterns();
        if let Some(c) = p.cargo_quiet.captures(line) {
            return Some((c[1].to_string(), None));
        } else if let Some(c) = p.cargo.captures(line) {
            if let Some(name) = c.get(1) {
                let name = name.as_str().to_string();
                let error = self.cargo_panic(&name);
                return Some((name, error));
            }
            let name = c.get(2).map_or("", |m| m.as_str()).to_string();
            self.pending = Some((name, Pending::CargoBlock { lines: Vec::new() }));
        } else if let Some(c) = p
            .pytest_verbose
            .captures(line)
            .or_else(|| p.pytest_xdist.captures(line))
        {
            return Some((c[1].to_string(), None));
        } else if let Some(c) = p.jest.captures(line) {
            // jest heads its console output and its config warnings the same way.
            let not_a_test = ["Console", "Validation ", "Deprecation "];
            if !not_a_test.iter().any(|w| c[1].starts_with(w)) {
                self.pending = Some((c[1].to_string(), Pending::NextLine));
            }
        } else if let Some(c) = p.vitest_file.captures(line) {
            self.vitest_file = Some(c[1].to_string());
        } else if let Some(c) = p.vitest_mark.captures(line) {
            // The default reporter's mark under its file's line; the verbose reporter's names
            // its file itself (`× a.test.mjs > math > adds 3ms`).
            let name = match &self.vitest_file {
                Some(file) => Some(format!("{file} > {}", &c[1])),
                None => p.vitest_file_name.is_match(&c[1]).then(|| c[1].to_string()),
            };
            if let Some(name) = name {
                self.pending = Some((name, Pending::VitestArrow));
            }
        } else if let Some(c) = p.vitest.captures(line) {
            self.pending = Some((c[1].to_string(), Pending::NextLine));
        }
        None
    }

    /// The panic line printed above cargo's `test x ... FAILED` (with `--nocapture`).
    fn cargo_panic(&self, name: &str) -> Option<String> {
        // `thread 'x' panicked at`, with the thread's id between them since Rust 1.92.
        let head = format!("thread '{name}'");
        let at = self
            .recent
            .iter()
            .rposition(|l| l.starts_with(&head) && l.contains("panicked at"))?;
        let lines: Vec<&str> = self
            .recent
            .iter()
            .skip(at)
            .take(2)
            .map(String::as_str)
            .collect();
        errors::first_error(&lines)
    }
}

impl runner::Observer for Reader {
    fn line(&mut self, line: &str, at: Duration) -> bool {
        Reader::line(self, line, at)
    }
}

#[cfg(test)]
mod tests;
