//! Which tests failed and why, read from a test runner's log: the names the runner gives its
//! failed tests, in order and each once, and for each the first lines of its error. Apart from
//! [`crate::counts`] (how many passed and failed), which the judge needs; these only explain.

use std::sync::OnceLock;

use regex::Regex;

use crate::counts::{strip_ansi, tail};
use crate::errors::{self, Failed};
use crate::tap;

/// How each runner names a failed test on a line of its output: the one place that knows,
/// read after the run ([`failed_tests`]) and while it streams (the first-failure reader).
pub(crate) struct NamePatterns {
    pub(crate) cargo: Regex,
    /// `cargo test -q`'s line for a failed test as it ends (the name is in its block too).
    pub(crate) cargo_quiet: Regex,
    nextest: Regex,
    tap: Regex,
    node_spec: Regex,
    pytest: Regex,
    /// pytest's verbose progress line: `path::test[params] FAILED   [ 50%]`.
    pub(crate) pytest_verbose: Regex,
    /// pytest-xdist's (`-v -n 2`): `[gw0] [ 50%] FAILED path::test[params]`.
    pub(crate) pytest_xdist: Regex,
    pytest_sub: Regex,
    unittest: Regex,
    go: Regex,
    pub(crate) jest: Regex,
    pub(crate) vitest: Regex,
    pub(crate) vitest_mark: Regex,
    /// vitest's line for a test file that had failures, above its tests' marks.
    pub(crate) vitest_file: Regex,
    /// A name vitest's verbose reporter gives a test: its file first (`a.test.mjs > adds`).
    pub(crate) vitest_file_name: Regex,
    deno: Regex,
    bun: Regex,
}

pub(crate) fn name_patterns() -> &'static NamePatterns {
    static P: OnceLock<NamePatterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("static pattern");
        NamePatterns {
            cargo: re(r"^(?:test (\S+) \.\.\. FAILED|---- (\S+) stdout ----)\s*$"),
            cargo_quiet: re(r"^(\S+) --- FAILED\s*$"),
            nextest: re(r"^\s*(?:FAIL|TIMEOUT|SIGSEGV|SIGABRT|SIGKILL) \[\s*[\d.]+s\]\s+(?:\(\s*\d+/\d+\)\s+)?(.+?)\s*$"),
            tap: re(r"^\s*not ok \d+(?: -)? (.+?)(?:\s+#\s.*)?\s*$"),
            node_spec: re(r"^\s*✖ (.+?) \([\d.]+m?s\)\s*$"),
            // An id's parameters may hold spaces and ` - ` (`t.py::test_x[a - b]`).
            pytest: re(r"^(?:FAILED|ERROR) (\S+?(?:\[.*?\])?)(?: - .*)?\s*$"),
            pytest_verbose: re(r"^(\S+::\S.*?) (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?\s*$"),
            pytest_xdist: re(r"^\[gw\d+\]\s+\[\s*\d+%\]\s+(?:FAILED|ERROR)\s+(\S+::\S.*?)\s*$"),
            // pytest 9: `SUBFAILED[msg] (i=2) path::test - message`, the description first.
            pytest_sub: re(r"^SUBFAILED(.*?) (\S+::\S+)(?: - .*)?\s*$"),
            // A subtest adds its parameters after the name: `FAIL: test_x (m.T.test_x) (i=2)`.
            unittest: re(r"^(?:FAIL|ERROR): (\S+) \(([^)]+)\)(?: (.+?))?\s*$"),
            go: re(r"^\s*--- FAIL: (\S+)"),
            jest: re(r"^\s*● (.+?)\s*$"),
            vitest: re(r"^\s*FAIL\s+(.+? > .+?)\s*$"),
            vitest_mark: re(r"^\s+[×x] (.+?) \d+m?s\s*$"),
            vitest_file: re(r"^\s*❯ (\S+) \(\d+ tests? \|"),
            vitest_file_name: re(r"^\S+\.[cm]?[jt]sx? > "),
            deno: re(r"^(.+?) \.\.\. FAILED \(\d+(?:\.\d+)?m?s\)\s*$"),
            bun: re(r"^\(fail\) (.+?)(?: \[[\d.]+m?s\])?\s*$"),
        }
    })
}

/// The names of the tests that failed, where the runner names them, in order, without repeats.
pub fn failed_tests(log: &str) -> Vec<String> {
    if tap::is_tap(tail(log)) {
        return tap::read(tail(log))
            .failed
            .into_iter()
            .map(|f| f.name)
            .collect();
    }
    let p = name_patterns();
    let mut names: Vec<String> = Vec::new();
    let mut vitest_failed = false;
    let mut vitest_marked: Vec<String> = Vec::new();
    let mut push = |name: String| {
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    };
    for line in tail(log).lines() {
        let line = strip_ansi(line.trim_end_matches('\r'));
        let line = line.as_str();
        if let Some(c) = p.cargo.captures(line) {
            // `test NAME ... FAILED`, or with `-q` only the `---- NAME stdout ----` header.
            if let Some(name) = c.get(1).or_else(|| c.get(2)) {
                push(name.as_str().to_string());
            }
        } else if let Some(c) = p.nextest.captures(line) {
            push(c[1].to_string());
        } else if let Some(c) = p.tap.captures(line) {
            push(c[1].to_string());
        } else if let Some(c) = p.node_spec.captures(line) {
            push(c[1].to_string());
        } else if let Some(c) = p.pytest.captures(line) {
            push(c[1].to_string());
        } else if let Some(c) = p.pytest_sub.captures(line) {
            // Named as pytest heads its failure: `path::test [msg] (i=2)`.
            push(format!("{} {}", &c[2], c[1].trim()).trim_end().to_string());
        } else if let Some(c) = p.unittest.captures(line) {
            // Python 3.11+ writes `test_x (mod.Class.test_x)`, older ones `test_x (mod.Class)`.
            let (method, owner) = (&c[1], &c[2]);
            let test = if owner.ends_with(&format!(".{method}")) {
                owner.to_string()
            } else {
                format!("{owner}.{method}")
            };
            // A subtest is named with its parameters: which of its cases failed.
            match c.get(3) {
                Some(sub) => push(format!("{test} {}", sub.as_str())),
                None => push(test),
            }
        } else if let Some(c) = p.go.captures(line) {
            push(c[1].to_string());
        } else if let Some(c) = p.jest.captures(line) {
            if !c[1].starts_with("Console") {
                push(c[1].to_string());
            }
        } else if let Some(c) = p.vitest.captures(line) {
            vitest_failed = true;
            push(c[1].to_string());
        } else if let Some(c) = p.vitest_mark.captures(line) {
            vitest_marked.push(c[1].to_string());
        } else if let Some(c) = p.deno.captures(line).or_else(|| p.bun.captures(line)) {
            push(c[1].to_string());
        }
    }
    // vitest names a failed test twice: `× math > adds` in the tree and `FAIL  file > math > adds`
    // below it. The second, with its file, is the name; the marks count only when it is absent.
    if !vitest_failed {
        for name in vitest_marked {
            push(name);
        }
    }
    names
}

/// For each of `failed` (the first [`WHY_TESTS`] of them), the line in the log that says why
/// it failed: found under a line that mentions it (its full name or its last part), before the
/// next line that mentions another failed test or starts another section.
pub fn errors_in_log(log: &str, failed: &[Failed]) -> Vec<Option<String>> {
    let lines: Vec<String> = tail(log)
        .lines()
        .map(|l| strip_ansi(l.trim_end_matches('\r')))
        .collect();
    let keys: Vec<Vec<String>> = failed.iter().map(|f| mention_keys(&f.name)).collect();
    let mut out = Vec::new();
    for (i, own) in keys.iter().enumerate() {
        if i >= WHY_TESTS {
            out.push(None);
            continue;
        }
        let others: Vec<&str> = keys
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, k)| k.iter().map(String::as_str))
            .filter(|k| !own.iter().any(|o| o.contains(k)))
            .collect();
        let mut found = None;
        for (at, line) in lines.iter().enumerate() {
            if !own.iter().any(|k| line.contains(k.as_str())) {
                continue;
            }
            let end = block_end(&lines, at, &others);
            found = errors::first_error(&lines[at..end]);
            if found.is_some() {
                break;
            }
        }
        out.push(found);
    }
    out
}

/// How many lines under a mention of a test may say why it failed.
const BLOCK_LINES: usize = 80;

/// Where the text about one failure that starts at `from` ends: at a line that mentions
/// another failed test, or a pytest section line (`____ name ____`, `==== ... ====`).
fn block_end(lines: &[String], from: usize, others: &[&str]) -> usize {
    let limit = (from + BLOCK_LINES).min(lines.len());
    (from + 1..limit)
        .find(|&i| {
            let line = lines[i].trim();
            others.iter().any(|o| line.contains(o))
                || line.starts_with("____")
                || line.starts_with("====")
        })
        .unwrap_or(limit)
}

/// The log's first error lines (at most three), for a failure that names no test.
pub fn log_errors(log: &str) -> Vec<String> {
    let lines: Vec<String> = tail(log)
        .lines()
        .map(|l| strip_ansi(l.trim_end_matches('\r')))
        .collect();
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < 3 && at < lines.len() {
        let Some(i) = (at..lines.len()).find(|&i| errors::is_error_line(lines[i].trim())) else {
            break;
        };
        let end = block_end(&lines, i, &[]);
        if let Some(line) = errors::first_error(&lines[i..end]) {
            if !out.contains(&line) {
                out.push(line);
            }
        }
        at = end.max(i + 1);
    }
    out
}

/// How many failed tests a summary explains by name.
pub const WHY_TESTS: usize = 5;

/// A failed test's full name and its last part, each at least 4 characters long.
fn mention_keys(name: &str) -> Vec<String> {
    let mut keys = vec![name.to_string()];
    // The part after the last separator runners put in a test's full name; a path's dots are
    // not one (`a.test.mjs`), a Python name's are (`mod.T.test_x`). pytest heads a failure with
    // the name and its parameters only (`test_x[a b]`).
    let seps: &[&str] = if name.contains('/') {
        &["::", " > ", " › "]
    } else {
        &["::", " > ", " › ", "."]
    };
    let base = name.split(" (").next().unwrap_or(name);
    let base = match base.find('[') {
        // The parameters may hold any separator: the name ends where they start.
        Some(b) => {
            let (head, params) = base.split_at(b);
            let last = seps
                .iter()
                .filter_map(|s| head.rsplit_once(s).map(|(_, l)| l))
                .min_by_key(|l| l.len())
                .unwrap_or(head);
            let short = format!("{last}{params}");
            if short.chars().count() >= 4 && short != name {
                keys.push(short);
            }
            return keys;
        }
        None => base,
    };
    let mut seps_all: Vec<&str> = seps.to_vec();
    seps_all.push(" ");
    let last = seps_all
        .iter()
        .filter_map(|s| base.rsplit_once(s).map(|(_, l)| l))
        .min_by_key(|l| l.len())
        .unwrap_or(base);
    if last.chars().count() >= 4 && last != name {
        keys.push(last.to_string());
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{read, Counts};

    fn c(passed: u64, failed: u64, skipped: u64) -> Option<Counts> {
        Some(Counts {
            passed,
            failed,
            skipped,
        })
    }

    #[test]
    fn cargo_test_lines_add_up_across_binaries() {
        let log = "running 3 tests\ntest a ... ok\ntest b::c ... FAILED\n\
            test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
            test result: ok. 5 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n";
        assert_eq!(read(log), c(7, 1, 1));
        assert_eq!(failed_tests(log), ["b::c"]);
    }

    #[test]
    fn cargo_test_quiet_names_failures_by_their_output_header() {
        let log = "running 3 tests\n.F.\nfailures:\n\n---- tests::it_breaks stdout ----\n\nthread panicked\n\nfailures:\n    tests::it_breaks\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(read(log), c(2, 1, 0));
        assert_eq!(failed_tests(log), ["tests::it_breaks"]);
    }

    #[test]
    fn nextest_summary() {
        let log = "        FAIL [   0.004s] mycrate::tests it_breaks\n------------\n     Summary [   0.012s] 6 tests run: 4 passed, 2 failed, 1 skipped\n        FAIL [   0.004s] mycrate::tests it_breaks\n";
        assert_eq!(read(log), c(4, 2, 1));
        assert_eq!(failed_tests(log), ["mycrate::tests it_breaks"]);
    }

    #[test]
    fn node_test_runner_tap_and_spec() {
        let tap = "not ok 2 - rejects empty\n# tests 5\n# suites 0\n# pass 4\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 50\n";
        assert_eq!(read(tap), c(4, 1, 0));
        assert_eq!(failed_tests(tap), ["rejects empty"]);
        let spec = "✔ works (0.5ms)\n✖ rejects empty (1.2ms)\nℹ tests 5\nℹ pass 4\nℹ fail 1\nℹ skipped 2\n";
        assert_eq!(read(spec), c(4, 1, 2));
        assert_eq!(failed_tests(spec), ["rejects empty"]);
    }

    #[test]
    fn pytest_summary() {
        let log = "FAILED tests/test_x.py::test_y - AssertionError: no\n==== 1 failed, 3 passed, 2 skipped in 0.12s ====\n";
        assert_eq!(read(log), c(3, 1, 2));
        assert_eq!(failed_tests(log), ["tests/test_x.py::test_y"]);
        assert_eq!(
            read("============ 12 passed in 1.01s ============\n"),
            c(12, 0, 0)
        );
    }

    #[test]
    fn pytest_9_subtests_keep_the_tests_counts_and_name_each_failed_subtest() {
        // The closing line with subtests, as pytest 9 printed it for a real suite.
        let log = "..uF\nSUBFAILED[item] (i=2) t.py::test_s - assert 2 != 2\n\
            FAILED t.py::test_s - contains 1 failed subtest\n\
            4 failed, 16 passed, 740 subtests passed in 1.60s\n";
        assert_eq!(read(log), c(16, 4, 0));
        assert_eq!(
            failed_tests(log),
            ["t.py::test_s [item] (i=2)", "t.py::test_s"]
        );
        // `-qq` prints only marks, where `u` is a subtest that passed or failed: no guess.
        assert_eq!(read("..uuF.  [100%]\n"), None);
        assert_eq!(read("..sF.  [100%]\n"), c(3, 1, 1));
    }

    #[test]
    fn vitest_names_a_failed_test_once() {
        let log = "   × math > adds 1ms\n FAIL  a.test.mjs > math > adds\n";
        assert_eq!(failed_tests(log), ["a.test.mjs > math > adds"]);
        // Without the FAIL block, the tree's marks name them.
        assert_eq!(failed_tests("   × adds 1ms\n   ✓ subs 0ms\n"), ["adds"]);
    }

    #[test]
    fn unittest_ran_and_result() {
        let ok = "....\n----\nRan 4 tests in 0.001s\n\nOK (skipped=1)\n";
        assert_eq!(read(ok), c(3, 0, 1));
        let bad = "FAIL: test_b (pkg.TestX.test_b)\nERROR: test_c (pkg.TestX)\nRan 5 tests in 0.002s\n\nFAILED (failures=1, errors=1)\n";
        assert_eq!(read(bad), c(3, 2, 0));
        assert_eq!(failed_tests(bad), ["pkg.TestX.test_b", "pkg.TestX.test_c"]);
    }

    #[test]
    fn go_test_verbose_lines() {
        let log = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\n    --- SKIP: TestB/sub (0.00s)\nFAIL\n";
        assert_eq!(read(log), c(1, 1, 1));
        assert_eq!(failed_tests(log), ["TestB"]);
    }

    #[test]
    fn jest_vitest_mocha() {
        assert_eq!(
            read("Tests:       1 failed, 1 skipped, 4 passed, 6 total\n"),
            c(4, 1, 1)
        );
        assert_eq!(read(" Tests  4 passed | 1 failed (5)\n"), c(4, 1, 0));
        assert_eq!(read("  5 passing (20ms)\n  1 failing\n"), c(5, 1, 0));
        assert_eq!(
            failed_tests("  ● math › adds\n  ● Console\n"),
            ["math › adds"]
        );
    }

    #[test]
    fn plain_line_with_optional_label() {
        assert_eq!(read("12 passed, 0 failed\n"), c(12, 0, 0));
        assert_eq!(read("smoke: 3 passed, 1 failed, 2 skipped\n"), c(3, 1, 2));
        // Not alone on its line: not a summary.
        assert_eq!(read("we expect 3 passed, 1 failed later\n"), None);
    }

    #[test]
    fn unknown_output_has_no_counts() {
        assert_eq!(read("all good\n"), None);
        assert_eq!(read(""), None);
    }

    #[test]
    fn colour_codes_do_not_hide_a_summary() {
        assert_eq!(read("\x1b[32m12 passed, 0 failed\x1b[0m\n"), c(12, 0, 0));
    }

    #[test]
    fn cargo_test_closing_lines_give_passed_failed_and_ignored_in_that_order() {
        let log = "test result: FAILED. 5 passed; 2 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.10s\n";
        let c = read(log).expect("counts");
        assert_eq!((c.passed, c.failed, c.skipped), (5, 2, 3));
    }
}
