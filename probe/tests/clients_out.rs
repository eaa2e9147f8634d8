//! `probe clients` and its --out: every file a run writes is on its record, so the next run
//! into the same folder takes them back; a run refused (exit 2) writes and removes nothing.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `probe clients ARGS --out DIR/out` with no clients cache and PATH = `path`; its exit code.
fn clients(dir: &Path, path: &str, args: &[&str]) -> i32 {
    let out = testkit::bin(PROBE)
        .arg("clients")
        .args(args)
        .arg("--out")
        .arg(dir.join("out"))
        .env("GATEKIT_CLIENTS_CACHE", dir.join("cache"))
        .env("HOME", dir)
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .unwrap();
    out.status.code().unwrap_or(-1)
}

/// Every file below `root` (the folders' own records and locks left out), relative to it.
fn files_below(root: &Path) -> BTreeSet<PathBuf> {
    walkdir(root)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name != ".gatekit-written" && name != ".gatekit-lock"
        })
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect()
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.extend(walkdir(&path));
        } else {
            all.push(path);
        }
    }
    all
}

/// Every path the records below `root` list, relative to `root`.
fn recorded_below(root: &Path) -> BTreeSet<PathBuf> {
    walkdir(root)
        .into_iter()
        .filter(|p| p.file_name().unwrap() == ".gatekit-written")
        .flat_map(|record| {
            let base = record
                .parent()
                .unwrap()
                .strip_prefix(root)
                .unwrap()
                .to_path_buf();
            std::fs::read(&record)
                .unwrap()
                .split(|b| *b == 0)
                .filter(|n| !n.is_empty())
                .map(|n| base.join(String::from_utf8_lossy(n).as_ref()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_file_clients_writes_is_on_its_record_and_the_next_run_takes_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // No client installed: the tables alone, on the record.
    assert_eq!(clients(dir.path(), "/nonexistent", &[]), 4);
    assert_eq!(
        files_below(&out),
        BTreeSet::from(["clients.json".into(), "clients.txt".into()])
    );
    assert_eq!(recorded_below(&out), files_below(&out));
    // The same again: the earlier run's files are its own, so it runs (exit 4 as before).
    assert_eq!(clients(dir.path(), "/nonexistent", &[]), 4);
    assert_eq!(recorded_below(&out), files_below(&out));
    // A client that says its version and does nothing: its folder, every point's files.
    let path = fake_claude(dir.path());
    for _ in 0..2 {
        assert_eq!(clients(dir.path(), &path, &["--only", "claude"]), 4);
        let written = files_below(&out);
        assert!(
            written.contains(Path::new("claude/results.json")),
            "{written:?}"
        );
        // Each file is on the record (listed before it is made, so a file a child never made
        // may be listed too).
        let recorded = recorded_below(&out);
        assert!(
            written.is_subset(&recorded),
            "{:?}",
            written.difference(&recorded)
        );
    }
    // The earlier tables went with the run that took the folder back.
    assert!(out.join("clients.json").is_file());
}

/// A folder `bin` with a `claude` that says its version and does nothing; PATH with it first.
fn fake_claude(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("claude");
    std::fs::write(&fake, "#!/bin/sh\necho '9.9.9 (fake)'\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[test]
fn a_refused_clients_run_writes_nothing_and_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = fake_claude(dir.path());
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    // An installed client whose folder is a link elsewhere: refused before anything is
    // written, here or there.
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("claude")).unwrap();
    assert_eq!(clients(dir.path(), &path, &["--only", "claude"]), 2);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "only the link");
    // After a run of its own, a refusal removes nothing of it either.
    std::fs::remove_file(out.join("claude")).unwrap();
    assert_eq!(clients(dir.path(), "/nonexistent", &[]), 4);
    let before = std::fs::read(out.join("clients.json")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("claude")).unwrap();
    assert_eq!(clients(dir.path(), &path, &["--only", "claude"]), 2);
    assert_eq!(std::fs::read(out.join("clients.json")).unwrap(), before);
    assert!(out.join("clients.txt").is_file());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// clients.txt and the tables `probe clients` prints keep within 120 columns, with a client
/// whose version line is long and notes that are whole sentences.
#[test]
fn the_clients_tables_keep_within_120_columns() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '9.9.9 (a fake client whose version line goes on about its build, its \
         channel and the day it was made)'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let out = testkit::bin(PROBE)
        .args(["clients", "--out"])
        .arg(dir.path().join("out"))
        .env("GATEKIT_CLIENTS_CACHE", dir.path().join("cache"))
        .env("HOME", dir.path())
        .env("PATH", &path)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let file = std::fs::read_to_string(dir.path().join("out/clients.txt")).unwrap();
    // The long values are there, wrapped in their columns.
    assert!(file.contains("9.9.9 (a"), "{file}");
    assert!(file.contains("turn (20 results)"), "{file}");
    for (what, text) in [("stdout", &stdout), ("clients.txt", &file)] {
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{what}: {line}\n\n{text}");
        }
    }
}

/// A client's folder inside `probe clients`' --out keeps its own record: a bracket run into it
/// afterwards takes back what the clients run wrote there, and the next clients run takes back
/// the bracket's.
#[test]
fn a_clients_folder_and_a_bracket_run_into_it_take_each_others_files_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = fake_claude(dir.path());
    assert_eq!(clients(dir.path(), &path, &["--only", "claude"]), 4);
    let client = format!(
        "{PROBE} test-client --mcp-config {{mcp_config}} --n {{n}} --saved-dir '{}'",
        dir.path().display()
    );
    let bracket = testkit::bin(PROBE)
        .args(["bracket", "--points", "10", "--client", &client, "--out"])
        .arg(out.join("claude"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        bracket.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&bracket.stderr)
    );
    assert_eq!(clients(dir.path(), &path, &["--only", "claude"]), 4);
    let written = files_below(&out);
    assert!(written.is_subset(&recorded_below(&out)), "{written:?}");
    assert!(
        !written.iter().any(|p| p.starts_with("claude/points/n-10/")),
        "the bracket run's point was not taken back: {written:?}"
    );
}
