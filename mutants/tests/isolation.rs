//! The run's checkouts are repositories of their own: what a suite does to "its" git never
//! reaches DIR's repository, and DIR's state that `git diff` cannot show (a nested repository,
//! files marked assume-unchanged or skip-worktree) is carried, never a failed run.

use std::fs;

use crate::common::{mutant, verdicts, Fixture, LIB, SUITE, TEST};
use testkit::Output;

#[test]
fn a_meddling_suite_leaves_dirs_repository_byte_for_byte_as_it_was() {
    let suite = r#"[suites.unit]
run = """
git config user.name Meddler && git config user.email m@example.invalid &&
git config gatekit.test changed && git tag -f evil && git branch -f evil &&
git tag -d v1 >/dev/null && echo x >> README && git stash -q && echo '#!/bin/sh' > .git/hooks/pre-push &&
git worktree add -q "$TMPDIR/wt" HEAD && git commit -q --allow-empty -m meddle &&
sh test.sh
"""
timeout = "20s"

"#;
    let spec = format!(
        "{suite}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo.write("README", "readme\n");
    fx.repo.commit_all("readme");
    fx.repo.git(["tag", "v1"]);
    fx.repo.git(["config", "gatekit.test", "original"]);
    let git_dir = fx.repo.path().join(".git");
    let before = testkit::snapshot(&git_dir);
    let status = fx.repo.status();
    let out = fx.run(&[]);
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report())[0].1, "killed");
    let after = testkit::snapshot(&git_dir);
    let changed: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(changed.is_empty(), "DIR's .git changed: {changed:?}");
    assert_eq!(fx.repo.status(), status);
    assert_eq!(fx.repo.git(["config", "gatekit.test"]), "original");
    assert!(fx.repo.extra_worktrees().is_empty());
}

#[test]
fn a_nested_repository_and_hidden_edits_are_carried_into_the_run() {
    // The suite reads a file from an untracked nested repository and the real content of a
    // file whose edit git hides (assume-unchanged), and fails unless both are as in DIR.
    let suite = "[suites.unit]\nrun = \"[ \\\"$(cat vendor/dep/VERSION)\\\" = 2.0 ] && grep -q edited hidden.txt && sh test.sh\"\ntimeout = \"20s\"\n\n";
    let spec = format!(
        "{suite}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo.write("hidden.txt", "original\n");
    fx.repo.commit_all("hidden");
    let nested = testkit::Repo::new();
    nested.write("VERSION", "2.0");
    nested.commit_all("dep");
    let vendor = fx.repo.path().join("vendor");
    fs::create_dir_all(&vendor).unwrap();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(nested.path())
        .arg(vendor.join("dep"))
        .status()
        .unwrap();
    assert!(status.success());
    fx.repo
        .git(["update-index", "--assume-unchanged", "hidden.txt"]);
    fx.repo.write("hidden.txt", "edited\n");
    let before = fx.repo.status();
    let out = fx.run(&[]);
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report())[0].1, "killed");
    // Read as words: a line of the report wraps within 120 columns.
    let both = out.both();
    let said = both
        .lines()
        .map(str::trim_start)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        said.contains("1 untracked nested repository copied"),
        "{said}"
    );
    assert!(said.contains("assume-unchanged or skip-worktree"), "{said}");
    assert_eq!(fx.repo.status(), before);
    assert_eq!(
        fs::read_to_string(fx.repo.path().join("hidden.txt")).unwrap(),
        "edited\n"
    );
    let _ = (LIB, SUITE);
}

/// A fixture whose suite needs an ignored `deps/` folder and what `setup` makes.
fn with_deps(worktree: &str) -> Fixture {
    let suite = "[suites.unit]\nrun = \"[ -f .installed ] && [ \\\"$(cat deps/VERSION)\\\" = 2.0 ] && sh test.sh\"\ntimeout = \"20s\"\n\n";
    let spec = format!(
        "[worktree]\n{worktree}\n\n{suite}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo.write(".gitignore", "deps/\n");
    fx.repo.commit_all("ignore deps");
    fx.repo.write("deps/VERSION", "2.0");
    fx
}

#[test]
fn worktree_setup_and_links_prepare_every_copy_before_its_baseline() {
    let fx = with_deps("setup = \"echo installing; touch .installed\"\nlink = [\"deps\"]");
    let out = fx.run(&["--jobs", "2"]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(verdicts(&report)[0].1, "killed");
    assert_eq!(report["setup"]["linked"], serde_json::json!(["deps"]));
    assert_eq!(
        report["setup"]["secs"].as_array().unwrap().len(),
        1,
        "one copy for one mutant"
    );
    assert!(fx.out().join("logs/setup.log").exists());
    let table = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        table.contains("setup: echo installing; touch .installed passed"),
        "{table}"
    );
    assert!(
        !fx.repo.path().join(".installed").exists(),
        "setup ran in DIR"
    );
}

#[test]
fn a_failing_worktree_setup_stops_the_run_with_exit_4_and_its_log_tail() {
    let fx =
        with_deps("setup = \"echo \\\"npm ERR! Cannot find package 'left-pad'\\\" >&2; exit 1\"");
    let out = fx.run(&[]);
    out.assert_exit(4);
    // The log's tail (the setup's own words, on stderr), and no baseline ever ran.
    let err = out.stderr.as_str();
    assert!(err.contains("worktree.setup failed (exit 1)"), "{err}");
    assert!(
        err.contains("  | npm ERR! Cannot find package 'left-pad'"),
        "{err}"
    );
    assert!(
        !fx.out().join("logs/baseline.unit.log").exists(),
        "a baseline ran after a failed setup"
    );
    // The record says what happened: exit 4, a setup that failed, no verdict cut short.
    let report = fx.report();
    assert_eq!(report["exit_code"], 4, "{report}");
    assert_eq!(report["complete"], true, "{report}");
    assert!(
        report["precondition"]
            .as_str()
            .unwrap()
            .starts_with("worktree.setup failed (exit 1)"),
        "{report}"
    );
    let text = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("SETUP FAILED: worktree.setup failed (exit 1)"),
        "{text}"
    );
    assert!(!text.contains("INCOMPLETE"), "{text}");
    if let Some(junit) = testkit::junit(&fx.out().join("junit.xml")) {
        let setup = junit["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["classname"] == "mutants.setup")
            .unwrap_or_else(|| panic!("no setup testcase: {junit}"));
        assert_eq!(setup["results"][0]["kind"], "Error", "{setup}");
    }
}

#[test]
fn a_worktree_link_git_does_not_ignore_is_bad_input() {
    let fx = with_deps("link = [\"lib.sh\"]");
    let out = fx.run(&[]);
    out.assert_exit(2);
    assert!(out.both().contains("is not ignored by git"), "{}", out);
}

#[test]
fn a_linked_folder_is_the_checkouts_own_copy_and_a_write_into_the_users_fails_the_run() {
    // A setup that installs into the linked folder writes into the checkout's copy: the user's
    // `deps/` is as it was, and the copy (a real folder, which `deps/` ignores) is not
    // reported as a change the setup made to the checkout.
    let fx = with_deps(
        "setup = \"touch .installed; echo 3.0 > deps/NEW; rm deps/VERSION; echo 2.0 > deps/VERSION\"\nlink = [\"deps\"]",
    );
    // The suite writes into $USER_DEPS when it is set.
    fx.repo.write(
        "test.sh",
        format!("[ -z \"$USER_DEPS\" ] || echo w >> \"$USER_DEPS/written\"\n{TEST}"),
    );
    fx.repo.commit_all("test.sh writes into USER_DEPS");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let said = out
        .stderr
        .lines()
        .find(|l| l.contains("the setup changed the checkout"))
        .unwrap_or_default();
    assert!(!said.contains("deps"), "the copy is ignored: {out}");
    assert!(!fx.repo.path().join("deps/NEW").exists(), "{out}");
    assert_eq!(
        fs::read_to_string(fx.repo.path().join("deps/VERSION")).unwrap(),
        "2.0"
    );

    // A suite that writes into the user's folder by its own path is named, and the run is a
    // failed precondition whatever its verdicts.
    let user = fx.repo.path().join("deps");
    let out = Output::of(fx.cmd().env("USER_DEPS", &user).args([
        "run",
        "mutants.toml",
        "--out",
        fx.out().to_str().unwrap(),
    ]));
    out.assert_exit(4);
    assert!(out.stderr.contains("your own folder"), "{out}");
    assert!(out.stderr.contains("deps/written"), "{out}");
    let report = fx.report();
    assert_eq!(report["exit_code"], 4);
    assert!(
        report["linked_changed"][0]
            .as_str()
            .is_some_and(|l| l.contains("deps/written")),
        "{report}"
    );
    let text = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("LINKED FOLDER CHANGED: worktree.link \"deps\""),
        "{text}"
    );
}
