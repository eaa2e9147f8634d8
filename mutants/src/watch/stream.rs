//! What a runner in watch mode prints, read line by line: where a rerun starts (and which file
//! it names), and where the runner is idle again (green or red). Measured on vitest 3 with its
//! stdout a pipe, not a terminal (with `CI=true` as without; `--watch` given explicitly keeps
//! it watching):
//!
//! ```text
//!  PASS  Waiting for file changes...                 (the first run, or a rerun, passed)
//! ␛c␛[3J RERUN  src/add.js x1                        (a changed file, and its rerun's number)
//!  FAIL  Tests failed. Watching for file changes...  (a rerun that failed)
//! ```
//!
//! Between a `RERUN` line and the next idle line is the rerun's report: the same text a cold
//! `vitest run` prints, which the one log reader (`report::results`) counts and names the
//! failed tests in. Escapes (colours, the screen clear) are dropped before a line is read.

/// One line of a watch-mode runner's output, as far as judging goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A rerun starts, for the change of this file (as the runner names it, relative to its
    /// root).
    Rerun(String),
    /// The runner is idle again: its last run passed (`green`) or failed.
    Idle { green: bool },
    /// A blank line, or the key help vitest prints under its idle line (`press h to show
    /// help, press q to quit`): says nothing of a run.
    Quiet,
    /// Any other line: part of a report.
    Other,
}

/// Reads one line (escapes already dropped, see [`plain`]).
pub(crate) fn classify(line: &str) -> Line {
    let t = line.trim();
    if t.is_empty() || (t.starts_with("press h to show help") && t.ends_with("to quit")) {
        return Line::Quiet;
    }
    if let Some(rest) = t.strip_prefix("RERUN") {
        let rest = rest.trim();
        // `src/add.js x2`: the count of reruns of that file goes.
        let named = match rest.rsplit_once(' ') {
            Some((file, n)) if n.starts_with('x') && n[1..].chars().all(|c| c.is_ascii_digit()) => {
                file.trim()
            }
            _ => rest,
        };
        return Line::Rerun(named.to_string());
    }
    if t.starts_with("PASS") && t.ends_with("Waiting for file changes...") {
        return Line::Idle { green: true };
    }
    if t.starts_with("FAIL") && t.ends_with("Watching for file changes...") {
        return Line::Idle { green: false };
    }
    Line::Other
}

/// Whether the file a rerun names is `file` (relative to the tree's root): the runner names it
/// relative to its own root, which may be a folder inside the tree, so the name must be a
/// whole-component tail of the path.
pub(crate) fn names(named: &str, file: &str) -> bool {
    let named = named.trim_start_matches("./");
    !named.is_empty()
        && (file == named
            || file
                .strip_suffix(named)
                .is_some_and(|head| head.ends_with('/')))
}

/// `line` as plain text: without terminal escapes (see [`report::color::strip`]) and without
/// the carriage returns a watcher redraws its status line with.
pub(crate) fn plain(line: &str) -> String {
    report::color::strip(line).replace('\r', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vitest_watch_lines_read_as_what_they_say() {
        assert_eq!(
            classify(&plain("\u{1b}c\u{1b}[3J RERUN  src/add.js x12 ")),
            Line::Rerun("src/add.js".into())
        );
        assert_eq!(
            classify(&plain(
                "\u{1b}[1m\u{1b}[42m PASS \u{1b}[49m\u{1b}[22m \u{1b}[32mWaiting for file changes...\u{1b}[39m"
            )),
            Line::Idle { green: true }
        );
        assert_eq!(
            classify(" FAIL  Tests failed. Watching for file changes..."),
            Line::Idle { green: false }
        );
        assert_eq!(classify(" FAIL  test/add.test.js > adds"), Line::Other);
        assert_eq!(
            classify("       press h to show help, press q to quit"),
            Line::Quiet
        );
        assert_eq!(classify("  "), Line::Quiet);
        assert_eq!(
            classify("      Tests  1 failed | 1 passed (2)"),
            Line::Other
        );
    }

    #[test]
    fn a_rerun_names_the_mutated_file_only_by_a_whole_tail() {
        assert!(names("src/add.js", "src/add.js"));
        assert!(names("src/add.js", "packages/core/src/add.js"));
        assert!(!names("add.js", "src/madd.js"));
        assert!(!names("src/add.js", "src/add.jsx"));
        assert!(!names("", "src/add.js"));
    }
}
