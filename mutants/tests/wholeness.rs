//! Every mutant starts from the tree under review, whole: a suite that rewrites a golden file,
//! deletes a fixture, leaves a new module or hides a file behind a `.gitignore` of its own is
//! undone before the next mutant, and the row says so.

use crate::common::*;

/// A snapshot suite: compares `greet`'s output with the tracked `golden.txt` and, when they
/// differ, writes the new output into it (as `--update-snapshots` runners do) and fails. It
/// also leaves a new untracked, unignored file and a `.gitignore` of its own behind.
const SNAPSHOT_TEST: &str = r#". ./lib.sh
out=$(greet)
if [ "$out" = "$(cat golden.txt)" ]; then echo "1 passed, 0 failed"; exit 0; fi
echo "$out" > golden.txt
echo left > stray.txt
mkdir -p hidden && printf '*\n' > hidden/.gitignore && echo x > hidden/data
printf '.gitignore\nsneaky.txt\n' > .gitignore && echo x > sneaky.txt
echo "0 passed, 1 failed"; exit 1
"#;

fn fixture() -> Fixture {
    let spec = "[suites.unit]\nrun = \"sh snapshot.sh\"\ntimeout = \"10s\"\n\n\
        [[mutant]]\nname = \"greet shouts\"\nfile = \"lib.sh\"\nanchor = 'echo \"hello\"'\nreplace = 'echo \"HELLO\"'\nsuite = \"unit\"\n\n\
        [[mutant]]\nname = \"control: a comment\"\nfile = \"lib.sh\"\nanchor = \"spin() { :; }\"\nreplace = \"spin() { : ; }\"\nsuite = \"unit\"\nexpect = \"survive\"\n";
    let fx = Fixture::new(spec);
    fx.repo
        .write("snapshot.sh", SNAPSHOT_TEST)
        .write("golden.txt", "hello\n");
    fx.repo.commit_all("snapshot suite");
    fx
}

#[test]
fn a_suite_that_rewrites_a_golden_file_does_not_decide_the_next_mutants_verdict() {
    let fx = fixture();
    let out = fx.run(&["--jobs", "1"]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("greet shouts".into(), "killed".into()),
            ("control: a comment".into(), "control held".into()),
        ],
        "{out}"
    );
    let after = row(&report, "greet shouts")["restored_after"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for what in ["golden.txt", "stray.txt", "hidden/", ".gitignore"] {
        assert!(after.contains(what), "{what} not named: {after:?}");
    }
    assert!(row(&report, "control: a comment")["restored_after"].is_null());
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("restored after greet shouts: its suite changed"),
        "{text}"
    );
    // The user's checkout was never touched.
    assert_eq!(fx.repo.read("golden.txt"), b"hello\n");
    assert!(!fx.repo.path().join("stray.txt").exists());
}

#[test]
fn a_setup_that_rewrites_a_tracked_file_is_undone_before_the_baseline() {
    let fx = fixture();
    // The setup rewrites the golden file the way an install rewrites its lockfile: the
    // baseline would fail on it (a red baseline, exit 4) were it not put back.
    let spec = std::fs::read_to_string(fx.repo.path().join("mutants.toml")).unwrap();
    fx.repo.write(
        "mutants.toml",
        format!("[worktree]\nsetup = \"echo changed > golden.txt\"\n\n{spec}"),
    );
    fx.repo.commit_all("setup");
    let out = fx.run(&["--jobs", "1"]);
    out.assert_exit(0);
    assert!(
        out.stderr
            .contains("the setup changed the checkout: 1 changed (golden.txt): restored"),
        "{out}"
    );
}
