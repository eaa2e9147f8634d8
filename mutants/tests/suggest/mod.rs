//! `mutants suggest` end to end on real repositories: each language's change proposed for on
//! its changed lines only, every anchor found once by `mutants check`; a candidate read from
//! its own checkout; whole files; the output guard; suites; generated and untouched files.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use testkit::{Output, Repo};

mod inputs;
mod langs;
mod run;

/// `mutants ARGS` in `dir`.
fn mutants(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = testkit::bin(env!("CARGO_BIN_EXE_mutants"));
    cmd.current_dir(dir).args(args);
    Output::of(&mut cmd)
}

/// `suggest ARGS --json`, which must succeed, as JSON.
fn suggest_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["suggest"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = mutants(dir, &all);
    out.assert_exit(0);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The lines of `file` each proposal (controls aside) of `json` starts on.
fn proposed_lines(json: &Value, file: &str) -> BTreeSet<u64> {
    json["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["file"] == file && m["expect"] == "kill")
        .map(|m| m["line"].as_u64().unwrap())
        .collect()
}

/// Writes the TOML spec `suggest ARGS --out SPEC` makes and proves `mutants check` finds every
/// anchor exactly once in `dir`'s files; returns the spec's text.
fn check_every_anchor(dir: &Path, args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("suggested.toml");
    let mut all = vec!["suggest"];
    all.extend_from_slice(args);
    all.extend(["--out", spec.to_str().unwrap()]);
    let out = mutants(dir, &all);
    out.assert_exit(0);
    let text = std::fs::read_to_string(&spec).unwrap();
    let check = mutants(dir, &["check", spec.to_str().unwrap()]);
    assert_eq!(check.code, Some(0), "{check}\n{text}");
    let entries = text.matches("[[mutant]]").count();
    assert!(entries > 0, "{text}");
    assert!(
        check
            .stdout
            .contains(&format!("{entries} anchors, each found exactly once")),
        "{check}"
    );
    text
}

/// A repository with `mutants.toml`'s one suite, `files` committed, then `changed` committed
/// over them: the change is `HEAD~1..HEAD`.
fn repo_with_change(files: &[(&str, &str)], changed: &[(&str, &str)]) -> Repo {
    let repo = Repo::new();
    repo.write("mutants.toml", "[suites.unit]\nrun = \"true\"\n");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("before");
    for (path, text) in changed {
        repo.write(path, text);
    }
    repo.commit_all("the change");
    repo
}

/// The 1-based lines of `after` that differ from `before` at the same place or are new (the
/// tests change lines in place or append them, so this is the diff's added lines).
fn changed_lines(before: &str, after: &str) -> BTreeSet<u64> {
    let old: Vec<&str> = before.lines().collect();
    after
        .lines()
        .enumerate()
        .filter(|(i, l)| old.get(*i) != Some(l))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

/// The staged change against `base` as `gate pack` hands a candidate over: `c.patch` (binary)
/// and `c.sha256` (the manifest of `file`, the one file it changes), in a temp dir of their own.
fn packed(repo: &Repo, base: &str, file: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let patch = repo
        .git_output(["diff", "--cached", "--binary", base])
        .stdout;
    std::fs::write(dir.path().join("c.patch"), patch).unwrap();
    let sums = std::process::Command::new("sha256sum")
        .current_dir(repo.path())
        .arg(file)
        .output()
        .unwrap()
        .stdout;
    std::fs::write(dir.path().join("c.sha256"), sums).unwrap();
    dir
}
