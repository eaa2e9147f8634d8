//! The line that says why a test failed, found in the text written about its failure (a
//! stretch of a log, a JUnit `<failure>` body, a TAP diagnostic): `TypeError: ...` for a crash,
//! `AssertionError: ...` or pytest's `E   assert 1 == 2` for an assertion.
//!
//! For a chained error the line is its innermost cause: Python prints a chain cause first
//! (`The above exception was the direct cause of the following exception:`), so the walk goes
//! back over those; an exception raised while handling another (`During handling of the above
//! exception`) is the error itself, the one it replaced is not. Node prints a cause inside the
//! error it caused (`[cause]: TypeError: ...`, or `cause: ...` in its JUnit), deepest last.
//! Every reader of failures (the log's text, TAP, JUnit) finds its line here, so a new form of
//! chain is taught once.

use std::sync::OnceLock;

use regex::Regex;

/// One failed test, as a runner's report or log names it: its full id and the line that says
/// why it failed (its first error line; `None` when nothing there reads as an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failed {
    pub name: String,
    pub error: Option<String>,
}

/// How long a line this gives back may be, in characters.
const CLIP: usize = 200;

/// Whether `line` (trimmed) reads as an error: an error type at its start (`AssertionError:`,
/// `Error [ERR_X]:`, `importlib.metadata.PackageNotFoundError:`), a Rust panic, a compiler's
/// `error:`, or a missing module or command.
pub fn is_error_line(line: &str) -> bool {
    static P: OnceLock<Regex> = OnceLock::new();
    let re = P.get_or_init(|| {
        Regex::new(r"^(?:[\w.]+\.)?\w*(?:Error|Exception)(?::|\s\[|\s*$)|panicked at|^error(?:\[\w+\])?:|Cannot find|No module named|command not found|[Nn]ot found:")
            .expect("static pattern")
    });
    // In the middle of a line, or followed by anything but `:`, ` [` or the line's end
    // (`triggerUncaughtException(`), an error's type is source code quoted. Stack frames, pytest's
    // source lines (`>`) and node's generic `error: 'test failed'` say where, not why.
    !line.starts_with("at ")
        && !line.starts_with('>')
        && !line.starts_with("File \"")
        && !line.contains("'test failed'")
        && re.is_match(line)
}

/// A generic message that names no cause: node's `test failed` for a file that did not load,
/// `2 subtests failed` for a suite whose tests failed.
pub fn is_generic(message: &str) -> bool {
    static P: OnceLock<Regex> = OnceLock::new();
    let re = P.get_or_init(|| {
        Regex::new(r"^(?:Error: )?(?:test failed|\d+ subtests? failed|true|)$")
            .expect("static pattern")
    });
    re.is_match(message.trim())
}

/// How one part of a Python chain leads to the next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Link {
    /// `raise ... from e`: the part before is the cause.
    Cause,
    /// An error raised while handling another: the part after is the error.
    Context,
}

/// The line that says why, in `lines` (the text about one failure), or `None` when no line
/// there reads as an error. Chains resolve to their innermost cause (see the module doc).
pub fn first_error<S: AsRef<str>>(lines: &[S]) -> Option<String> {
    let clean: Vec<&str> = lines.iter().map(|l| plain(l.as_ref())).collect();
    // Python's chain: parts split at its two markers, the error's own part last.
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut links: Vec<Link> = Vec::new();
    let mut start = 0;
    for (i, line) in clean.iter().enumerate() {
        let link = if line.starts_with("The above exception was the direct cause") {
            Link::Cause
        } else if line.starts_with("During handling of the above exception") {
            Link::Context
        } else {
            continue;
        };
        parts.push((start, i));
        links.push(link);
        start = i + 1;
    }
    parts.push((start, clean.len()));
    // From the error's own part back over every `from` link, to the innermost cause with a line.
    let mut at = parts.len() - 1;
    let mut found = in_part(&clean[parts[at].0..parts[at].1]);
    while at > 0 && links[at - 1] == Link::Cause {
        at -= 1;
        if let Some(line) = in_part(&clean[parts[at].0..parts[at].1]) {
            found = Some(line);
        }
    }
    found.map(|l| crate::text::clip(&l, CLIP))
}

/// A line without TAP's `#` comment mark or a table's `|`, trimmed.
fn plain(line: &str) -> &str {
    line.trim().trim_start_matches(['#', '|']).trim()
}

/// The line that says why in one part of a chain: node's deepest `[cause]:`, pytest's first
/// `E ` line, the message under a YAML `error: |-`, else the first line that reads as an error.
fn in_part(lines: &[&str]) -> Option<String> {
    let cause = lines.iter().rev().find_map(|l| {
        let rest = l
            .strip_prefix("[cause]:")
            .or_else(|| l.strip_prefix("cause:"))?
            .trim();
        is_error_line(rest).then(|| rest.trim_end_matches(" {").to_string())
    });
    if cause.is_some() {
        return cause;
    }
    if let Some(e) = lines.iter().find_map(|l| l.strip_prefix("E ")) {
        let e = e.trim();
        if !e.is_empty() {
            return Some(e.to_string());
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if line.ends_with("error: |-") || line.ends_with("error: |") {
            // node's TAP writes the message on the lines under `error: |-`.
            if let Some(next) = lines[i + 1..].iter().find(|l| !l.is_empty()) {
                return Some(next.to_string());
            }
        } else if is_error_line(line) {
            // Rust's panic says where on its line and what on the next.
            let next = lines.get(i + 1).copied().unwrap_or("");
            if line.contains("panicked at") && line.ends_with(':') && !next.is_empty() {
                return Some(format!("{line} {next}"));
            }
            return Some(line.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Option<String> {
        first_error(&text.lines().collect::<Vec<_>>())
    }

    #[test]
    fn a_python_chain_gives_its_innermost_cause_and_a_handling_chain_its_last_error() {
        let cause = "E   KeyError: 'key'\n\nThe above exception was the direct cause of the following exception:\n\nE   RuntimeError: config could not load\n";
        assert_eq!(first(cause).as_deref(), Some("KeyError: 'key'"));
        let context = "ImportError while importing test module 'x'.\nE   StopIteration\n\nDuring handling of the above exception, another exception occurred:\nE   importlib.metadata.PackageNotFoundError: No package metadata was found for x\n";
        assert_eq!(
            first(context).as_deref(),
            Some("importlib.metadata.PackageNotFoundError: No package metadata was found for x")
        );
    }

    #[test]
    fn pytests_e_line_wins_over_its_wrapper_and_node_gives_its_deepest_cause() {
        let wrapped = "ImportError while importing test module '/t/test_a.py'.\nTraceback:\nE   ModuleNotFoundError: No module named 'foo'\n";
        assert_eq!(
            first(wrapped).as_deref(),
            Some("ModuleNotFoundError: No module named 'foo'")
        );
        let node = "Error: outer\n    at x {\n  [cause]: TypeError: inner reason\n      at y\n}\n";
        assert_eq!(first(node).as_deref(), Some("TypeError: inner reason"));
        assert_eq!(first("all fine\n"), None);
    }

    #[test]
    fn generic_messages_name_no_cause() {
        assert!(is_generic("test failed"));
        assert!(is_generic("2 subtests failed"));
        assert!(!is_generic("expected 1 to be 2"));
    }
}
