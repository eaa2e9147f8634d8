//! A command line `mutants` refuses goes through the exit policy every tool shares: exit 2,
//! and the arguments clap quotes back are shown escaped, so a typed argument cannot clear the
//! screen or print a line of its own (as in gate and probe).

const BIN: &str = env!("CARGO_BIN_EXE_mutants");

#[test]
fn a_refused_argument_is_quoted_with_escapes_and_exit_2() {
    let out = testkit::bin(BIN)
        .args(["\u{1b}[2J\nverdict   PASS"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("\\nverdict   PASS"), "{err}");
    assert!(!out.stderr.contains(&0x1b), "a raw ESC byte: {err:?}");
    assert!(
        err.lines().all(|l| !l.starts_with("verdict")),
        "a forged line in {err}"
    );
}

#[test]
fn help_is_exit_0_on_stdout() {
    let out = testkit::bin(BIN).arg("--help").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
}
