//! TAP (the Test Anything Protocol) as runners print it: tape, node-tap, node's
//! `--test-reporter=tap`, prove's verbose output.
//!
//! - A test point is `ok N - name` or `not ok N name` (the number and the dash optional), with
//!   a `# SKIP` or `# TODO` directive after the name: a skip and a todo (passing or not) count
//!   as skipped, never failed.
//! - A YAML block (`---` to `...`) under a point holds its diagnostics: node's `error` and
//!   `name`, tape's `stack`, `operator`, `expected` and `actual`.
//! - Subtests are indented (node's form): the points of a test's subtests come before its own
//!   point, and only the innermost (the leaves) are counted; a leaf is named with its parents
//!   (`math > adds`). `# Subtest: name` lines announce them and are not comments.
//! - tape prints a `# name` comment line above each test's assertions: they are named
//!   `name > assertion`.
//! - Comments and output between two points belong to the second: node 20 prints why a test
//!   file could not load (`Cannot find package 'semver'`) as `#` lines above its point, whose
//!   own diagnostic says only `test failed`.
//! - Summary comments (`# tests 7`, `# pass  5`, `# fail  2`: tape writes two spaces) give the
//!   counts when the stream has no test point.

use std::sync::OnceLock;

use regex::Regex;

use crate::counts::Counts;
use crate::errors::{self, Failed};

/// What a TAP stream says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tap {
    pub counts: Counts,
    pub failed: Vec<Failed>,
}

/// TAP's lines, read after the run ([`read`]) and while it streams (the first-failure reader).
pub(crate) struct Patterns {
    pub(crate) point: Regex,
    pub(crate) directive: Regex,
    pub(crate) version: Regex,
    pub(crate) plan: Regex,
    pub(crate) summary: Regex,
}

pub(crate) fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("static pattern");
        Patterns {
            point: re(r"^( *)(not ok|ok)(?:\s+\d+)?(?:\s+-)?(?:\s+(.*?))?\s*$"),
            directive: re(r"(?i)\s#\s*(skip|todo)\b.*$"),
            version: re(r"^TAP version \d+\s*$"),
            plan: re(r"^ *1\.\.\d+(?:\s+#.*)?\s*$"),
            summary: re(r"^# (tests|pass|fail|skip|skipped|todo|cancelled)\s+(\d+)\s*$"),
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Passed,
    Failed,
    Skipped,
}

struct Point {
    indent: usize,
    kind: Kind,
    name: String,
    /// tape's `# name` above this point's test.
    group: Option<String>,
    /// Why, from its YAML block.
    yaml_error: Option<String>,
    /// Why, from the comments and output just above it.
    above_error: Option<String>,
}

/// Whether `log` is a TAP stream: a `TAP version` line, or a plan line and a test point.
pub fn is_tap(log: &str) -> bool {
    let p = patterns();
    let mut plan = false;
    let mut point = false;
    for line in log.lines() {
        let line = line.trim_end_matches('\r');
        if p.version.is_match(line) {
            return true;
        }
        plan |= p.plan.is_match(line);
        point |= line.starts_with("ok ") || line.starts_with("not ok ");
        if plan && point {
            return true;
        }
    }
    false
}

/// Reads a TAP stream: every line not TAP is output of the tests, kept as the context of the
/// point that follows it.
pub fn read(log: &str) -> Tap {
    let p = patterns();
    let lines: Vec<&str> = log.lines().map(|l| l.trim_end_matches('\r')).collect();
    let node_style = lines
        .iter()
        .any(|l| l.trim_start().starts_with("# Subtest:"));
    let mut points: Vec<Point> = Vec::new();
    let mut summary = Counts::default();
    // Whether the producer said how many failed (`# fail N`), and where its last word was.
    let mut fail_said = false;
    let mut summary_at = 0;
    let mut above: Vec<&str> = Vec::new();
    let mut group: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some(c) = p.point.captures(line) else {
            if let Some(s) = p.summary.captures(line) {
                let n: u64 = s[2].parse().unwrap_or(0);
                summary_at = i;
                match &s[1] {
                    "pass" => summary.passed = summary.passed.saturating_add(n),
                    "fail" | "cancelled" => {
                        fail_said |= &s[1] == "fail";
                        summary.failed = summary.failed.saturating_add(n)
                    }
                    "tests" => {}
                    _ => summary.skipped = summary.skipped.saturating_add(n),
                }
            } else if line.trim() == "# ok" {
                // tape's last word when none failed (it prints `# fail  N` otherwise).
                fail_said = true;
                summary_at = i;
            } else if !line.trim_start().starts_with("# Subtest:") && !p.plan.is_match(line) {
                above.push(line);
            }
            continue;
        };
        // tape's test name: the `# name` comment just above its first assertion.
        if !node_style {
            if let Some(prev) = i.checked_sub(2).map(|j| lines[j]) {
                if let Some(name) = prev.strip_prefix("# ") {
                    if !p.summary.is_match(prev) {
                        group = Some(name.trim().to_string());
                    }
                }
            }
        }
        let indent = c[1].len();
        let text = c.get(3).map_or("", |m| m.as_str());
        let (name, directive) = match p.directive.captures(text) {
            Some(d) => (
                text[..d.get(0).map_or(text.len(), |m| m.start())].trim(),
                Some(d[1].to_ascii_lowercase()),
            ),
            None => (text, None),
        };
        let kind = match (&c[2], directive) {
            (_, Some(_)) => Kind::Skipped,
            ("ok", None) => Kind::Passed,
            _ => Kind::Failed,
        };
        // Its YAML block, indented deeper than the point, from `---` to `...`.
        let mut yaml: Vec<&str> = Vec::new();
        if lines.get(i).is_some_and(|l| l.trim() == "---") {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim() != "..." {
                yaml.push(lines[j]);
                j += 1;
            }
            i = (j + 1).min(lines.len());
        }
        points.push(Point {
            indent,
            kind,
            name: name.to_string(),
            group: group.clone(),
            yaml_error: yaml_error(&yaml, name),
            above_error: errors::first_error(&above).filter(|l| !errors::is_generic(l)),
        });
        above.clear();
    }
    if points.is_empty() {
        return Tap {
            counts: summary,
            failed: Vec::new(),
        };
    }
    let mut tap = leaves(points);
    // A producer that closed its stream saying none failed (`# fail 0`, tape's `# ok`, after
    // every point)
    // counted its own assertions: a `not ok` line among them was printed by a test, as data
    // (a test of a TAP reporter, a log line), not by the producer.
    let closed = summary_at > 0 && !lines[summary_at..].iter().any(|l| p.point.is_match(l));
    if fail_said && summary.failed == 0 && closed {
        tap.counts.failed = 0;
        tap.failed.clear();
    }
    tap
}

/// What is wrong with the stream's plan, if anything: at the top level (no indent), a plan
/// `1..N` before or after its N test points, once per stream (a suite that runs two producers
/// prints two). A stream that ends after its points with no plan, or whose plan and points
/// disagree, came from a producer that stopped part way (a process that exited early, with
/// exit 0): TAP harnesses fail it, and so does gatekit. Read the whole stream: a tail that
/// lost its head may have lost a leading plan.
pub fn plan_problem(log: &str) -> Option<String> {
    let p = patterns();
    let plan_of = |line: &str| -> Option<u64> {
        let n = line.strip_prefix("1..")?;
        let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let mut count: u64 = 0;
    let mut leading: Option<u64> = None;
    let points = |n: u64| crate::text::plural(n as usize, "test point");
    for line in log.lines().map(|l| l.trim_end_matches('\r')) {
        if p.version.is_match(line) {
            // A new stream: the one before must have closed.
            if count > 0 && leading != Some(count) {
                return Some(match leading {
                    Some(m) => format!("its plan said 1..{m} but {} came", points(count)),
                    None => format!("it gave no plan after {}", points(count)),
                });
            }
            (count, leading) = (0, None);
            continue;
        }
        if p.plan.is_match(line) && !line.starts_with(' ') {
            let Some(n) = plan_of(line.trim_end()) else {
                continue;
            };
            match leading {
                // A stream's leading plan, met by its points: this plan starts the next one.
                Some(m) if m == count => (count, leading) = (0, Some(n)),
                Some(m) if count > 0 => {
                    return Some(format!("its plan said 1..{m} but {} came", points(count)))
                }
                Some(_) => leading = Some(n),
                None if count == 0 => leading = Some(n),
                None if n == count => count = 0,
                None => return Some(format!("its plan 1..{n} came after {}", points(count))),
            }
            continue;
        }
        if p.point.captures(line).is_some_and(|c| c[1].is_empty()) {
            count += 1;
        }
    }
    match (leading, count) {
        (Some(m), c) if m != c => Some(format!(
            "its plan said 1..{m} but it ended after {}",
            points(c)
        )),
        (None, c) if c > 0 => Some(format!(
            "it ended after {} with no plan: the producer stopped part way",
            points(c)
        )),
        _ => None,
    }
}

/// Counts and names the leaves: a point is a parent when the point before it is deeper (its
/// subtests), and a leaf's parents are the shallower points after it.
fn leaves(points: Vec<Point>) -> Tap {
    let mut tap = Tap::default();
    let mut named: Vec<(Kind, String, Option<String>)> = Vec::new();
    // Walked backwards, a test's parents come before it: a stack of the enclosing names.
    let mut parents: Vec<(usize, String)> = Vec::new();
    for (n, point) in points.iter().enumerate().rev() {
        while parents.last().is_some_and(|(d, _)| *d >= point.indent) {
            parents.pop();
        }
        let is_parent = n > 0 && points[n - 1].indent > point.indent;
        if !is_parent {
            let mut parts: Vec<&str> = point.group.iter().map(String::as_str).collect();
            parts.extend(parents.iter().map(|(_, name)| name.as_str()));
            parts.push(&point.name);
            let error = point.yaml_error.clone().or(point.above_error.clone());
            named.push((point.kind, parts.join(" > "), error));
        }
        parents.push((point.indent, point.name.clone()));
    }
    named.reverse();
    for (kind, name, error) in named {
        let c = &mut tap.counts;
        match kind {
            Kind::Passed => c.passed = c.passed.saturating_add(1),
            Kind::Skipped => c.skipped = c.skipped.saturating_add(1),
            Kind::Failed => {
                c.failed = c.failed.saturating_add(1);
                tap.failed.push(Failed { name, error });
            }
        }
    }
    tap
}

/// The line that says why in a point's YAML diagnostics, or `None` when they say nothing
/// more than that it failed.
pub(crate) fn yaml_error(yaml: &[&str], point_name: &str) -> Option<String> {
    let key = |k: &str| -> Option<(usize, String)> {
        yaml.iter().enumerate().find_map(|(i, l)| {
            let rest = l.trim_start().strip_prefix(k)?.strip_prefix(':')?;
            Some((i, unquote(rest.trim())))
        })
    };
    // A block value (`|-`): its first line that is not blank.
    let block = |i: usize| -> Option<String> {
        yaml[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    let value = |k: &str| -> Option<String> {
        let (i, v) = key(k)?;
        if v == "|-" || v == "|" || v == ">-" || v == ">" {
            block(i)
        } else {
            Some(v)
        }
    };
    if let Some(message) = value("error").filter(|m| !errors::is_generic(m)) {
        let line = match value("name") {
            Some(name) if !message.starts_with(&name) => format!("{name}: {message}"),
            _ => message,
        };
        return Some(crate::text::clip(&line, 200));
    }
    // tape: a thrown error's stack starts with its type; an assertion's only repeats its name.
    if let Some(first) = value("stack").filter(|s| errors::is_error_line(s)) {
        if first != format!("Error: {point_name}") {
            return Some(crate::text::clip(&first, 200));
        }
    }
    let operator = value("operator")?;
    let line = match (value("expected"), value("actual")) {
        (Some(e), Some(a)) => format!("{operator}: expected {e}, actual {a}"),
        _ => operator,
    };
    Some(crate::text::clip(&line, 200))
}

fn unquote(v: &str) -> String {
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.replace("''", "'").replace("\\\"", "\"");
        }
    }
    v.to_string()
}

#[cfg(test)]
mod plan_tests {
    use super::{plan_problem, read};

    #[test]
    fn a_not_ok_line_a_test_printed_is_no_failure_when_the_producer_closed_with_none() {
        // tape's stream, with a test that logs a TAP-looking line of its own.
        let log = "TAP version 13\n# logs\nnot ok 1 - remote check failed\n  ---\n  error: upstream\n  ...\nok 1 should be equal\nok 2 should be truthy\n\n1..2\n# tests 2\n# pass  2\n\n# ok\n";
        for closed in [log.to_string(), log.replace("# ok\n", "# fail  0\n")] {
            let tap = read(&closed);
            assert_eq!((tap.counts.passed, tap.counts.failed), (2, 0), "{closed}");
            assert!(tap.failed.is_empty());
        }
        // Without the producer's word on failures, or with failures it counted, or with points
        // after its summary, the line stands.
        assert_eq!(read(&log.replace("# ok\n", "")).counts.failed, 1);
        let failing = log.replace("# ok\n", "# fail  1\n");
        assert_eq!(read(&failing).failed.len(), 1);
        let more = format!("{log}not ok 3 - later\n");
        assert_eq!(read(&more).counts.failed, 2);
    }

    #[test]
    fn a_stream_whose_plan_holds_has_no_problem() {
        // tape: the plan at the end; a TAP producer with its plan first; two streams.
        assert_eq!(
            plan_problem("TAP version 13\n# adds\nok 1 a\nok 2 b\n\n1..2\n# tests 2\n"),
            None
        );
        assert_eq!(plan_problem("1..2\nok 1\nnot ok 2\n"), None);
        assert_eq!(
            plan_problem("TAP version 13\nok 1\n1..1\nTAP version 13\nok 1\nok 2\n1..2\n"),
            None
        );
        assert_eq!(plan_problem("1..1\nok 1\n1..2\nok 1\nok 2\n"), None);
        // node: subtests indented with plans of their own; only the top level counts.
        let node = "TAP version 13\n# Subtest: f\n    # Subtest: a\n    ok 1 - a\n    1..1\nok 1 - f\n1..1\n";
        assert_eq!(plan_problem(node), None);
        assert_eq!(plan_problem("1..0 # SKIP nothing here\n"), None);
        assert_eq!(plan_problem("no tap at all\n"), None);
    }

    #[test]
    fn a_stream_that_stopped_part_way_is_a_problem() {
        let cut = "TAP version 13\n# adds\nok 1 a\nok 2 b\n";
        assert_eq!(
            plan_problem(cut).as_deref(),
            Some("it ended after 2 test points with no plan: the producer stopped part way")
        );
        assert_eq!(
            plan_problem("1..5\nok 1\nok 2\n").as_deref(),
            Some("its plan said 1..5 but it ended after 2 test points")
        );
        assert_eq!(
            plan_problem("ok 1\nok 2\n1..3\n").as_deref(),
            Some("its plan 1..3 came after 2 test points")
        );
        assert!(plan_problem("TAP version 13\nok 1\nTAP version 13\nok 1\n1..1\n").is_some());
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Any text, and any mix of TAP's own pieces: read without a panic, and never more
        /// failures named than counted.
        #[test]
        fn any_text_reads_as_tap_without_a_panic(
            text in "((not ok|ok|  ---|  \\.\\.\\.|# Subtest: x|    ok|# pass  |1\\.\\.|  error: \\|-|# SKIP|#|\\PC{0,6}) ?[0-9a-z# ]{0,6}\n){0,30}"
        ) {
            let tap = super::read(&text);
            prop_assert!(tap.failed.len() as u64 <= tap.counts.failed);
            let _ = super::is_tap(&text);
        }
    }
}
