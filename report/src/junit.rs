//! JUnit XML, the test-report format GitHub, GitLab and Jenkins show natively.
//!
//! A tool maps its records onto [`TestSuites`] (gate: one testcase per suite; mutants: one per
//! mutant) and calls [`TestSuites::render`]. The writer is small and hand-written, and the one
//! thing it must get right is text: suite logs hold anything (`&`, `<`, ANSI escapes, NUL bytes
//! from a crashed binary), and a single character XML 1.0 forbids makes the whole file unreadable
//! to every consumer. So every text and attribute goes through [`escape`], which escapes the five
//! markup characters and replaces each forbidden character with a visible `\u{..}` spelling.
//!
//! The other rule lives here too, for every tool: a JUnit file is never greener than its run.
//! [`TestSuites::render`] takes how the run ended ([`Ending`]), and a run that did not exit 0
//! but whose testcases all passed (a canary not noticed, a red baseline, a report that could
//! not be written, an input refused after the suites ran) gets one more testcase, failing or
//! erroring, that says why, so a CI test view never shows such a run green.

use std::fmt::Write as _;

use crate::time::Timestamp;

/// How one testcase ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Passed,
    /// The check ran and said no: `<failure message type>body</failure>`.
    Failed {
        message: String,
        kind: String,
        body: String,
    },
    /// The check could not run at all: `<error message type>body</error>`.
    Errored {
        message: String,
        kind: String,
        body: String,
    },
    /// `<skipped message/>`.
    Skipped {
        message: String,
    },
}

/// One `<testcase>`.
#[derive(Clone, Debug, PartialEq)]
pub struct TestCase {
    pub name: String,
    pub classname: String,
    /// Wall time in seconds.
    pub time: f64,
    pub status: Status,
    /// `<system-out>`, when there is something to say (a log path, counts).
    pub system_out: Option<String>,
}

impl TestCase {
    pub fn new(name: impl Into<String>, classname: impl Into<String>, time: f64) -> TestCase {
        TestCase {
            name: name.into(),
            classname: classname.into(),
            time,
            status: Status::Passed,
            system_out: None,
        }
    }
}

/// One `<testsuite>`.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSuite {
    pub name: String,
    pub timestamp: Option<Timestamp>,
    pub cases: Vec<TestCase>,
}

/// How the run a JUnit file describes ended: its exit code and, for a code that is not 0, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    pub code: u8,
    /// Why the run ended with `code`, in a line (a finding, a failed precondition, an error).
    pub why: String,
}

impl Ending {
    pub fn new(code: u8, why: impl Into<String>) -> Ending {
        Ending {
            code,
            why: why.into(),
        }
    }
}

/// The testcase a run that did not exit 0 gets when none of its testcases fails or errors:
/// a failure for findings (exit 1), an error for a run that could not judge (any other code).
fn ending_case(tool: &str, ending: &Ending) -> TestCase {
    let mut case = TestCase::new(
        format!("{tool} run: exit {}", ending.code),
        format!("{tool}.run"),
        0.0,
    );
    let message = format!("the run exited {}: {}", ending.code, ending.why);
    let kind = format!("exit {}", ending.code);
    case.status = if ending.code == 1 {
        Status::Failed {
            message,
            kind,
            body: String::new(),
        }
    } else {
        Status::Errored {
            message,
            kind,
            body: String::new(),
        }
    };
    case
}

fn failing(case: &TestCase) -> bool {
    matches!(case.status, Status::Failed { .. } | Status::Errored { .. })
}

/// The `<testsuites>` root.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSuites {
    pub name: String,
    pub suites: Vec<TestSuite>,
}

#[derive(Default)]
struct Tally {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time: f64,
}

fn tally(cases: &[TestCase]) -> Tally {
    let mut t = Tally::default();
    for c in cases {
        t.tests += 1;
        t.time += c.time;
        match c.status {
            Status::Passed => {}
            Status::Failed { .. } => t.failures += 1,
            Status::Errored { .. } => t.errors += 1,
            Status::Skipped { .. } => t.skipped += 1,
        }
    }
    t
}

fn secs(t: f64) -> String {
    format!("{:.3}", if t.is_finite() { t.max(0.0) } else { 0.0 })
}

impl TestSuites {
    /// The whole document of a run that ended as `ending` says, with its XML declaration and
    /// a final newline. A run that did not exit 0 has at least one failing or erroring
    /// testcase: when none of the tool's says so, one is added that says why (see the module).
    pub fn render(&self, ending: &Ending) -> String {
        let all_cases = || self.suites.iter().flat_map(|s| s.cases.iter());
        if ending.code != 0 && !all_cases().any(failing) {
            let mut owed = self.clone();
            let case = ending_case(&self.name, ending);
            match owed.suites.last_mut() {
                Some(suite) => suite.cases.push(case),
                None => owed.suites.push(TestSuite {
                    name: self.name.clone(),
                    timestamp: None,
                    cases: vec![case],
                }),
            }
            return owed.render(&Ending::new(0, ""));
        }
        let all: Vec<TestCase> = all_cases().cloned().collect();
        let t = tally(&all);
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
            escape(&self.name),
            t.tests,
            t.failures,
            t.errors,
            t.skipped,
            secs(t.time)
        );
        for suite in &self.suites {
            render_suite(&mut out, suite);
        }
        out.push_str("</testsuites>\n");
        out
    }
}

fn render_suite(out: &mut String, suite: &TestSuite) {
    let t = tally(&suite.cases);
    let stamp = suite
        .timestamp
        .map(|ts| format!(" timestamp=\"{ts}\""))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\"{stamp}>",
        escape(&suite.name),
        t.tests,
        t.failures,
        t.errors,
        t.skipped,
        secs(t.time)
    );
    for case in &suite.cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
            escape(&case.name),
            escape(&case.classname),
            secs(case.time)
        );
        if case.status == Status::Passed && case.system_out.is_none() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        match &case.status {
            Status::Passed => {}
            Status::Failed {
                message,
                kind,
                body,
            } => element(out, "failure", message, kind, body),
            Status::Errored {
                message,
                kind,
                body,
            } => element(out, "error", message, kind, body),
            Status::Skipped { message } => {
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(message));
            }
        }
        if let Some(text) = &case.system_out {
            let _ = writeln!(out, "      <system-out>{}</system-out>", escape(text));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n");
}

fn element(out: &mut String, tag: &str, message: &str, kind: &str, body: &str) {
    let _ = writeln!(
        out,
        "      <{tag} message=\"{}\" type=\"{}\">{}</{tag}>",
        escape(message),
        escape(kind),
        escape(body)
    );
}

/// Whether XML 1.0 allows `c` in a document at all (its `Char` production).
pub fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\t' | '\n' | '\r'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// Text safe in both element content and a double- or single-quoted attribute: `&<>"'`
/// escaped; tab, newline and carriage return as character references (so attributes keep them
/// through attribute-value normalisation, and a lone `\r` survives end-of-line handling); every
/// character XML 1.0 forbids (NUL, the other C0 controls, U+FFFE, U+FFFF) spelled `\u{1b}`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if is_xml_char(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    out
}

/// The last `max_lines` lines of a log (at most `max_bytes` of it), for a failure's body.
pub fn tail(text: &str, max_lines: usize, max_bytes: usize) -> String {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let text = &text[start..];
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(max_lines);
    lines[from..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_forbidden_characters_are_escaped() {
        assert_eq!(
            escape("a & b < c > d \" e ' f"),
            "a &amp; b &lt; c &gt; d &quot; e &apos; f"
        );
        assert_eq!(escape("nul\0 esc\x1b[0m"), "nul\\u{0} esc\\u{1b}[0m");
        assert_eq!(escape("\u{FFFE}\u{FFFF}"), "\\u{fffe}\\u{ffff}");
        assert_eq!(escape("tab\tline\ncr\r"), "tab&#9;line&#10;cr&#13;");
        assert_eq!(escape("héllo 🦀"), "héllo 🦀");
    }

    #[test]
    fn a_suite_tallies_its_cases() {
        let mut failed = TestCase::new("b", "x", 1.5);
        failed.status = Status::Failed {
            message: "exit 1".into(),
            kind: "failed".into(),
            body: "boom".into(),
        };
        let mut skipped = TestCase::new("c", "x", 0.0);
        skipped.status = Status::Skipped {
            message: "interrupted".into(),
        };
        let doc = TestSuites {
            name: "t".into(),
            suites: vec![TestSuite {
                name: "s".into(),
                timestamp: None,
                cases: vec![TestCase::new("a", "x", 0.25), failed, skipped],
            }],
        }
        .render(&Ending::new(1, "a suite failed"));
        assert!(doc.contains(
            "<testsuite name=\"s\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"1.750\">"
        ));
        assert!(doc.contains("<failure message=\"exit 1\" type=\"failed\">boom</failure>"));
    }

    #[test]
    fn a_run_that_did_not_exit_0_is_never_all_green() {
        let green = TestSuites {
            name: "t".into(),
            suites: vec![TestSuite {
                name: "s".into(),
                timestamp: None,
                cases: vec![TestCase::new("a", "x", 0.25)],
            }],
        };
        assert!(green
            .render(&Ending::new(0, ""))
            .contains("failures=\"0\" errors=\"0\""));
        let four = green.render(&Ending::new(4, "canary <x> not noticed"));
        assert!(
            four.contains("tests=\"2\" failures=\"0\" errors=\"1\""),
            "{four}"
        );
        assert!(four.contains(
            "<error message=\"the run exited 4: canary &lt;x&gt; not noticed\" type=\"exit 4\">"
        ));
        let one = green.render(&Ending::new(1, "a finding"));
        assert!(one.contains("failures=\"1\" errors=\"0\""), "{one}");
        // With no testcase at all, the one added is the file's only one.
        let empty = TestSuites {
            name: "t".into(),
            suites: Vec::new(),
        };
        assert!(empty
            .render(&Ending::new(2, "refused"))
            .contains("tests=\"1\" failures=\"0\" errors=\"1\""));
        // A run whose own testcases already fail gets nothing more.
        let mut failed = green.clone();
        failed.suites[0].cases[0].status = Status::Errored {
            message: "m".into(),
            kind: "k".into(),
            body: String::new(),
        };
        assert!(failed
            .render(&Ending::new(130, "cut"))
            .contains("tests=\"1\" failures=\"0\" errors=\"1\""));
    }

    #[test]
    fn tails_keep_the_last_lines_on_a_char_boundary() {
        assert_eq!(tail("a\nb\nc\nd", 2, 100), "c\nd");
        assert_eq!(tail("ééé", 10, 3), "é");
    }
}
