//! A JUnit XML report as test runners write it (pytest `--junitxml`, vitest's and jest's JUnit
//! reporters, node's `--test-reporter=junit`, nextest, gotestsum `--junitfile`), read into
//! counts and failed tests: each `<testcase>` counts once, as failed when it holds a
//! `<failure>` or `<error>`, skipped when it holds a `<skipped>`, passed otherwise. A testcase
//! that holds testcases (node's subtests) is their parent and is not counted itself.
//!
//! The XML is read by [`crate::xml`] (bounded, no entity definitions, no recursion).

use crate::counts::Counts;
use crate::errors::{self, Failed};
use crate::xml::{self, Event, XmlError};

/// What a JUnit file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub counts: Counts,
    pub failed: Vec<Failed>,
}

#[derive(Default)]
struct Case {
    name: String,
    classname: String,
    /// The `<testsuite>` names around it, outermost first.
    suites: Vec<String>,
    failed: bool,
    skipped: bool,
    parent: bool,
    message: Option<String>,
    kind: Option<String>,
    body: String,
}

/// Reads a JUnit report's text.
pub fn read(text: &str) -> Result<Report, XmlError> {
    let mut report = Report::default();
    let mut cases: Vec<Case> = Vec::new();
    let mut suites: Vec<String> = Vec::new();
    // Inside a `<failure>` or `<error>` of the innermost open testcase: its text is the body.
    let mut in_failure = 0usize;
    for event in xml::events(text)? {
        match event {
            Event::Start { name, attrs, empty } => {
                let attr = |key: &str| attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
                match name.as_str() {
                    "testsuite" if !empty => suites.push(attr("name").unwrap_or_default()),
                    "testcase" => {
                        if let Some(outer) = cases.last_mut() {
                            outer.parent = true;
                        }
                        let case = Case {
                            name: attr("name").unwrap_or_default(),
                            classname: attr("classname").unwrap_or_default(),
                            suites: suites.clone(),
                            ..Case::default()
                        };
                        if empty {
                            count(&mut report, case);
                        } else {
                            cases.push(case);
                        }
                    }
                    "failure" | "error" => {
                        if let Some(case) = cases.last_mut() {
                            case.failed = true;
                            if case.message.is_none() {
                                case.message = attr("message");
                                case.kind = attr("type");
                            }
                            if !empty {
                                in_failure += 1;
                            }
                        }
                    }
                    "skipped" => {
                        if let Some(case) = cases.last_mut() {
                            case.skipped = true;
                        }
                    }
                    _ => {}
                }
            }
            Event::End(name) => match name.as_str() {
                "testsuite" => {
                    suites.pop();
                }
                "testcase" => {
                    if let Some(case) = cases.pop() {
                        count(&mut report, case);
                    }
                    in_failure = 0;
                }
                "failure" | "error" => in_failure = in_failure.saturating_sub(1),
                _ => {}
            },
            Event::Text(t) => {
                if in_failure > 0 {
                    if let Some(case) = cases.last_mut() {
                        // One failure's text is enough to say why; a huge one is cut.
                        if case.body.len() < 1 << 16 {
                            case.body.push_str(&t);
                        }
                    }
                }
            }
        }
    }
    Ok(report)
}

fn count(report: &mut Report, case: Case) {
    if case.parent {
        return;
    }
    let c = &mut report.counts;
    if case.failed {
        c.failed = c.failed.saturating_add(1);
        let error = why(&case);
        report.failed.push(Failed {
            name: id(&case),
            error,
        });
    } else if case.skipped {
        c.skipped = c.skipped.saturating_add(1);
    } else {
        c.passed = c.passed.saturating_add(1);
    }
}

/// The line that says why: from the failure's text (chains resolved), else its message.
fn why(case: &Case) -> Option<String> {
    let lines: Vec<&str> = case.body.lines().collect();
    if let Some(line) = errors::first_error(&lines).filter(|l| !errors::is_generic(l)) {
        return Some(line);
    }
    let message = case.message.as_deref()?.lines().next()?.trim();
    if message.is_empty() || errors::is_generic(message) {
        return None;
    }
    let line = match case.kind.as_deref() {
        Some(kind) if errors::is_error_line(kind) && !message.starts_with(kind) => {
            format!("{kind}: {message}")
        }
        _ => message.to_string(),
    };
    Some(crate::text::clip(&line, 200))
}

/// A testcase's full id, as its runner names the test elsewhere.
fn id(case: &Case) -> String {
    let (class, name) = (case.classname.as_str(), case.name.as_str());
    if class == "test" {
        // node's reporter calls every class `test`; the test's place is its suites (the
        // outermost, `<testsuites>`' children, are describe blocks too).
        let mut parts: Vec<&str> = case.suites.iter().map(String::as_str).collect();
        parts.push(name);
        return parts.join(" > ");
    }
    if class.is_empty() || name == class || name.starts_with(&format!("{class} ")) {
        // jest-junit writes the class into the name already.
        return name.to_string();
    }
    let file = [
        ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".py",
    ]
    .iter()
    .any(|ext| class.ends_with(ext));
    let sep = if file {
        // vitest: the class is the test file, the name its place in the file.
        " > "
    } else if name.contains("::") {
        "::"
    } else {
        "."
    };
    format!("{class}{sep}{name}")
}
