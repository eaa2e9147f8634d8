//! Where `suggest`'s lines come from (a candidate, a diff with uncommitted and untracked files,
//! whole files), where its suite comes from, what it skips, and what it refuses: bad input is
//! one line and exit 2 with nothing written, an existing `--out` is replaced only with
//! `--force`, a change with no source file in it writes nothing and exits 0.

use super::*;

const LIB: &str = "pub fn fee(a: u64) -> u64 {\n    a / 100\n}\n";
const LIB2: &str = "pub fn fee(a: u64) -> u64 {\n    a / 100\n}\n\npub fn cap(a: u64) -> u64 {\n    if a > 9 { 9 } else { a }\n}\n";

#[test]
fn a_candidate_is_read_from_its_own_checkout_and_the_users_tree_is_left_alone() {
    let repo = Repo::new();
    repo.write("src/lib.rs", LIB).write(
        "gate.toml",
        "[[suite]]\nname = \"cargo\"\nrun = \"cargo test\"\ntimeout = \"5m\"\n",
    );
    let base = repo.commit_all("base");
    // The candidate as `gate pack` hands it over: the staged change's patch and manifest.
    repo.write("src/lib.rs", LIB2);
    repo.git(["add", "-A"]);
    let dir = packed(&repo, &base, "src/lib.rs");
    std::fs::write(
        dir.path().join("gate.toml"),
        format!("base = \"{base}\"\npatch = \"c.patch\"\nmanifest = \"c.sha256\"\n\n[[suite]]\nname = \"unit\"\nrun = \"cargo test --lib\"\n"),
    )
    .unwrap();
    repo.git(["reset", "-q", "--hard"]);
    let status = repo.status();
    let gate = dir.path().join("gate.toml");
    let json = suggest_json(repo.path(), &["--candidate", gate.to_str().unwrap()]);
    let lines = proposed_lines(&json, "src/lib.rs");
    assert!(!lines.is_empty(), "{json:#}");
    assert!(
        lines.is_subset(&changed_lines(LIB, LIB2)),
        "{lines:?}: only the candidate's lines"
    );
    // The candidate's own gate.toml names the suite, with its command.
    assert_eq!(json["suites"]["unit"]["run"], "cargo test --lib");
    assert_eq!(repo.status(), status, "the user's tree changed");
    assert_eq!(repo.read("src/lib.rs"), LIB.as_bytes());
    assert!(
        repo.extra_worktrees().is_empty(),
        "a checkout was left behind"
    );
    // The anchors are the candidate's: found once each in its tree.
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("s.toml");
    let out = mutants(
        repo.path(),
        &[
            "suggest",
            "--candidate",
            gate.to_str().unwrap(),
            "--out",
            spec.to_str().unwrap(),
        ],
    );
    out.assert_exit(0);
    repo.git(["apply", dir.path().join("c.patch").to_str().unwrap()]);
    mutants(repo.path(), &["check", spec.to_str().unwrap()]).assert_exit(0);
}

#[test]
fn a_diff_takes_uncommitted_and_untracked_files_and_skips_generated_ones() {
    let repo = repo_with_change(&[("src/lib.rs", LIB), ("src/a \"b\"\tü.rs", LIB)], &[]);
    repo.write("src/lib.rs", LIB2)
        .write("src/a \"b\"\tü.rs", LIB2)
        .write("src/new.rs", "pub fn one() -> u32 {\n    1 + 1\n}\n")
        .write("src/gen.rs", "pub fn g() -> u32 {\n    2 * 2\n}\n")
        .write(".gitattributes", "src/gen.rs linguist-generated\n")
        .write(".gitignore", "ignored.rs\n")
        .write("ignored.rs", "pub fn i() -> u32 {\n    3 - 3\n}\n");
    let json = suggest_json(repo.path(), &["--diff", "HEAD"]);
    assert!(proposed_lines(&json, "src/lib.rs").is_subset(&changed_lines(LIB, LIB2)));
    // A name git quotes is read back as the file's own.
    let odd = proposed_lines(&json, "src/a \"b\"\tü.rs");
    assert!(
        !odd.is_empty() && odd.is_subset(&changed_lines(LIB, LIB2)),
        "{json:#}"
    );
    // An untracked file is wholly new.
    assert!(!proposed_lines(&json, "src/new.rs").is_empty(), "{json:#}");
    let files = json["files"].as_array().unwrap();
    let gen = files.iter().find(|f| f["file"] == "src/gen.rs").unwrap();
    assert_eq!(gen["skipped"], "generated (linguist-generated attribute)");
    assert!(proposed_lines(&json, "src/gen.rs").is_empty());
    assert!(files.iter().all(|f| f["file"] != "ignored.rs"));
    // In TOML mode the skip is named on stderr and at the top of the spec.
    let out = mutants(repo.path(), &["suggest", "--diff", "HEAD"]);
    out.assert_exit(0);
    assert!(
        out.stderr
            .contains("mutants: skipped src/gen.rs: generated (linguist-generated attribute)"),
        "{out}"
    );
    assert!(
        out.stdout.contains("# Skipped src/gen.rs: generated"),
        "{out}"
    );
    let status = repo.status();
    check_every_anchor(repo.path(), &["--diff", "HEAD"]);
    assert_eq!(repo.status(), status);
}

#[test]
fn whole_files_of_dir_are_proposed_for_every_line() {
    let repo = repo_with_change(&[("src/lib.rs", LIB2), ("src/other.rs", LIB)], &[]);
    let json = suggest_json(repo.path(), &["--dir", ".", "src/lib.rs"]);
    let lines = proposed_lines(&json, "src/lib.rs");
    // Lines the last commit never touched: whole files have no diff.
    assert!(lines.contains(&2) && lines.contains(&6), "{lines:?}");
    assert!(proposed_lines(&json, "src/other.rs").is_empty());
    // Relative to DIR, as `git -C DIR` takes it; a folder is its files.
    let parent = repo.path().parent().unwrap();
    let name = repo.path().file_name().unwrap().to_str().unwrap();
    let dir_json = suggest_json(parent, &["--dir", name, "src"]);
    assert!(!proposed_lines(&dir_json, "src/other.rs").is_empty());
    // No PATH: every tracked source file.
    let every = suggest_json(repo.path(), &["--dir", "."]);
    assert_eq!(every["counts"]["files"], 2, "{every:#}");
    check_every_anchor(repo.path(), &["--dir", "."]);
}

#[test]
fn an_existing_out_is_kept_unless_forced_and_bad_input_is_one_line_exit_2() {
    let repo = repo_with_change(&[("src/lib.rs", LIB)], &[("src/lib.rs", LIB2)]);
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("mutants-suggested.toml");
    std::fs::write(&spec, "mine\n").unwrap();
    let s = spec.to_str().unwrap();
    let out = mutants(repo.path(), &["suggest", "--diff", "HEAD~1", "--out", s]);
    out.assert_exit(2);
    assert!(
        out.stderr.contains("exists") && out.stderr.contains("--force"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), "mine\n");
    let out = mutants(
        repo.path(),
        &["suggest", "--diff", "HEAD~1", "--out", s, "--force"],
    );
    out.assert_exit(0);
    assert!(std::fs::read_to_string(&spec)
        .unwrap()
        .contains("[[mutant]]"));
    // Nothing on stdout when the spec goes to a file.
    assert_eq!(out.stdout, "");
    // --out onto an input (the suites' mutants.toml) is refused even with --force.
    let onto = repo.path().join("mutants.toml");
    let out = mutants(
        repo.path(),
        &[
            "suggest",
            "--diff",
            "HEAD~1",
            "--out",
            onto.to_str().unwrap(),
            "--force",
        ],
    );
    out.assert_exit(2);
    assert_eq!(
        repo.read("mutants.toml"),
        b"[suites.unit]\nrun = \"true\"\n"
    );

    let outside = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["suggest", "--diff", "no-such-rev"], "no-such-rev"),
        (
            &["suggest", "--dir", outside.path().to_str().unwrap()],
            "not a git repository",
        ),
        (&["suggest", "--dir", ".", "../x.rs"], "x.rs"),
        (
            &["suggest", "--dir", ".", "/etc/hostname"],
            "outside the repository",
        ),
        (
            &["suggest", "--diff", "HEAD", "--suite", "nope"],
            "no such suite",
        ),
        (&["suggest"], "required"),
    ];
    for (args, says) in cases {
        let out = mutants(repo.path(), args);
        out.assert_exit(2);
        assert!(out.stderr.contains(says), "{args:?}: {out}");
        assert_eq!(out.stdout, "", "{args:?}");
    }
}

#[test]
fn several_suites_need_a_suite_and_none_is_a_placeholder_the_spec_reader_refuses() {
    let repo = repo_with_change(&[("src/lib.rs", LIB)], &[("src/lib.rs", LIB2)]);
    repo.write(
        "mutants.toml",
        "[suites.unit]\nrun = \"true\"\n\n[suites.slow]\nrun = \"sleep 1\"\n",
    );
    let out = mutants(repo.path(), &["suggest", "--diff", "HEAD~1"]);
    out.assert_exit(2);
    assert!(
        out.stderr.contains("several suites (slow, unit)") && out.stderr.contains("--suite"),
        "{out}"
    );
    assert_eq!(out.stdout, "");
    let json = suggest_json(repo.path(), &["--diff", "HEAD~1", "--suite", "slow"]);
    assert_eq!(json["suites"]["slow"]["run"], "sleep 1");
    assert!(json["suites"].get("unit").is_none());

    // No suite anywhere: a placeholder that `check` refuses at its line until it is filled in.
    std::fs::remove_file(repo.path().join("mutants.toml")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("s.toml");
    let out = mutants(
        repo.path(),
        &[
            "suggest",
            "--diff",
            "HEAD~1",
            "--out",
            spec.to_str().unwrap(),
        ],
    );
    out.assert_exit(0);
    assert!(out.stderr.contains("placeholder"), "{out}");
    let text = std::fs::read_to_string(&spec).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("run = \"TODO:"))
        .unwrap()
        + 1;
    let check = mutants(repo.path(), &["check", spec.to_str().unwrap()]);
    check.assert_exit(2);
    assert!(
        check
            .stderr
            .contains(&format!("s.toml:{line}: suite \"tests\"")),
        "{check}"
    );
    // Filled in, it checks.
    std::fs::write(
        &spec,
        text.replace("TODO: the command that runs your tests", "true"),
    )
    .unwrap();
    mutants(repo.path(), &["check", spec.to_str().unwrap()]).assert_exit(0);
}

#[test]
fn a_change_with_no_source_file_writes_nothing_and_exits_0() {
    let repo = repo_with_change(
        &[("README.md", "a\n"), ("data.bin", "x")],
        &[("README.md", "b\n"), ("data.bin", "\0\u{1}")],
    );
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("s.toml");
    let out = mutants(
        repo.path(),
        &[
            "suggest",
            "--diff",
            "HEAD~1",
            "--out",
            spec.to_str().unwrap(),
        ],
    );
    out.assert_exit(0);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("no source file in the changes"),
        "{out}"
    );
    assert!(!spec.exists());
    let out = mutants(repo.path(), &["suggest", "--diff", "HEAD~1"]);
    out.assert_exit(0);
    assert_eq!(out.stdout, "");
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("no source file"))
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    // For tools, the files and why each got nothing.
    let json = suggest_json(repo.path(), &["--diff", "HEAD~1"]);
    assert_eq!(json["mutants"], serde_json::json!([]));
    assert_eq!(
        json["files"],
        serde_json::json!([
            {"file": "README.md", "language": null, "proposed": 0, "dropped": 0,
             "skipped": "not a source file of a known language"},
            {"file": "data.bin", "language": null, "proposed": 0, "dropped": 0, "skipped": "binary"},
        ])
    );
    assert_eq!(json["counts"]["skipped"], 2);
    // A deleted source file has no lines either.
    let repo = repo_with_change(&[("src/lib.rs", LIB)], &[]);
    std::fs::remove_file(repo.path().join("src/lib.rs")).unwrap();
    let out = mutants(repo.path(), &["suggest", "--diff", "HEAD"]);
    out.assert_exit(0);
    assert_eq!(out.stdout, "");
}
