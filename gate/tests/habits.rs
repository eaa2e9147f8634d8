//! The reviewer's real habits: a careless `git add -A` after a run stages gatekit's own
//! outputs, and pack leaves them out of the candidate, saying so.

use crate::common::{gate, stderr, stdout};
use testkit::Repo;

#[test]
fn pack_leaves_its_out_folder_and_gatekit_reports_out_of_the_candidate() {
    let repo = Repo::new();
    repo.write("src/lib.txt", "one\n");
    let base = repo.commit_all("base");
    repo.write("src/lib.txt", "one\ntwo\n")
        .write("gate-out/gate.json", "{}\n")
        .write("gate-out/gate-summary.txt", "gate PASS\n")
        .write("gate-out/logs/01-unit.log", "ok\n")
        .write("reports/m/mutants.json", "{}\n")
        .write("reports/m/mutants.txt", "table\n")
        .write("gate-in/old.txt", "an earlier pack's leftovers\n")
        // A folder that merely holds one of the names is the user's.
        .write("docs/gate.json", "{\"user\": true}\n");
    repo.git(["add", "-A"]);
    let out = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out", "gate-in"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    for dir in ["gate-in/", "gate-out/", "reports/m/"] {
        assert!(
            said.contains(&format!("left out {dir}: staged")),
            "{dir}: {said}"
        );
    }
    let patch = String::from_utf8_lossy(&repo.read("gate-in/build.patch")).into_owned();
    assert!(patch.contains("src/lib.txt"), "{patch}");
    assert!(patch.contains("docs/gate.json"), "{patch}");
    for gone in ["gate-out/", "reports/m/", "gate-in/old.txt"] {
        assert!(
            !patch.contains(gone),
            "{gone} is in the candidate:\n{patch}"
        );
    }
    let manifest =
        String::from_utf8_lossy(&repo.read("gate-in/candidate-manifest.sha256")).into_owned();
    assert_eq!(manifest.lines().count(), 2, "{manifest}");
}

#[test]
fn drift_names_the_paths_each_commit_touched_and_an_empty_range_says_so() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n")
        .write("b.txt", "b\n")
        .write("c.txt", "c\n");
    let base = repo.commit_all("base");
    repo.write("a.txt", "a2\n").write("b.txt", "b2\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .assert()
        .success();
    let apply = |head: &str| {
        gate()
            .current_dir(repo.path())
            .args(["apply", "--base", &base, "--head", head, "--patch"])
            .arg(out.path().join("build.patch"))
            .arg("--manifest")
            .arg(out.path().join("candidate-manifest.sha256"))
            .output()
            .unwrap()
    };
    // Head is the base: nothing to compare, said plainly.
    let same = apply(&base);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(
        stdout(&same).contains("drift     none: head is the base"),
        "{}",
        stdout(&same)
    );
    // A commit on main touching b.txt and c.txt: only b.txt is a candidate path.
    repo.git(["stash", "-q"]);
    repo.write("b.txt", "main's b\n")
        .write("c.txt", "main's c\n");
    let head = repo.commit_all("main moves b and c");
    let drift = apply(&head);
    assert_eq!(drift.status.code(), Some(1), "{}", stderr(&drift));
    let text = stdout(&drift);
    let line = text
        .lines()
        .position(|l| l.contains("main moves b and c"))
        .unwrap();
    assert_eq!(
        text.lines().nth(line + 1).unwrap().trim(),
        "touches b.txt",
        "{text}"
    );
    for wt in repo.extra_worktrees() {
        repo.remove_checkout(wt);
    }
}

#[test]
fn echo_shows_a_suites_output_without_letting_it_rewrite_the_terminal() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit_all("base");
    repo.write("a.txt", "a2\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    let config = crate::common::pack_with_config(
        &repo,
        &base,
        out.path(),
        "[[suite]]\nname = \"noisy\"\nrun = \"printf 'step 1\\\\rverdict   PASS\\\\033[2J\\\\033[32mgreen\\\\033[0m\\\\tdone\\\\n'\"\n",
    );
    let run = crate::common::run_config(&repo, &config, &out.path().join("o"), &["--echo"]);
    run.assert_exit(0);
    let err = &run.stderr;
    assert!(err.contains("step 1\\rverdict   PASS\\u{1b}[2J"), "{err:?}");
    assert!(err.contains("\u{1b}[32mgreen\u{1b}[0m\tdone"), "{err:?}");
    assert!(!err.contains('\r') && !err.contains("\u{1b}[2J"), "{err:?}");
}

/// A repository whose suite needs an ignored `deps/` folder (as a Node project needs
/// `node_modules`), packed; returns it, its pack folder and its base.
fn project_with_deps() -> (Repo, tempfile::TempDir, String) {
    let repo = Repo::new();
    repo.write(".gitignore", "deps/\n")
        .write("app.sh", "echo app\n");
    let base = repo.commit_all("base");
    repo.write("deps/lib/VERSION", "2.0\n");
    repo.write("app.sh", "echo app v2\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .assert()
        .success();
    (repo, out, base)
}

fn gate_toml(out: &std::path::Path, base: &str, worktree: &str, run: &str) -> std::path::PathBuf {
    crate::common::write_config(
        out,
        base,
        &format!("[worktree]\n{worktree}\n\n[[suite]]\nname = \"unit\"\nrun = \"{run}\"\n"),
    )
}

#[test]
fn worktree_setup_runs_once_before_the_suites_and_links_share_ignored_folders() {
    let (repo, out, base) = project_with_deps();
    let config = gate_toml(
        out.path(),
        &base,
        "setup = \"echo installing; echo ready > .installed\"\nlink = [\"deps\"]",
        "[ -f .installed ] && [ \\\"$(cat deps/lib/VERSION)\\\" = 2.0 ] && echo '1 passed, 0 failed'",
    );
    let run = gate()
        .current_dir(repo.path())
        .args(["run", "--json", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{}",
        stdout(&run),
        stderr(&run)
    );
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(v["setup"]["status"], "exit 0", "{}", v["setup"]);
    assert_eq!(v["setup"]["linked"], serde_json::json!(["deps"]));
    let summary = std::fs::read_to_string(out.path().join("o/gate-summary.txt")).unwrap();
    assert!(summary.contains("setup     echo installing;"), "{summary}");
    let log = std::fs::read_to_string(out.path().join("o/logs/00-setup.log")).unwrap();
    assert!(log.contains("installing"), "{log}");
    let said = |run: &std::process::Output, log: &str| {
        let err = stderr(run);
        let line = err
            .lines()
            .find(|l| l.starts_with("gate: worktree setup passed in "))
            .unwrap_or_else(|| panic!("no setup line: {err}"));
        assert!(line.ends_with(&format!("s ({log})")), "{line}");
    };
    said(&run, "logs/00-setup.log");
    // A rerun's setup has a log of its own, named one way where the guard plans it, where the
    // setup writes it and where the run says so.
    let rerun = gate()
        .current_dir(repo.path())
        .args(["run", "--only", "unit", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    said(&rerun, "logs/rerun-1-00-setup.log");
    let log = std::fs::read_to_string(out.path().join("o/logs/rerun-1-00-setup.log")).unwrap();
    assert!(log.contains("installing"), "{log}");
    assert!(out.path().join("o/logs/00-setup.log").exists());
    // The link changed nothing in the user's copy.
    assert_eq!(repo.read("deps/lib/VERSION"), b"2.0\n");
    assert!(!repo.path().join(".installed").exists());
}

#[test]
fn a_failing_setup_is_a_precondition_with_its_log_tail_shown() {
    let (repo, out, base) = project_with_deps();
    let config = gate_toml(
        out.path(),
        &base,
        "setup = \"echo resolving; echo \\\"Error: Cannot find package 'left-pad'\\\" >&2; exit 1\"",
        "touch ran; echo '1 passed, 0 failed'",
    );
    let run = gate()
        .current_dir(repo.path())
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(4),
        "{}{}",
        stdout(&run),
        stderr(&run)
    );
    let err = stderr(&run);
    assert!(err.contains("Cannot find package 'left-pad'"), "{err}");
    assert!(err.contains("worktree.setup failed (exit 1)"), "{err}");
}

#[test]
fn a_link_git_does_not_ignore_is_bad_input_and_one_missing_at_its_source_a_precondition() {
    let (repo, out, base) = project_with_deps();
    let config = gate_toml(out.path(), &base, "link = [\"app.sh\"]", "true");
    let run = gate()
        .current_dir(repo.path())
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("is not ignored by git"),
        "{}",
        stderr(&run)
    );
    assert!(
        !out.path().join("o").exists(),
        "bad input wrote an output folder"
    );

    std::fs::remove_dir_all(repo.path().join("deps")).unwrap();
    let config = gate_toml(out.path(), &base, "link = [\"deps\"]", "true");
    let run = gate()
        .current_dir(repo.path())
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(4), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("not in the source checkout"),
        "{}",
        stderr(&run)
    );
}

#[test]
fn check_and_hash_take_the_flags_sha256sum_users_type() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("b c.txt"), "b\n").unwrap();
    let g = |args: &[&str], stdin: Option<&[u8]>| {
        let mut cmd = gate();
        cmd.current_dir(dir.path()).args(args);
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_vec());
        }
        cmd.output().unwrap()
    };
    // hash writes what sha256sum -c reads, in both forms.
    let text = g(&["hash", "a.txt", "b c.txt"], None);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    std::fs::write(dir.path().join("m"), &text.stdout).unwrap();
    let tagged = g(&["hash", "--tag", "a.txt"], None);
    assert!(
        stdout(&tagged).starts_with("SHA256 (a.txt) = "),
        "{}",
        stdout(&tagged)
    );
    std::fs::write(dir.path().join("t"), &tagged.stdout).unwrap();
    for m in ["m", "t"] {
        let real = std::process::Command::new("sha256sum")
            .args(["-c", "--strict", m])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            real.status.success(),
            "sha256sum -c {m}: {}",
            String::from_utf8_lossy(&real.stdout)
        );
    }
    // The manifest as a positional FILE, or `-` for stdin.
    assert!(stdout(&g(&["check", "m"], None)).ends_with("2/2 OK\n"));
    assert!(stdout(&g(&["check", "-"], Some(&text.stdout))).ends_with("2/2 OK\n"));
    // --quiet is silent when all is OK; --status prints nothing either way.
    let quiet = g(&["check", "--quiet", "m"], None);
    assert_eq!(
        (quiet.status.code(), stdout(&quiet)),
        (Some(0), String::new())
    );
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    let quiet = g(&["check", "--quiet", "m"], None);
    assert_eq!(quiet.status.code(), Some(1));
    assert_eq!(
        stdout(&quiet),
        "a.txt: MISSING (no such file)\n1/2 OK, 1 MISSING\n"
    );
    let status = g(&["check", "--status", "m"], None);
    assert_eq!(
        (status.status.code(), stdout(&status)),
        (Some(1), String::new())
    );
    // --ignore-missing: a missing file is no failure; all of them missing still is.
    let ignoring = g(&["check", "--ignore-missing", "m"], None);
    assert_eq!(ignoring.status.code(), Some(0), "{}", stdout(&ignoring));
    assert!(stdout(&ignoring).contains("1/1 OK (1 missing, ignored)"));
    let none = g(&["check", "--ignore-missing", "t"], None);
    assert_eq!(none.status.code(), Some(1), "{}", stderr(&none));
    assert!(stderr(&none).contains("no file was verified"));
    // --strict and --warn are accepted; reading is always strict.
    std::fs::write(dir.path().join("bad"), "not a line\n").unwrap();
    let bad = g(&["check", "--strict", "--warn", "bad"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("bad:1:"), "{}", stderr(&bad));
    // DIR must be a folder: a file or nothing there is bad input, said of DIR in one line.
    for (dir_arg, problem) in [
        ("b c.txt", "b c.txt: not a folder"),
        ("nowhere", "nowhere: the folder to check"),
    ] {
        let out = g(&["check", "m", dir_arg], None);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("gate: error: {problem}")), "{err}");
    }
}
