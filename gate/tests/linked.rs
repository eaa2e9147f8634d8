//! `[worktree] link` never reaches into the user's folder: the book's own example pairs
//! `npm ci` (which empties `node_modules`) with `link = ["node_modules"]`, and vitest writes
//! `node_modules/.vite` on every run. Run for real, the user's `node_modules` must come out
//! byte for byte and time for time as it went in, and a run that does write into the user's
//! folder by its own path fails loudly (exit 4).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::common::pack_with_config;
use testkit::Repo;

/// One entry: its path, mode, size, mtime (seconds, nanoseconds) and bytes.
type Entry = (String, u32, u64, i64, i64, Vec<u8>);

/// Every entry under `root` (links not followed).
fn listing(root: &Path) -> Vec<Entry> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<Entry>) {
        let meta = std::fs::symlink_metadata(at).unwrap();
        let rel = at
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let bytes = if meta.is_file() {
            std::fs::read(at).unwrap()
        } else {
            Vec::new()
        };
        let len = if meta.is_dir() { 0 } else { meta.len() };
        let (secs, nsecs) = if meta.is_dir() {
            (0, 0)
        } else {
            (meta.mtime(), meta.mtime_nsec())
        };
        out.push((rel, meta.mode(), len, secs, nsecs, bytes));
        if meta.is_dir() {
            for e in std::fs::read_dir(at).unwrap() {
                walk(root, &e.unwrap().path(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// A Node project with vitest installed in the user's checkout by a real `npm install` (its
/// packages kept in `cache`, inside the test's folder) and run once by the user, so
/// `node_modules/.vite` holds the user's own results; `None` (a skip said) without npm or the
/// registry.
fn vitest_project(cache: &Path) -> Option<(Repo, String)> {
    let repo = Repo::new();
    repo.write(".gitignore", "node_modules/\n")
        .write(
            "package.json",
            r#"{ "name": "adder", "version": "1.0.0", "private": true, "type": "module" }"#,
        )
        .write("src/add.js", "export const add = (a, b) => a + b;\n")
        .write(
            "test/add.test.js",
            "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\ntest('adds', () => expect(add(2, 3)).toBe(5));\n",
        );
    let install = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--save-dev",
            "vitest@1.6.0",
        ])
        .arg("--cache")
        .arg(cache)
        .current_dir(repo.path())
        .output();
    if !install.as_ref().is_ok_and(|o| o.status.success()) {
        testkit::skip(
            "npm-vitest",
            "npm could not install vitest (no npm, or the registry is out of reach)",
        );
        return None;
    }
    let own = Command::new("node_modules/.bin/vitest")
        .arg("run")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        own.status.success(),
        "vitest in the user's checkout: {}",
        String::from_utf8_lossy(&own.stdout)
    );
    assert!(
        repo.path()
            .join("node_modules/.vite/vitest/results.json")
            .is_file(),
        "vitest keeps its results under node_modules/.vite"
    );
    let base = repo.commit_all("base");
    repo.write("src/add.js", "export const add = (a, b) => b + a;\n");
    repo.git(["add", "-A"]);
    Some((repo, base))
}

#[test]
fn npm_ci_as_setup_and_vitest_as_suite_leave_the_users_linked_node_modules_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("npm-cache");
    let Some((repo, base)) = vitest_project(&cache) else {
        return;
    };
    let before = listing(&repo.path().join("node_modules"));
    // The book's `[worktree]` example, as a new user writes it.
    let body = "[worktree]\nsetup = \"npm ci --prefer-offline --no-audit --no-fund\"\nlink = [\"node_modules\"]\n\n[[suite]]\nname = \"unit\"\nrun = \"node_modules/.bin/vitest run\"\n";
    let config = pack_with_config(&repo, &base, tmp.path(), body);
    let mut cmd = crate::common::gate();
    cmd.current_dir(repo.path())
        .env("npm_config_cache", &cache)
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(tmp.path().join("gate-out"));
    let run = testkit::Output::of(&mut cmd);
    run.assert_exit(0);
    assert!(run.stdout.contains("setup     npm ci"), "{run}");
    let after = listing(&repo.path().join("node_modules"));
    assert_eq!(before.len(), after.len(), "entries of node_modules: {run}");
    assert!(
        before == after,
        "the user's node_modules changed: {:?}",
        before
            .iter()
            .zip(&after)
            .find(|(a, b)| a != b)
            .map(|(a, b)| (&a.0, &b.0))
    );
}

#[test]
fn a_suite_that_writes_into_the_users_linked_folder_by_its_path_fails_the_run_with_exit_4() {
    let repo = Repo::new();
    repo.write(".gitignore", "deps/\n")
        .write("lib.sh", "add() { echo $(( $1 + $2 )); }\n")
        .write(
            "test.sh",
            ". ./lib.sh\n. deps/helper.sh\necho cache >> \"$USER_DEPS/cache.txt\"\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed'\n",
        );
    let base = repo.commit_all("base");
    repo.write("deps/helper.sh", "helper=1\n");
    repo.write("lib.sh", "add() { echo $(( $2 + $1 )); }\n");
    repo.git(["add", "lib.sh"]);
    let out = tempfile::tempdir().unwrap();
    let body =
        "[worktree]\nlink = [\"deps\"]\n\n[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n";
    let config = pack_with_config(&repo, &base, out.path(), body);
    // Writing into the checkout's copy is the checkout's own business.
    let private = testkit::Output::of(
        crate::common::gate()
            .current_dir(repo.path())
            .env("USER_DEPS", "deps")
            .args(["run", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(out.path().join("private")),
    );
    private.assert_exit(0);
    assert!(!repo.path().join("deps/cache.txt").exists(), "{private}");
    // Writing into the user's folder by its absolute path is caught and named.
    let user_deps = repo.path().join("deps");
    let reached = testkit::Output::of(
        crate::common::gate()
            .current_dir(repo.path())
            .env("USER_DEPS", &user_deps)
            .args(["run", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(out.path().join("reached")),
    );
    reached.assert_exit(4);
    assert!(
        reached.stderr.contains("your own folder") && reached.stderr.contains("deps/cache.txt"),
        "{reached}"
    );
    assert!(reached.stdout.starts_with("gate FAIL"), "{reached}");
}
