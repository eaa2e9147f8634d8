//! Real trees: a candidate of more paths than a command line can carry packs, applies, is
//! checked and has its drift found; symlinks of every kind and submodule bumps are packed,
//! applied and checked as git records them (a link by its target, never followed).

use crate::common::{gate, stderr, stdout};
use testkit::Repo;

/// Long names, so 30,000 of them (about 2.5 MB) are more than Linux's 2 MB argument limit.
fn name(i: usize) -> String {
    format!(
        "generated/a/fairly/deep/folder/for/many/files/{:03}/file-with-a-long-name-{i:05}.txt",
        i / 1000
    )
}

#[test]
fn a_candidate_of_30000_paths_packs_applies_and_finds_drift() {
    const N: usize = 30_000;
    let repo = Repo::new();
    repo.write("README", "base\n");
    let base = repo.commit_all("base");
    // Drift: a commit on main after the base that touches the last candidate path.
    repo.write(name(N - 1), "main's version\n");
    let head = repo.commit_all("touches a candidate path");
    repo.git(["checkout", "-q", "-b", "work", &base]);
    for i in 0..N {
        repo.write(name(i), format!("{i}\n"));
    }
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    let manifest = out.path().join("candidate-manifest.sha256");
    let applied = gate()
        .current_dir(repo.path())
        .args([
            "apply", "--base", &base, "--head", &head, "--json", "--patch",
        ])
        .arg(out.path().join("build.patch"))
        .arg("--manifest")
        .arg(&manifest)
        .output()
        .unwrap();
    // Drift is a finding: exit 1, with the one commit named.
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    let c = &v["candidate"];
    assert_eq!(
        c["manifest"]["summary"],
        format!("{N}/{N} OK"),
        "{}",
        stdout(&applied)
    );
    assert_eq!(c["drift"].as_array().unwrap().len(), 1, "{}", c["drift"]);
    assert_eq!(c["drift"][0]["sha"], head.as_str());
    // Each drifting commit names the candidate paths it touched.
    assert_eq!(c["drift"][0]["paths"], serde_json::json!([name(N - 1)]));
    if let Some(wt) = c["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    let checked = gate()
        .current_dir(repo.path())
        .args(["check", "--manifest"])
        .arg(&manifest)
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert!(
        stdout(&checked).contains(&format!("{N}/{N} OK")),
        "{}",
        stdout(&checked)
    );
}

#[test]
fn links_and_submodule_bumps_are_checked_as_git_records_them() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n").write("d/b.txt", "b\n");
    let first = repo.commit_all("first");
    // A submodule at the first commit (any commit id will do for a gitlink).
    repo.git([
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{first},vendor/sub"),
    ]);
    repo.git(["commit", "-q", "-m", "base with a submodule"]);
    let base = repo.head();
    let outside = tempfile::tempdir().unwrap();
    let abs_target = outside.path().join("secret.txt");
    std::fs::write(&abs_target, "not the candidate's\n").unwrap();
    for (link, target) in [
        ("rel", "a.txt"),
        ("d/up", "../a.txt"),
        ("dangling", "nowhere/at/all"),
        ("abs", abs_target.to_str().unwrap()),
    ] {
        std::os::unix::fs::symlink(target, repo.path().join(link)).unwrap();
    }
    repo.git([
        "update-index",
        "--cacheinfo",
        &format!("160000,{base},vendor/sub"),
    ]);
    repo.git(["add", "rel", "d/up", "dangling", "abs"]);
    let out = tempfile::tempdir().unwrap();
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    assert!(
        stdout(&packed).contains("1 submodule bump"),
        "{}",
        stdout(&packed)
    );
    let manifest = out.path().join("candidate-manifest.sha256");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // A link's line is the digest of its target, as git stores it.
    use sha2::Digest as _;
    let digest = |b: &[u8]| {
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    assert!(
        text.contains(&format!("{}  rel\n", digest(b"a.txt"))),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}  dangling\n", digest(b"nowhere/at/all"))),
        "{text}"
    );
    assert!(!text.contains("vendor/sub"), "{text}");

    let apply = |manifest: &std::path::Path| {
        gate()
            .current_dir(repo.path())
            .args(["apply", "--json", "--base", &base, "--patch"])
            .arg(out.path().join("build.patch"))
            .arg("--manifest")
            .arg(manifest)
            .output()
            .unwrap()
    };
    let applied = apply(&manifest);
    assert_eq!(
        applied.status.code(),
        Some(0),
        "{}{}",
        stdout(&applied),
        stderr(&applied)
    );
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(v["candidate"]["manifest"]["summary"], "4/4 OK");
    let wt = v["candidate"]["worktree"].as_str().unwrap().to_string();
    let ls = std::process::Command::new("git")
        .args(["-C", &wt, "ls-files", "--stage", "vendor/sub"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ls.stdout).starts_with(&format!("160000 {base}")),
        "the bump is not in the applied index"
    );
    repo.remove_checkout(&wt);

    // A manifest that names another target for a link is a finding, even when the file the
    // other target names has the same content.
    let forged = text.replace(&digest(b"a.txt"), &digest(b"d/b.txt"));
    let forged_path = out.path().join("forged.sha256");
    std::fs::write(&forged_path, forged).unwrap();
    let applied = apply(&forged_path);
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(
        v["candidate"]["manifest"]["summary"], "3/4 OK, 1 FAILED",
        "{}",
        v["candidate"]["manifest"]
    );
    if let Some(wt) = v["candidate"]["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    assert_eq!(
        std::fs::read_to_string(&abs_target).unwrap(),
        "not the candidate's\n"
    );
}

/// `gate check` and `sha256sum -c`, without the capabilities that let root read any file, so a
/// file of mode 000 is unreadable to both whoever runs the tests. `None` when that cannot be
/// arranged (root without `setpriv`).
fn unprivileged(program: &str) -> Option<assert_cmd::Command> {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false);
    if !root {
        return Some(testkit::bin(program));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let mut cmd = testkit::bin(setpriv);
    cmd.args(["--bounding-set=-all", "--inh-caps=-all", program]);
    Some(cmd)
}

/// The first line where `got` and `want` differ, so a failure names one line, not 3,000.
#[track_caller]
fn same_lines(got: &str, want: &str) {
    for (n, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", n + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count(), "line count");
    assert_eq!(got.ends_with('\n'), want.ends_with('\n'), "final newline");
}

#[test]
fn a_manifest_of_many_files_gets_exactly_the_statuses_and_text_of_a_file_by_file_check() {
    use std::fmt::Write as _;
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    let sha = |b: &[u8]| {
        use sha2::Digest as _;
        sha2::Sha256::digest(b)
            .iter()
            .fold(String::new(), |mut s, x| {
                let _ = write!(s, "{x:02x}");
                s
            })
    };
    // (path, digest in the manifest, the line gate must print), in manifest order: the paths
    // of a large tree out of order, and among them every kind of entry that is not a plain
    // file.
    let mut lines: Vec<(String, String, String)> = Vec::new();
    for i in (0..3000).rev() {
        let path = format!("d{}/e{}/f{i}.txt", i % 10, i % 7);
        let content = format!("file {i}\n");
        std::fs::create_dir_all(root.join(&path).parent().unwrap()).unwrap();
        std::fs::write(root.join(&path), &content).unwrap();
        let (digest, line) = if i % 500 == 7 {
            (sha(b"other"), format!("{path}: FAILED (content differs)"))
        } else {
            (sha(content.as_bytes()), format!("{path}: OK"))
        };
        lines.push((path, digest, line));
        if i % 600 == 3 {
            let gone = format!("d{}/e{}/gone{i}.txt", i % 10, i % 7);
            lines.push((
                gone.clone(),
                sha(b"x"),
                format!("{gone}: MISSING (no such file)"),
            ));
        }
    }
    let odd = |path: &str, digest: String, line: &str| (path.to_string(), digest, line.to_string());
    std::fs::create_dir(root.join("links")).unwrap();
    symlink("../d0/e0/f0.txt", root.join("links/in")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(root.join("locked"), "locked\n").unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let extra = [
        odd("links/in", sha(b"file 0\n"), "links/in: OK"),
        odd("d3", sha(b""), "d3: FAILED (is a directory)"),
        odd(
            "no/such/folder",
            sha(b""),
            "no/such/folder: MISSING (no such file)",
        ),
        odd(
            "d1/e1/f1.txt/below",
            sha(b""),
            "d1/e1/f1.txt/below: MISSING (no such file)",
        ),
        odd("./d2//e2/f2.txt", sha(b"file 2\n"), "./d2//e2/f2.txt: OK"),
        odd(
            "locked",
            sha(b"locked\n"),
            "locked: FAILED (Permission denied (os error 13))",
        ),
    ];
    for (at, entry) in [900, 1200, 1500, 1800, 2100, 2400].into_iter().zip(extra) {
        lines.insert(at, entry);
    }
    let manifest_text = |lines: &[(String, String, String)]| {
        lines
            .iter()
            .map(|(p, d, _)| format!("{d}  {p}\n"))
            .collect::<String>()
    };
    let mut with_pipe = lines.clone();
    with_pipe.insert(
        2700,
        odd("pipe", sha(b""), "pipe: FAILED (not a regular file)"),
    );
    let manifest = outside.path().join("m.sha256");
    std::fs::write(&manifest, manifest_text(&with_pipe)).unwrap();
    let Some(_) = unprivileged("/usr/bin/sha256sum") else {
        testkit::skip(
            "setpriv",
            "root without setpriv cannot make a file unreadable",
        );
        return;
    };
    let check = |args: &[&str]| {
        let mut cmd = unprivileged(env!("CARGO_BIN_EXE_gate")).unwrap();
        cmd.arg("check").args(args).arg(&manifest).arg(root);
        testkit::Output::of(&mut cmd)
    };
    let count = |what: &str| {
        with_pipe
            .iter()
            .filter(|(_, _, l)| l.contains(what))
            .count()
    };
    let (ok, failed, missing) = (count(": OK"), count(": FAILED"), count(": MISSING"));
    assert_eq!((failed, missing), (9, 7), "the fixture itself");
    let summary = format!(
        "{ok}/{} OK, {failed} FAILED, {missing} MISSING",
        with_pipe.len()
    );
    let all: String = with_pipe.iter().map(|(_, _, l)| format!("{l}\n")).collect();
    let out = check(&[]);
    out.assert_exit(1);
    same_lines(&out.stdout, &format!("{all}{summary}\n"));
    let problems: String = with_pipe
        .iter()
        .filter(|(_, _, l)| !l.ends_with(": OK"))
        .map(|(_, _, l)| format!("{l}\n"))
        .collect();
    let out = check(&["--quiet"]);
    out.assert_exit(1);
    same_lines(&out.stdout, &format!("{problems}{summary}\n"));
    let out = check(&["--status"]);
    out.assert_exit(1);
    assert_eq!(out.stdout, "");
    let out = check(&["--ignore-missing", "--quiet"]);
    out.assert_exit(1);
    let kept: String = with_pipe
        .iter()
        .filter(|(_, _, l)| !l.ends_with(": OK") && !l.contains(": MISSING"))
        .map(|(_, _, l)| format!("{l}\n"))
        .collect();
    same_lines(
        &out.stdout,
        &format!(
            "{kept}{ok}/{} OK, {failed} FAILED ({missing} missing, ignored)\n",
            with_pipe.len() - missing
        ),
    );

    // GNU on the same manifest, less the FIFO (which it would open and wait on): the same
    // paths OK, and each other path failed.
    let gnu_manifest = outside.path().join("gnu.sha256");
    std::fs::write(&gnu_manifest, manifest_text(&lines)).unwrap();
    let mut gnu = unprivileged("/usr/bin/sha256sum").unwrap();
    gnu.current_dir(root).arg("-c").arg(&gnu_manifest);
    let gnu = testkit::Output::of(&mut gnu);
    gnu.assert_exit(1);
    let theirs: Vec<&str> = gnu.stdout.lines().collect();
    assert_eq!(theirs.len(), lines.len(), "{}", gnu.stderr);
    for ((path, _, ours), theirs) in lines.iter().zip(theirs) {
        if ours.ends_with(": OK") {
            assert_eq!(theirs, format!("{path}: OK"));
        } else {
            assert!(
                theirs.starts_with(&format!("{path}: FAILED")),
                "{theirs} / {ours}"
            );
        }
    }

    // One link out of the tree among them all refuses the whole check, naming it.
    symlink(outside.path().join("secret"), root.join("links/out")).unwrap();
    let mut with_link = with_pipe.clone();
    with_link.insert(2000, odd("links/out", sha(b""), ""));
    std::fs::write(&manifest, manifest_text(&with_link)).unwrap();
    let out = check(&[]);
    out.assert_exit(2);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("'links/out'") && out.stderr.contains("leads out of the tree"),
        "{out}"
    );
    assert_eq!(out.stderr.lines().count(), 1, "{out}");
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// `gate check m.sha256` in `dir`, started with no descriptor but stdin, stdout and stderr and
/// a limit of `limit` descriptors, as under `ulimit -n LIMIT`.
fn check_with_descriptors(dir: &std::path::Path, limit: u64) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    cmd.current_dir(dir).args(["check", "m.sha256"]);
    // SAFETY: between fork and exec only async-signal-safe calls: close and setrlimit.
    unsafe {
        cmd.pre_exec(move || {
            // Whatever the test harness inherited stays out, so the count is the same anywhere.
            for fd in 3..1024 {
                nix::libc::close(fd);
            }
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, limit, limit)
                .map_err(std::io::Error::from)
        });
    }
    cmd.output().unwrap()
}

#[test]
fn a_low_descriptor_limit_is_never_a_files_status() {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut manifest = String::new();
    let mut add = |path: String, content: String| {
        std::fs::create_dir_all(root.join(&path).parent().unwrap()).unwrap();
        std::fs::write(root.join(&path), &content).unwrap();
        let digest = {
            use sha2::Digest as _;
            sha2::Sha256::digest(content.as_bytes())
        };
        for b in digest {
            let _ = write!(manifest, "{b:02x}");
        }
        let _ = writeln!(manifest, "  {path}");
    };
    // Deeper than a worker keeps folders open, a few files a folder.
    for branch in 0..3 {
        let folder: Vec<String> = (0..40).map(|i| format!("deep{branch}_{i}")).collect();
        for f in 0..10 {
            add(
                format!("{}/f{f}", folder.join("/")),
                format!("{branch} {f}\n"),
            );
        }
    }
    // Many folders each a dozen deep, one file each: every file in a folder of its own.
    for branch in 0..300 {
        let folder: Vec<String> = (0..12).map(|i| format!("w{branch}_{i}")).collect();
        add(
            format!("{}/f", folder.join("/")),
            format!("wide {branch}\n"),
        );
    }
    for f in 0..200 {
        add(format!("flat/f{f}"), format!("flat {f}\n"));
    }
    std::fs::write(root.join("m.sha256"), &manifest).unwrap();
    let total = manifest.lines().count();
    let mut exhausted = 0;
    for limit in 4..=12 {
        let out = check_with_descriptors(root, limit);
        let (text, err) = (stdout(&out), stderr(&out));
        // Short of descriptors, the check fails whole (exit 2, one line) or passes: never a
        // file FAILED for a descriptor the tool could not get.
        assert!(!text.contains("FAILED"), "limit {limit}: {text}");
        match out.status.code() {
            Some(0) => assert!(text.ends_with(&format!("{total}/{total} OK\n")), "{text}"),
            Some(2) => {
                assert_eq!(err.lines().count(), 1, "limit {limit}: {err}");
                if err.contains("ran out of file descriptors") && err.contains("ulimit -n") {
                    exhausted += 1;
                }
            }
            other => panic!("limit {limit}: exit {other:?}\n{text}\n{err}"),
        }
        if limit >= 8 {
            assert_eq!(out.status.code(), Some(0), "limit {limit}: {err}");
        }
    }
    assert!(
        exhausted > 0,
        "no limit was low enough to run out while reading"
    );
}
