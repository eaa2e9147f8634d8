//! The streaming reader on what real runners printed (captured once, in `captured/`), each
//! fed line by line as it streamed: where it stops, and what it names.

use std::time::Duration;

use super::{FirstFailure, Reader};

/// Feeds `log` a line at a time: the first failure and the (0-based) line it stopped at.
fn stream(log: &str, tap: bool) -> Option<(FirstFailure, usize)> {
    let mut reader = Reader::new(tap);
    for (i, line) in log.lines().enumerate() {
        if reader.line(line, Duration::from_millis(i as u64)) {
            return Some((reader.found().cloned().unwrap(), i));
        }
    }
    assert!(reader.found().is_none());
    None
}

fn line_of(log: &str, at: usize) -> &str {
    log.lines().nth(at).unwrap()
}

#[test]
fn node_test_tap_stops_at_the_end_of_the_first_leafs_yaml_named_as_after_the_run() {
    let log = include_str!("captured/node-tap.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "math > adds");
    assert_eq!(
        found.error.as_deref(),
        Some("AssertionError: Expected values to be strictly equal:")
    );
    // The `...` that closes its block, long before the rest of the file.
    assert_eq!(line_of(log, at).trim(), "...");
    assert!(at < 35, "{at}");
    assert_eq!(found.secs, at as f64 / 1000.0);
    // The after-the-run reader names the same test with the same line: one place knows TAP.
    let after = crate::tap::read(log).failed.remove(0);
    assert_eq!((after.name, after.error), (found.test, found.error));
}

#[test]
fn tape_names_the_test_by_its_comment_and_reads_its_operator() {
    let log = include_str!("captured/tape.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "math > adds");
    assert_eq!(found.error.as_deref(), Some("equal: expected 3, actual 2"));
    assert_eq!(line_of(log, at).trim(), "...");
    let after = crate::tap::read(log).failed.remove(0);
    assert_eq!((after.name, after.error), (found.test, found.error));
}

#[test]
fn a_skipped_or_todo_tap_point_is_no_failure_and_a_point_without_yaml_ends_at_the_next_line() {
    let log = "TAP version 13\nnot ok 1 - later # TODO not yet\nok 2 - fine\nnot ok 3 - bare\nok 4 - next\n";
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "bare");
    assert_eq!(at, 4);
    // node's output comments above its first subtest are no tape group.
    let log = "TAP version 13\n# starting up\n# Subtest: math\n    # Subtest: adds\n    not ok 1 - adds\n    ok 2 - other\n";
    assert_eq!(stream(log, false).unwrap().0.test, "math > adds");
    // Without `TAP version`, a suite that says `tap = true` is read as TAP all the same.
    let (found, _) = stream("not ok 1 - bare\n# next\n", true).unwrap();
    assert_eq!(found.test, "bare");
}

#[test]
fn cargo_test_stops_at_the_failed_line_before_the_binarys_end() {
    let log = include_str!("captured/cargo.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "tests::adds");
    // Its panic is printed only once every test of the binary has ended.
    assert_eq!(found.error, None);
    assert_eq!(line_of(log, at), "test tests::adds ... FAILED");
    // With --nocapture the panic above it is its error line.
    let log = include_str!("captured/cargo-nocapture.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "tests::adds");
    let error = found.error.unwrap();
    assert!(
        error.starts_with("thread 'tests::adds'")
            && error.ends_with("assertion `left == right` failed"),
        "{error}"
    );
    assert_eq!(line_of(log, at), "test tests::adds ... FAILED");
    // -q names it as it ends too.
    let log = include_str!("captured/cargo-q.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "tests::adds");
    assert_eq!(
        at,
        log.lines().position(|l| l.contains("--- FAILED")).unwrap()
    );
}

#[test]
fn cargo_tests_block_is_read_to_its_panic_when_no_line_named_the_test() {
    let log = "running 3 tests\n.F.\nfailures:\n\n---- tests::it_breaks stdout ----\n\nthread 'tests::it_breaks' panicked at src/lib.rs:3:5:\nboom\nnote: run with\n";
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "tests::it_breaks");
    assert_eq!(
        found.error.as_deref(),
        Some("thread 'tests::it_breaks' panicked at src/lib.rs:3:5: boom")
    );
    assert_eq!(line_of(log, at), "boom");
}

#[test]
fn pytest_verbose_stops_at_the_first_failed_line_and_the_summary_gives_its_message() {
    let log = include_str!("captured/pytest-v.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "test_a.py::test_bad[1]");
    assert_eq!(found.error, None);
    assert!(line_of(log, at).starts_with("test_a.py::test_bad[1] FAILED"));
    // Without -v only the closing summary names a test, a moment before pytest ends by
    // itself: that run goes whole, with its closing counts.
    assert_eq!(stream(include_str!("captured/pytest.txt"), false), None);
}

#[test]
fn pytest_xdist_verbose_stops_at_the_first_workers_failed_line() {
    // `pytest -v -n 2` (pytest-xdist 3.8): each worker's result line leads with its name.
    let log = include_str!("captured/pytest-xdist.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "test_a.py::test_bad[x[1]]");
    assert!(line_of(log, at).starts_with("[gw1] [ 33%] FAILED test_a.py::test_bad[x[1]]"));
}

#[test]
fn jest_stops_at_the_first_line_of_the_first_block() {
    let log = include_str!("captured/jest.txt");
    let (found, at) = stream(log, false).unwrap();
    // jest printed the slow file first in this capture: files are reported as they end.
    assert_eq!(found.test, "slow fail");
    assert_eq!(
        found.error.as_deref(),
        Some("expect(received).toBe(expected) // Object.is equality")
    );
    assert_eq!(at, 3);
}

#[test]
fn vitest_stops_at_the_first_marks_message_when_its_file_ends() {
    let log = include_str!("captured/vitest.txt");
    let (found, at) = stream(log, false).unwrap();
    // vitest reports each file as it ends (in this capture, the slow one first).
    assert_eq!(found.test, "b.test.mjs > slow fail");
    assert_eq!(
        found.error.as_deref(),
        Some("expected 2 to be 3 // Object.is equality")
    );
    // Before the second file's results, let alone the closing blocks.
    let second = log.lines().position(|l| l.contains("a.test.mjs")).unwrap();
    assert!(at < second, "{at} {second}");
    // The closing block alone names it the same way.
    let tail: String = log
        .lines()
        .skip_while(|l| !l.contains("Failed Tests"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (found, _) = stream(&tail, false).unwrap();
    assert_eq!(found.test, "a.test.mjs > math > adds");
    assert_eq!(
        found.error.as_deref(),
        Some("AssertionError: expected 2 to be 3 // Object.is equality")
    );
}

#[test]
fn vitest_verbose_stops_at_the_first_failed_tests_message_as_it_ends() {
    let log = include_str!("captured/vitest-verbose.txt");
    let (found, at) = stream(log, false).unwrap();
    assert_eq!(found.test, "flood.test.mjs > adds 0");
    assert_eq!(
        found.error.as_deref(),
        Some("expected -1 to be 1 // Object.is equality")
    );
    // Its third line, not after the file's 300 failures.
    assert!(at < 8, "{at}");
}

#[test]
fn a_passing_run_or_an_unknown_format_never_stops() {
    for log in [
        "TAP version 13\nok 1 - a\nok 2 - b\n1..2\n# pass 2\n# fail 0\n",
        "running 2 tests\ntest a ... ok\ntest b ... ok\ntest result: ok. 2 passed; 0 failed\n",
        "t.py::test_a PASSED [ 50%]\nt.py::test_b PASSED [100%]\n",
        "something FAILED somewhere\nthe build broke\n",
        "..F..\n",
        // jest's console output and config warnings are headed as a failure is.
        "  ● Console\n\n    console.log\n      hi\n",
        "● Validation Warning:\n\n  Unknown option \"x\"\n",
        // A mark with no file line above it and no file in its name is no vitest test.
        "   × something 3ms\n   → went wrong\n",
    ] {
        assert_eq!(stream(log, false), None, "{log}");
        assert_eq!(Reader::replay(log, false), None, "{log}");
    }
}

#[test]
fn replay_finds_what_streaming_would_have() {
    let log = include_str!("captured/vitest.txt");
    let (streamed, _) = stream(log, false).unwrap();
    let replayed = Reader::replay(log, false).unwrap();
    assert_eq!(replayed.test, streamed.test);
    assert_eq!(replayed.error, streamed.error);
}
