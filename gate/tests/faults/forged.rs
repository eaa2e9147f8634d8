//! Outside text (names, subjects, arguments, errors) never forges a summary line or reaches a
//! terminal raw.

use std::fs;
use std::path::Path;

use gate::record::Verdict;

use crate::common::{gate, stderr, stdout, Fixture};
use testkit::Repo;

use super::outputs::with_closed_stdout;
use super::{gate_std, read, TWO_SUITES};

// ---- 2. outside text never forges a line -----------------------------------------------------

const FORGED: &str = "verdict   PASS";

fn assert_unforged(what: &str, text: &[u8]) {
    assert!(
        !text.contains(&0x1b),
        "{what}: a raw ESC byte: {:?}",
        String::from_utf8_lossy(text)
    );
    assert!(
        !text.contains(&b'\r'),
        "{what}: a raw CR: {:?}",
        String::from_utf8_lossy(text)
    );
    let text = String::from_utf8_lossy(text);
    for line in text.lines() {
        assert!(
            !line.starts_with(FORGED),
            "{what}: a forged line {line:?} in\n{text}"
        );
    }
}

#[test]
fn names_and_subjects_with_line_breaks_cr_or_escapes_never_forge_a_line_or_reach_a_terminal() {
    let repo = Repo::new();
    repo.write("src/a.txt", "a\n")
        .write("gone/x\nverdict   PASS", "1\n")
        .write("gone/\u{1b}[31mred", "2\n");
    let base = repo.commit_all("base");
    repo.git(["branch", "work"]);
    repo.git(["checkout", "-q", "work"]);
    repo.write("src/a.txt", "a\nb\n")
        .write("tests/y\nverdict   PASS.sh", "#!/bin/sh\nexit 1\n")
        .chmod_x("tests/y\nverdict   PASS.sh")
        .write(
            "tests/\u{1b}[31m\u{1b}[2J.sh",
            "#!/bin/sh\necho '1 passed, 0 failed'\n",
        )
        .chmod_x("tests/\u{1b}[31m\u{1b}[2J.sh");
    repo.git(["rm", "-q", "gone/x\nverdict   PASS", "gone/\u{1b}[31mred"]);
    repo.git(["add", "-A"]);
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    // Drift: a commit on the head touching a candidate path, its subject an attack.
    repo.write("src/a.txt", "a\nc\n");
    repo.commit_all("fix\rverdict   PASS \u{1b}[2J");
    let config = cand.path().join("gate.toml");
    fs::write(
        &config,
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nglob = \"tests/*.sh\"\n"),
    )
    .unwrap();
    let out_dir = cand.path().join("o");
    let junit = cand.path().join("junit.xml");
    let run = |extra: &[&str]| {
        gate()
            .current_dir(repo.path())
            .arg("run")
            .arg("--config")
            .arg(&config)
            .arg("--out")
            .arg(&out_dir)
            .arg("--junit")
            .arg(&junit)
            .args(extra)
            .output()
            .unwrap()
    };
    let text = run(&["--color", "never"]);
    assert_eq!(text.status.code(), Some(1), "{}", stderr(&text));
    let summary = read(&out_dir.join("gate-summary.txt"));
    let summary_text = String::from_utf8_lossy(&summary).into_owned();
    // The attacks are there, made visible, not dropped.
    assert!(
        summary_text.contains("tests/y\\nverdict   PASS.sh"),
        "{summary_text}"
    );
    assert!(summary_text.contains("\\u{1b}[31mred"), "{summary_text}");
    assert!(
        summary_text.contains("fix\\rverdict   PASS \\u{1b}[2J"),
        "{summary_text}"
    );
    assert!(summary_text
        .lines()
        .last()
        .unwrap()
        .starts_with("verdict   FAIL"));
    assert_unforged("gate-summary.txt", &summary);
    assert_unforged("stdout", &text.stdout);
    assert_unforged("stderr", &text.stderr);
    assert_unforged("gate.json", &read(&out_dir.join("gate.json")));
    assert_unforged("junit.xml", &read(&junit));

    let md = run(&["--format", "markdown", "--color", "always"]);
    assert_eq!(md.status.code(), Some(1));
    assert_unforged("markdown", &md.stdout);
    assert_unforged("stderr (markdown)", &md.stderr);

    // Under --color always the only escapes are gatekit's own verdict colours.
    let painted = run(&["--color", "always"]);
    let mut shown = stdout(&painted);
    let paint = report::Painter::new(true);
    for verdict in [Verdict::Pass, Verdict::Fail, Verdict::Interrupted] {
        let word = verdict.as_str();
        shown = shown.replace(&paint.paint(word, verdict.style()), word);
    }
    assert!(shown.contains("verdict   FAIL"), "{shown}");
    assert_unforged("stdout (--color always)", shown.as_bytes());
}

#[test]
fn an_error_naming_outside_text_is_one_line_without_controls() {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let out = f
        .run(&config, &f.out.path().join("o"))
        .args(["--only", "x\nverdict   PASS\u{1b}[2J"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_unforged("stderr", &out.stderr);
    // A patch whose name is an attack: the error quotes it raw from deep in the library.
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        text.replace("\"build.patch\"", "\"x\\nverdict   PASS\\u001b[2J\\r\""),
    )
    .unwrap();
    let out = f.run(&config, &f.out.path().join("o")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("x verdict   PASS"),
        "{}",
        stderr(&out)
    );
    assert_unforged("stderr", &out.stderr);
}

#[test]
fn a_refused_argument_is_quoted_with_escapes_and_help_survives_a_closed_stdout() {
    let out = gate()
        .args(["completions", "\u{1b}[2J\nverdict   PASS"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\\nverdict   PASS"),
        "{}",
        stderr(&out)
    );
    assert_unforged("stderr", &out.stderr);
    let mut help = gate_std(Path::new("."));
    help.arg("--help");
    let (status, err) = with_closed_stdout(help);
    assert_eq!(status, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}
