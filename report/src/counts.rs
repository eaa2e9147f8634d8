//! Pass/fail/skip counts, read from a test runner's closing lines (the failed tests' names
//! and why they failed are the `failures` module).
//!
//! A suite is judged by its exit code; the counts are for the reader ("140 pass -> 139 passed, 1 failed"),
//! so a runner we do not recognise simply yields no counts (shown as unknown) rather than a
//! guess. Each runner's summary is matched precisely: cargo test, nextest, node's test runner
//! (spec, TAP, and dot, whose marks cannot tell a skip from a pass), pytest (`-q` and default;
//! with `-qq`, which prints no summary, its progress marks), unittest, go test, jest, vitest,
//! mocha, Deno and Bun, go test `-v`, and last the plain `N passed, N failed` alone on a line. A runner's
//! summary always wins over plain lines, so a suite script that prints its own small tally
//! cannot hide the runner's real count. A log holding several runs of runners (a script that
//! runs two suites, cargo's one line per test binary) adds them up. The tests read fixtures
//! captured from each real runner (`report/tests/fixtures/counts/`).

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Tests passed, failed and skipped, as the runner reported them.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Counts {
    /// All three summed; saturating, because counts can come from a crafted report.
    pub fn total(&self) -> u64 {
        self.passed
            .saturating_add(self.failed)
            .saturating_add(self.skipped)
    }

    fn add(&mut self, other: Counts) {
        self.passed = self.passed.saturating_add(other.passed);
        self.failed = self.failed.saturating_add(other.failed);
        self.skipped = self.skipped.saturating_add(other.skipped);
    }
}

impl std::fmt::Display for Counts {
    /// `12 passed`, `11 passed, 1 failed`, `10 passed, 2 skipped`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed", self.passed)?;
        if self.failed > 0 {
            write!(f, ", {} failed", self.failed)?;
        }
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

struct Patterns {
    cargo: Regex,
    nextest: Regex,
    node: Regex,
    pytest: Regex,
    pytest_item: Regex,
    unittest_ran: Regex,
    unittest_end: Regex,
    go: Regex,
    jest: Regex,
    vitest: Regex,
    mocha: Regex,
    plain: Regex,
    num_word: Regex,
    pytest_marks: Regex,
    node_dots: Regex,
    deno: Regex,
    bun_item: Regex,
    bun_ran: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("static pattern");
        Patterns {
            cargo: re(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored;"),
            nextest: re(r"^\s*Summary \[[^\]]*\]\s+\d+ tests? run: (.*)$"),
            // node's TAP and spec summaries, and tape's (`# pass  5`, two spaces).
            node: re(r"^(?:#|ℹ) (pass|fail|skipped|todo|cancelled)\s+(\d+)\s*$"),
            // Default form inside `=` rules, or `-q`'s bare line; every item a known word.
            // pytest 9 adds `N subtests passed` (and xfailed, skipped) beside the tests' counts.
            pytest: re(r"^(?:=+ )?((?:\d+ (?:subtests )?(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+) in [\d.]+s(?: \([^)]*\))?(?: =+)?\s*$"),
            pytest_item: re(r"(\d+) (subtests )?(passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"),
            unittest_ran: re(r"^Ran (\d+) tests? in [\d.]+s\s*$"),
            unittest_end: re(r"^(OK|FAILED)(?: \((.*)\))?\s*$"),
            go: re(r"^\s*--- (PASS|FAIL|SKIP): "),
            jest: re(r"^Tests:\s+(.*\d+ total)\s*$"),
            vitest: re(r"^\s*Tests\s+(\d+ (?:passed|failed|skipped).*)\(\d+\)\s*$"),
            mocha: re(r"^\s+(\d+) (passing|failing|pending)\b"),
            plain: re(r"^(?:[\w-]+:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$"),
            num_word: re(r"(\d+) (\w+)"),
            pytest_marks: re(r"^[.FEsxXuy-]+\s+\[\s*\d+%\]\s*$"),
            node_dots: re(r"^[.X]+$"),
            deno: re(r"^(?:ok|FAILED) \| (\d+ passed.*?)(?: \(\d+(?:\.\d+)?m?s\))?\s*$"),
            bun_item: re(r"^\s*(\d+) (pass|fail|skip|todo)\s*$"),
            bun_ran: re(r"^\s*Ran \d+ tests? across \d+ files?\."),
        }
    })
}

/// How much of a log's end is read: summaries are at the end, and logs can be huge.
const TAIL_BYTES: usize = 1 << 20;

pub(crate) fn tail(text: &str) -> &str {
    if text.len() <= TAIL_BYTES {
        return text;
    }
    let mut start = text.len() - TAIL_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Reads the counts from a log; `None` when no known summary line is there.
pub fn read(log: &str) -> Option<Counts> {
    let p = patterns();
    let mut total = Counts::default();
    let mut found = false;
    let mut go = Counts::default();
    let mut go_found = false;
    let mut node = Counts::default();
    let mut node_found = false;
    let mut unittest_ran: Option<u64> = None;
    // Fallbacks, used only when no runner summary was found: pytest `-qq` progress marks, node's
    // dot reporter, plain lines; and Bun's items, which count once its `Ran N tests` line is seen.
    let mut marks = Counts::default();
    let mut marks_found = false;
    // pytest marks a subtest `u` whether it passed or failed: marks holding one cannot be counted.
    let mut marks_unsure = false;
    let mut dots = Counts::default();
    let mut dots_found = false;
    let mut plain = Counts::default();
    let mut plain_found = false;
    let mut bun = Counts::default();
    let num = |s: &str| s.parse::<u64>().unwrap_or(0);

    for line in tail(log).lines() {
        let line = line.trim_end_matches('\r');
        let line_plain = strip_ansi(line);
        let line = line_plain.as_str();
        if let Some(c) = p.cargo.captures(line) {
            total.add(Counts {
                passed: num(&c[1]),
                failed: num(&c[2]),
                skipped: num(&c[3]),
            });
            found = true;
        } else if let Some(c) = p.nextest.captures(line) {
            total.add(words(&c[1]));
            found = true;
        } else if let Some(c) = p.node.captures(line) {
            node_found = true;
            let n = num(&c[2]);
            match &c[1] {
                "pass" => node.passed += n,
                "fail" | "cancelled" => node.failed += n,
                _ => node.skipped += n,
            }
        } else if let Some(c) = p.pytest.captures(line) {
            let mut counts = Counts::default();
            for item in p.pytest_item.captures_iter(&c[1]) {
                // Subtests are counted apart by pytest (`740 subtests passed`), and only at some
                // verbosities; the tests' own counts are the ones it always prints, and a failed
                // subtest is already among them (`SUBFAILED` counts as failed).
                if item.get(2).is_some() {
                    continue;
                }
                let n = num(&item[1]);
                match &item[3] {
                    "passed" | "xpassed" => counts.passed += n,
                    "failed" | "error" | "errors" => counts.failed += n,
                    "skipped" | "xfailed" => counts.skipped += n,
                    // Deselected tests were not run; warnings and reruns are not tests.
                    _ => {}
                }
            }
            total.add(counts);
            found = true;
        } else if let Some(c) = p.unittest_ran.captures(line) {
            unittest_ran = Some(num(&c[1]));
        } else if let (Some(ran), Some(c)) = (unittest_ran, p.unittest_end.captures(line)) {
            let mut failed = 0;
            let mut skipped = 0;
            if let Some(detail) = c.get(2) {
                for part in detail.as_str().split(',') {
                    let Some((key, value)) = part.trim().split_once('=') else {
                        continue;
                    };
                    let n = num(value.trim());
                    match key.trim() {
                        "failures" | "errors" | "unexpected successes" => failed += n,
                        "skipped" | "expected failures" => skipped += n,
                        _ => {}
                    }
                }
            }
            total.add(Counts {
                passed: ran.saturating_sub(failed + skipped),
                failed,
                skipped,
            });
            unittest_ran = None;
            found = true;
        } else if let Some(c) = p.go.captures(line) {
            go_found = true;
            match &c[1] {
                "PASS" => go.passed += 1,
                "FAIL" => go.failed += 1,
                _ => go.skipped += 1,
            }
        } else if let Some(c) = p.jest.captures(line) {
            total.add(words(&c[1]));
            found = true;
        } else if let Some(c) = p.vitest.captures(line) {
            total.add(words(&c[1]));
            found = true;
        } else if let Some(c) = p.mocha.captures(line) {
            let n = num(&c[1]);
            match &c[2] {
                "passing" => total.passed += n,
                "failing" => total.failed += n,
                _ => total.skipped += n,
            }
            found = true;
        } else if let Some(c) = p.deno.captures(line) {
            let mut counts = Counts::default();
            for item in p.num_word.captures_iter(&c[1]) {
                let n = num(&item[1]);
                match &item[2] {
                    "passed" => counts.passed += n,
                    "failed" => counts.failed += n,
                    "ignored" => counts.skipped += n,
                    _ => {}
                }
            }
            total.add(counts);
            found = true;
        } else if let Some(c) = p.bun_item.captures(line) {
            let n = num(&c[1]);
            match &c[2] {
                "pass" => bun.passed += n,
                "fail" => bun.failed += n,
                _ => bun.skipped += n,
            }
        } else if p.bun_ran.is_match(line) {
            total.add(std::mem::take(&mut bun));
            found = true;
        } else if p.pytest_marks.is_match(line) {
            marks_found = true;
            for ch in line.chars() {
                match ch {
                    '.' | 'X' => marks.passed += 1,
                    'F' | 'E' => marks.failed += 1,
                    's' | 'x' => marks.skipped += 1,
                    'u' | 'y' | '-' => marks_unsure = true,
                    _ => {}
                }
            }
        } else if p.node_dots.is_match(line) {
            dots_found = true;
            for ch in line.chars() {
                match ch {
                    '.' => dots.passed += 1,
                    _ => dots.failed += 1,
                }
            }
        } else if let Some(c) = p.plain.captures(line) {
            plain.add(Counts {
                passed: num(&c[1]),
                failed: num(&c[2]),
                skipped: c.get(3).map(|m| num(m.as_str())).unwrap_or(0),
            });
            plain_found = true;
        }
    }
    if node_found {
        total.add(node);
        found = true;
    }
    if go_found {
        total.add(go);
        found = true;
    }
    if !found {
        // No runner's own summary: the weaker evidence, in order of how much it says.
        for (counts, seen) in [
            (marks, marks_found && !marks_unsure),
            (dots, dots_found),
            (plain, plain_found),
        ] {
            if seen {
                return Some(counts);
            }
        }
    }
    found.then_some(total)
}

/// Counts from a list like `3 passed, 1 failed, 2 skipped, 6 total` or `4 passed | 1 failed`.
fn words(list: &str) -> Counts {
    let mut c = Counts::default();
    for item in patterns().num_word.captures_iter(list) {
        let n: u64 = item[1].parse().unwrap_or(0);
        match &item[2] {
            "passed" => c.passed += n,
            "failed" | "timed" => c.failed += n,
            "skipped" | "todo" | "pending" => c.skipped += n,
            _ => {}
        }
    }
    c
}

/// Removes ANSI colour sequences, which runners add even to logs when forced to.
pub(crate) fn strip_ansi(line: &str) -> String {
    if line.contains('\x1b') {
        crate::color::strip(line)
    } else {
        line.to_string()
    }
}
