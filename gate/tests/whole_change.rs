//! The candidate's own checks on everyday projects: the manifest covers every file the patch
//! changes, a base off the head's history is found, the checkout holds what a fresh clone of
//! the tree holds (its own `.gitattributes`), and a project's gate.toml may hold only suites.

use std::fs;
use std::path::Path;

use crate::common::{gate, run_config, write_config};
use testkit::{Output, Repo};

/// Packs what `repo` has staged against `base` into `out`.
fn pack(repo: &Repo, base: &str, out: &Path) {
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", base, "--out"])
        .arg(out)
        .assert()
        .success();
}

/// `gate apply` of `out`'s candidate on `base`, its checkout kept in `out`'s temp folder.
fn apply(repo: &Repo, base: &str, out: &Path, extra: &[&str]) -> Output {
    Output::of(
        gate()
            .current_dir(repo.path())
            .env("TMPDIR", out)
            .args(["apply", "--base", base, "--patch"])
            .arg(out.join("build.patch"))
            .arg("--manifest")
            .arg(out.join("candidate-manifest.sha256"))
            .args(extra),
    )
}

/// The kept checkout's folder, from `gate apply`'s `checkout` line.
fn checkout_of(text: &str) -> String {
    let line = text.lines().find(|l| l.starts_with("checkout")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn a_file_the_manifest_does_not_name_is_a_finding_in_apply_and_run() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n").write("b.txt", "b\n");
    let base = repo.commit_all("base");
    repo.write("a.txt", "a, edited\n")
        .write("b.txt", "b, edited\n")
        .write("new/c.txt", "c\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path());
    let manifest = out.path().join("candidate-manifest.sha256");
    let lines = fs::read_to_string(&manifest).unwrap();
    assert_eq!(lines.lines().count(), 3, "{lines}");
    // The reviewer was handed a manifest naming only a.txt: every line it has holds.
    let only_a: String = lines.lines().filter(|l| l.ends_with(" a.txt")).collect();
    fs::write(&manifest, format!("{only_a}\n")).unwrap();
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", &base]);

    let applied = apply(&repo, &base, out.path(), &[]);
    applied.assert_exit(1);
    let text = &applied.stdout;
    assert!(text.contains("1/1 OK"), "{text}");
    for path in ["b.txt", "new/c.txt"] {
        assert!(
            text.contains(&format!("          {path}: NOT IN THE MANIFEST")),
            "{text}"
        );
    }
    assert!(
        text.contains("verdict   FAIL: the manifest does not name 2 files the patch changes: b.txt, new/c.txt"),
        "{text}"
    );

    let config = write_config(
        out.path(),
        &base,
        "[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
    );
    let gated = tempfile::tempdir().unwrap();
    let run = run_config(&repo, &config, gated.path(), &[]);
    run.assert_exit(1);
    let summary = fs::read_to_string(gated.path().join("gate-summary.txt")).unwrap();
    assert!(summary.contains("1/1 suites passed"), "{summary}");
    assert!(summary.contains("b.txt: NOT IN THE MANIFEST"), "{summary}");
    assert!(
        summary.contains("verdict   FAIL: the manifest does not name 2 files"),
        "{summary}"
    );
    // The pull-request summary names them too.
    let gated = tempfile::tempdir().unwrap();
    let md = run_config(&repo, &config, gated.path(), &["--format", "markdown"]);
    md.assert_exit(1);
    assert!(
        md.stdout
            .contains("1/1 OK; **does not name** `b.txt`, `new/c.txt` |"),
        "{md}"
    );
}

#[test]
fn a_base_off_the_heads_history_is_a_finding_naming_both_sides() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n").write("b.txt", "b\n");
    let root = repo.commit_all("root");
    // The base is on a side branch: one of its commits touches the candidate's path.
    repo.git(["checkout", "-q", "-b", "side"]);
    repo.write("a.txt", "a, as the side branch has it\n");
    let side_edit = repo.commit_all("side: edit a");
    repo.write("c.txt", "c\n");
    let base = repo.commit_all("side: add c");
    // main moves on without touching a candidate path.
    repo.git(["checkout", "-q", "main"]);
    repo.write("b.txt", "b, on main\n");
    repo.commit_all("main: edit b");
    repo.git(["checkout", "-q", "side"]);
    repo.write("a.txt", "a, the candidate's\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path());
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    assert_ne!(root, base);

    let applied = apply(&repo, &base, out.path(), &[]);
    applied.assert_exit(1);
    let text = &applied.stdout;
    assert!(
        text.contains("drift     BASE NOT IN HEAD'S HISTORY"),
        "base..head alone reads as no drift: {text}"
    );
    assert!(
        text.contains("1 of 2 commits in") && text.contains("0 of 1 in"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "          {} side: edit a (in head..base",
            &side_edit[..12]
        )),
        "{text}"
    );
    assert!(!text.contains("side: add c"), "{text}");
    assert!(
        text.contains("verdict   FAIL: base ") && text.contains("is not in the history of head"),
        "{text}"
    );

    let config = write_config(
        out.path(),
        &base,
        "[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
    );
    let gated = tempfile::tempdir().unwrap();
    run_config(&repo, &config, gated.path(), &[]).assert_exit(1);
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(gated.path().join("gate.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(report["candidate"]["base_off_head"], true);
    assert_eq!(
        report["candidate"]["base_side"][0]["sha"],
        side_edit.as_str()
    );

    // A base in the head's history is no such finding.
    let plain = apply(&repo, &base, out.path(), &["--head", "side"]);
    assert!(!plain.stdout.contains("BASE NOT IN"), "{}", plain.stdout);
}

/// `git clone` of `rev` of `repo` into `dir`, with no user or system config: what CI checks
/// out.
fn fresh_clone(repo: &Repo, rev: &str, dir: &Path) {
    let home = tempfile::tempdir().unwrap();
    let git = |args: &[&str], at: &Path| {
        let mut cmd = std::process::Command::new("git");
        testkit::hermetic(&mut cmd)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .current_dir(at)
            .args(args)
            .status()
            .unwrap()
    };
    let from = repo.path().display().to_string();
    let to = dir.display().to_string();
    assert!(git(&["clone", "-q", "--no-checkout", &from, &to], home.path()).success());
    assert!(git(&["checkout", "-q", rev], dir).success());
}

#[test]
fn a_candidate_that_changes_gitattributes_is_gated_on_what_a_fresh_clone_holds() {
    let repo = Repo::new();
    repo.write("run.sh", "set -e\necho ok\n")
        .write("notes.txt", "one\ntwo\n");
    let base = repo.commit_all("base");
    // Only the attributes change: run.sh and notes.txt are not in the patch at all.
    repo.write(".gitattributes", "*.sh text eol=crlf\n")
        .write("new.sh", "echo new\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path());
    let candidate = repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);

    let applied = apply(&repo, &base, out.path(), &[]);
    applied.assert_exit(0);
    let checkout = checkout_of(&applied.stdout);
    let clone = tempfile::tempdir().unwrap();
    fresh_clone(&repo, &candidate, clone.path());
    for file in ["run.sh", "new.sh", "notes.txt", ".gitattributes"] {
        assert_eq!(
            fs::read(Path::new(&checkout).join(file)).unwrap(),
            fs::read(clone.path().join(file)).unwrap(),
            "{file} is not what a fresh clone writes"
        );
    }
    assert_eq!(
        fs::read(Path::new(&checkout).join("run.sh")).unwrap(),
        b"set -e\r\necho ok\r\n"
    );
    // The manifest pack wrote hashes what CI checks out, and holds there.
    assert!(applied.stdout.contains("2/2 OK"), "{}", applied.stdout);

    // The suite that passes on the base fails on what CI would check out, as CI's would.
    let config = write_config(
        out.path(),
        &base,
        "[[suite]]\nname = \"script\"\nrun = \"sh run.sh\"\n",
    );
    let gated = tempfile::tempdir().unwrap();
    let run = run_config(&repo, &config, gated.path(), &[]);
    run.assert_exit(1);
    let summary = fs::read_to_string(gated.path().join("gate-summary.txt")).unwrap();
    assert!(
        summary.contains("verdict   FAIL: suite script"),
        "{summary}"
    );
}

#[test]
fn paths_with_a_filter_driver_are_named_as_not_checked() {
    let repo = Repo::new();
    repo.write("data/a.bin", "pointer a\n")
        .write("src.txt", "s\n");
    let base = repo.commit_all("base");
    repo.write(".gitattributes", "*.bin filter=lfs diff=lfs\n")
        .write("data/b.bin", "pointer b\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path());
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    let applied = apply(&repo, &base, out.path(), &["--json"]);
    applied.assert_exit(0);
    let body: serde_json::Value = serde_json::from_str(&applied.stdout).unwrap();
    let filtered = &body["candidate"]["filtered"];
    assert_eq!(
        *filtered,
        serde_json::json!(["data/a.bin", "data/b.bin"]),
        "{body}"
    );
    let text = apply(&repo, &base, out.path(), &[]).stdout;
    assert!(
        text.contains("filtered  2 paths with a filter= driver")
            && text.contains("NOT CHECKED")
            && text.contains("data/a.bin, data/b.bin"),
        "{text}"
    );
}

#[test]
fn a_gate_toml_of_suites_only_is_completed_by_the_command_line() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit_all("base");
    repo.write("a.txt", "a, edited\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path());
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    let project = out.path().join("project.toml");
    fs::write(&project, "[[suite]]\nname = \"ok\"\nrun = \"true\"\n").unwrap();
    let patch = out.path().join("build.patch");
    let manifest = out.path().join("candidate-manifest.sha256");
    let gated = tempfile::tempdir().unwrap();
    let mut flags = vec![
        "--base".to_string(),
        base.clone(),
        "--patch".into(),
        patch.display().to_string(),
        "--manifest".into(),
        manifest.display().to_string(),
    ];
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    run_config(&repo, &project, gated.path(), &flag_refs).assert_exit(0);
    // Without --manifest, nothing names it: one line naming the flag, exit 2.
    flags.truncate(4);
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let missing = run_config(&repo, &project, gated.path(), &flag_refs);
    missing.assert_exit(2);
    assert_eq!(
        missing.stderr.trim(),
        format!(
            "gate: error: {}: no `manifest`: set `manifest` in this file or pass --manifest FILE on \
             the command line",
            project.display()
        )
    );
    assert!(stdout_is_empty(&missing), "{}", missing.stdout);
}

fn stdout_is_empty(o: &Output) -> bool {
    o.stdout.trim().is_empty()
}
