//! `report::junit` read back by a real JUnit consumer: Python's `junitparser` (PyPI), the
//! library CI plugins use. The test writes a document full of what suite logs really hold
//! (markup characters, ANSI escapes, NUL, a lone carriage return, astral characters), has
//! junitparser parse it, and compares the facts it reports with what went in.
//!
//! Without junitparser the test skips with a notice, except under CI (`CI` set), where a missing
//! consumer is a failure: `.ci/run` installs it, and a test that silently checks nothing there
//! would hide a broken writer.

use report::junit::{Ending, Status, TestCase, TestSuite, TestSuites};
use report::Timestamp;
use serde_json::json;

#[test]
fn junitparser_reads_back_every_fact_with_hostile_text_intact() {
    let log =
        "test a ... ok\nassert 1 < 2 && \"x\" != 'y'\n\x1b[31mred\x1b[0m nul:\0 cr:\r end ]]> 🦀";
    let mut failed = TestCase::new("bus <core>", "gate.suite", 1.25);
    failed.status = Status::Failed {
        message: "exit 1 & \"3 failed\"".into(),
        kind: "failed".into(),
        body: log.into(),
    };
    failed.system_out = Some("log: logs/01-bus.log".into());
    let mut errored = TestCase::new("missing", "gate.suite", 0.0);
    errored.status = Status::Errored {
        message: "exit 127 (could not start)".into(),
        kind: "could not start".into(),
        body: "sh: 1: nope: not found".into(),
    };
    let mut skipped = TestCase::new("late", "gate.suite", 0.0);
    skipped.status = Status::Skipped {
        message: "interrupted before it ran".into(),
    };
    let doc = TestSuites {
        name: "gate 'demo'".into(),
        suites: vec![TestSuite {
            name: "gate".into(),
            timestamp: Timestamp::parse("2026-10-12T20:13:35Z"),
            cases: vec![
                TestCase::new("ok", "gate.suite", 0.5),
                failed,
                errored,
                skipped,
            ],
        }],
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, doc.render(&Ending::new(1, "a suite failed"))).unwrap();
    let Some(facts) = testkit::junit(&path) else {
        return;
    };
    let suite = &facts["suites"][0];
    assert_eq!(facts["name"], "gate 'demo'");
    assert_eq!(
        (
            &facts["tests"],
            &facts["failures"],
            &facts["errors"],
            &facts["skipped"]
        ),
        (&json!(4), &json!(1), &json!(1), &json!(1))
    );
    assert_eq!(suite["timestamp"], "2026-10-12T20:13:35Z");
    assert_eq!(suite["time"], json!(1.75));
    let cases = suite["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[0]["results"], json!([]));
    assert_eq!(cases[1]["name"], "bus <core>");
    assert_eq!(cases[1]["time"], json!(1.25));
    let failure = &cases[1]["results"][0];
    assert_eq!(failure["kind"], "Failure");
    assert_eq!(failure["message"], "exit 1 & \"3 failed\"");
    // The forbidden characters come back spelled out; everything else exactly as written.
    assert_eq!(
        failure["text"],
        "test a ... ok\nassert 1 < 2 && \"x\" != 'y'\n\\u{1b}[31mred\\u{1b}[0m nul:\\u{0} cr:\r end ]]> 🦀"
    );
    assert_eq!(cases[1]["system_out"], "log: logs/01-bus.log");
    assert_eq!(cases[2]["results"][0]["kind"], "Error");
    assert_eq!(cases[2]["results"][0]["type"], "could not start");
    assert_eq!(cases[3]["results"][0]["kind"], "Skipped");
    assert_eq!(
        cases[3]["results"][0]["message"],
        "interrupted before it ran"
    );
}
