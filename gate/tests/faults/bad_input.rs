//! Bad gate.toml values and `gate check` input: one-line FILE:LINE errors before anything
//! runs, and no link, climbing or absolute path is ever followed.

use std::fs;

use crate::common::{gate, stderr, stdout, Fixture};
use testkit::Repo;

use super::{json, sha256};

/// What the one duration rule says of a timeout too long to be one, in gate.toml, mutants.toml
/// and on every command line alike.
const TOO_LONG: &str = "it is too long (at most 64 characters, and 12 digits to a number)";

// ---- 4. gate.toml ----------------------------------------------------------------------------

#[test]
fn bad_gate_toml_values_are_file_line_errors_before_anything_runs() {
    let f = Fixture::new();
    f.pack();
    let marker = f.out.path().join("ran");
    let suite = format!(
        "[[suite]]\nname = \"s\"\nrun = \"touch '{}'\"\n",
        marker.display()
    );
    let out_dir = f.out.path().join("never");
    for (body, expect) in [
        (String::new(), "gate.toml: no [[suite]]".to_string()),
        (
            format!("[env]\nA = \"x\\u0000y\"\n\n{suite}"),
            "gate.toml:6: env A: the value holds a NUL byte".into(),
        ),
        (
            format!("{suite}env = {{ B = \"\\u0000\" }}\n"),
            "gate.toml:8: env B: the value holds a NUL byte".into(),
        ),
        (
            format!("{suite}timeout = \"99999999999999999999d\"\n"),
            "gate.toml:8: timeout:".into(),
        ),
        (format!("{suite}timeout = \"31d\"\n"), "30 days".into()),
        // The one duration rule caps the text's length, as mutants.toml and --timeout do.
        (
            format!("{suite}timeout = \"{}\"\n", "1s ".repeat(40)),
            TOO_LONG.to_string(),
        ),
        // The one path rule: a glob, and a [worktree] path, stay in the candidate's tree.
        (
            "[[suite]]\nglob = \"../x/*.sh\"\n".to_string(),
            "gate.toml:6: `glob` \"../x/*.sh\" climbs out of the tree with `..`".into(),
        ),
        (
            "[[suite]]\nglob = \".\"\n".to_string(),
            "gate.toml:6: `glob` \".\" names the tree's root itself".into(),
        ),
        (
            format!("{suite}[worktree]\nlink = [\"../deps\"]\n"),
            "gate.toml:9: worktree.link \"../deps\" climbs out of the tree with `..`".into(),
        ),
    ] {
        let config = f.config(&body);
        let out = f.run(&config, &out_dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{body}: {}", stderr(&out));
        assert!(stderr(&out).contains(&expect), "{body}: {}", stderr(&out));
        assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    assert!(!marker.exists(), "a suite ran");
    assert!(!out_dir.exists(), "the output folder was made");
}

#[test]
fn a_manifest_line_naming_a_path_out_of_the_tree_is_refused_at_its_line_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "a\n").unwrap();
    let good = format!("{}  a\n", sha256(b"a\n"));
    for (bad, problem) in [
        ("../a", "has a `..` component"),
        ("/etc/passwd", "absolute path"),
        (".", "names the tree itself"),
        ("a/", "ends with `/`"),
    ] {
        fs::write(
            dir.path().join("m.sha256"),
            format!("{good}{}  {bad}\n", sha256(b"a\n")),
        )
        .unwrap();
        let out = gate()
            .current_dir(dir.path())
            .args(["check", "m.sha256"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("m.sha256:2:") && err.contains(problem),
            "{bad}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn glob_matches_that_are_links_out_or_not_executable_get_rows_and_never_run() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-outside");
    let evil = outside.path().join("evil.sh");
    fs::write(&evil, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&evil, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The link out is in the base, so the candidate's manifest (which refuses links out of the
    // tree) never names it: only the glob finds it.
    let repo = Repo::new();
    repo.write("README", "r\n");
    fs::create_dir_all(repo.path().join("scripts")).unwrap();
    std::os::unix::fs::symlink(&evil, repo.path().join("scripts/test-out.sh")).unwrap();
    let base = repo.commit_all("base");
    repo.write(
        "scripts/test-ok.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .chmod_x("scripts/test-ok.sh")
    .write("scripts/test-plain.sh", "#!/bin/sh\nexit 0\n")
    .write("scripts/test-inside.sh", "");
    fs::remove_file(repo.path().join("scripts/test-inside.sh")).unwrap();
    std::os::unix::fs::symlink("test-ok.sh", repo.path().join("scripts/test-inside.sh")).unwrap();
    repo.git(["add", "-A"]);
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    let config = cand.path().join("gate.toml");
    fs::write(
        &config,
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nglob = \"scripts/test-*.sh\"\n"),
    )
    .unwrap();
    let out_dir = cand.path().join("o");
    let out = gate()
        .current_dir(repo.path())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(!marker.exists(), "a link out of the tree was run");
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    let row = |name: &str| {
        summary
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {summary}"))
            .to_string()
    };
    assert!(
        row("scripts/test-out.sh").contains("a link out of the tree"),
        "{summary}"
    );
    assert!(
        row("scripts/test-plain.sh").contains("not executable"),
        "{summary}"
    );
    assert!(row("scripts/test-ok.sh").contains("exit 0"), "{summary}");
    assert!(
        row("scripts/test-inside.sh").contains("exit 0"),
        "{summary}"
    );
    let report = json(&out_dir.join("gate.json"));
    let refused: Vec<_> = report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["refused"].clone())
        .collect();
    assert_eq!(
        refused,
        vec![
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::json!("a link out of the tree"),
            serde_json::json!("not executable"),
        ]
    );
}

// ---- 5. gate check ---------------------------------------------------------------------------

#[test]
fn check_refuses_a_dir_that_is_a_file_or_missing_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.txt"), "a\n").unwrap();
    let manifest = tmp.path().join("m.sha256");
    fs::write(&manifest, format!("{}  a.txt\n", sha256(b"a\n"))).unwrap();
    for dir in [tmp.path().join("a.txt"), tmp.path().join("missing")] {
        let out = gate()
            .arg("check")
            .arg("--manifest")
            .arg(&manifest)
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(&dir.display().to_string()));
    }
}

#[test]
fn check_never_follows_a_link_out_of_dir_nor_a_path_that_climbs_or_is_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    fs::create_dir(&dir).unwrap();
    let secret = tmp.path().join("secret.txt");
    fs::write(&secret, "outside\n").unwrap();
    fs::write(dir.join("real.txt"), "outside\n").unwrap();
    // The manifest's digest is right for the outside file's content.
    let digest = sha256(b"outside\n");
    std::os::unix::fs::symlink(&secret, dir.join("link.txt")).unwrap();
    let cases = [
        (format!("{digest}  link.txt\n"), "leads out of the tree"),
        (format!("{digest}  ../secret.txt\n"), "`..`"),
        (format!("{digest}  {}\n", secret.display()), "absolute path"),
    ];
    for (line, why) in cases {
        let manifest = tmp.path().join("m.sha256");
        fs::write(&manifest, &line).unwrap();
        let out = gate()
            .arg("check")
            .arg("--manifest")
            .arg(&manifest)
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{line}: {}", stdout(&out));
        assert!(stdout(&out).is_empty(), "{line}: {}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{line}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{line}: {}", stderr(&out));
    }
}
