//! Git gives everyone the same answer: one candidate packs to one patch, applies to one tree id
//! and gets one verdict whatever the user's system, global or repository git config, or their
//! `GIT_*` environment, says about output and content; and no gate command takes the user's
//! `index.lock` or rewrites their index.
//!
//! Each hostile setting is first shown to change what plain git prints or writes (so the matrix
//! cannot pass because a setting did nothing); then the same settings are put at each level and
//! the tools must give the clean answer byte for byte. Every program a setting names (external
//! diff, fsmonitor, hook, pager, filter) writes a marker in the test's temp dir: none may run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use testkit::Repo;

use crate::common::{gate, stderr, stdout};

/// `src/prog.c` at the base and in the candidate: the text where myers and histogram differ.
pub const PROG_BASE: &str = "#include <stdio.h>\n\n// Frobs foo heartily\nint frobnitz(int foo)\n{\n    int i;\n    for(i = 0; i < 10; i++)\n    {\n        printf(\"Your answer is: \");\n        printf(\"%d\\n\", foo);\n    }\n}\n\nint fact(int n)\n{\n    if(n > 1)\n    {\n        return fact(n-1) * n;\n    }\n    return 1;\n}\n\nint main(int argc, char **argv)\n{\n    frobnitz(fact(10));\n}\n";
pub const PROG_NEW: &str = "#include <stdio.h>\n\nint fib(int n)\n{\n    if(n > 2)\n    {\n        return fib(n-1) + fib(n-2);\n    }\n    return 1;\n}\n\n// Frobs foo heartily\nint frobnitz(int foo)\n{\n    int i;\n    for(i = 0; i < 10; i++)\n    {\n        printf(\"%d\\n\", foo);\n    }\n}\n\nint main(int argc, char **argv)\n{\n    frobnitz(fib(10));\n}\n";

/// The candidate's own check, run as its suite: it passes only on the tree as staged (trailing
/// whitespace kept, CRLF kept and never added, the rename done, the new code in place).
pub const CHECK: &str = "#!/bin/sh\nfail=0\ncr=$(printf '\\r')\ngrep -q 'trailing   $' ws.txt || { echo 'FAIL: whitespace'; fail=1; }\ngrep -q \"one$cr\" crlf.txt || { echo 'FAIL: crlf'; fail=1; }\n! grep -q \"$cr\" lf.txt || { echo 'FAIL: cr added'; fail=1; }\ngrep -q 'edit' lf.txt || { echo 'FAIL: lf.txt'; fail=1; }\ngrep -q fib src/prog.c || { echo 'FAIL: prog'; fail=1; }\ntest -e new/name.txt && ! test -e old/name.txt || { echo 'FAIL: rename'; fail=1; }\nif [ $fail = 0 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n";

/// Writes the base and stages the candidate in `repo` (text with trailing whitespace, CRLF
/// content, a rename, a copy, a binary file, a name git quotes, an executable bit); returns the
/// base commit.
pub fn stage_candidate(repo: &Repo) -> String {
    repo.write("src/prog.c", PROG_BASE)
        .write("old/name.txt", "moved\n")
        .write("lf.txt", "plain\n");
    let base = repo.commit_all("base");
    repo.write("src/prog.c", PROG_NEW)
        .write("copy.c", PROG_BASE)
        .write("ws.txt", "trailing   \nspace\t\n")
        .write("crlf.txt", "one\r\ntwo\r\n")
        .write("lf.txt", "plain\nedit\n")
        .write("img.bin", [0u8, 1, 2, b'b', 0xff, 0, b'\n', 0xfe])
        .write("ünï cödé.txt", "ünï cödé\n")
        .write("run.sh", CHECK)
        .chmod_x("run.sh");
    fs::create_dir_all(repo.path().join("new")).unwrap();
    repo.git(["mv", "old/name.txt", "new/name.txt"]);
    repo.git(["add", "-A"]);
    base
}

/// The hostile settings and the files and programs they name, in a temp dir of their own.
pub struct Hostile {
    pub dir: tempfile::TempDir,
}

fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

impl Hostile {
    pub fn new() -> Hostile {
        let dir = tempfile::tempdir().unwrap();
        let h = Hostile { dir };
        let p = h.dir.path();
        fs::create_dir_all(p.join("markers")).unwrap();
        fs::create_dir_all(p.join("hooks")).unwrap();
        let mark = |name: &str| format!("echo \"$@\" >> '{}'", h.marker(name).display());
        script(
            &p.join("ext-diff.sh"),
            &format!("{}\necho EXTERNAL", mark("ext-diff")),
        );
        script(&p.join("fsmonitor.sh"), &mark("fsmonitor"));
        script(&p.join("hooks/post-checkout"), &mark("hook"));
        script(&p.join("pager.sh"), &format!("{}\ncat", mark("pager")));
        script(
            &p.join("smudge.sh"),
            &format!("{}\nsed s/e/E/", mark("filter")),
        );
        fs::write(p.join("order"), "*.bin\n*.txt\n").unwrap();
        fs::write(p.join("attributes"), "*.txt filter=hostile diff=hostile\n").unwrap();
        fs::write(p.join("ignore"), "extra-test.sh\n").unwrap();
        h
    }

    pub fn marker(&self, name: &str) -> PathBuf {
        self.dir.path().join("markers").join(name)
    }

    /// The programs that ran, by marker name.
    pub fn ran(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.dir.path().join("markers"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    pub fn clear(&self) {
        for name in self.ran() {
            fs::remove_file(self.marker(&name)).unwrap();
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// Every hostile setting, as (key, value).
    pub fn settings(&self) -> Vec<(String, String)> {
        [
            ("diff.noprefix", "true".to_string()),
            ("diff.mnemonicPrefix", "true".into()),
            ("diff.srcPrefix", "S/".into()),
            ("diff.dstPrefix", "D/".into()),
            ("diff.algorithm", "histogram".into()),
            ("diff.renames", "copies".into()),
            ("diff.context", "1".into()),
            ("diff.suppressBlankEmpty", "true".into()),
            ("diff.orderFile", self.path("order")),
            ("diff.external", self.path("ext-diff.sh")),
            ("color.ui", "always".into()),
            ("color.diff", "always".into()),
            ("core.quotePath", "false".into()),
            ("core.bigFileThreshold", "16".into()),
            ("core.autocrlf", "true".into()),
            ("core.fsmonitor", self.path("fsmonitor.sh")),
            ("core.hooksPath", self.path("hooks")),
            ("core.pager", self.path("pager.sh")),
            ("core.attributesFile", self.path("attributes")),
            ("core.excludesFile", self.path("ignore")),
            ("filter.hostile.smudge", self.path("smudge.sh")),
            ("diff.hostile.binary", "true".into()),
            ("apply.whitespace", "fix".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Writes every setting into the config file `path` (created if missing).
    pub fn write_config(&self, path: &Path) {
        for (key, value) in self.settings() {
            let out = Command::new("git")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .arg("config")
                .arg("--file")
                .arg(path)
                .args([&key, &value])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Where the hostile settings are put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Clean,
    Global,
    System,
    Repository,
    Environment,
}

pub const LEVELS: [Level; 5] = [
    Level::Clean,
    Level::Global,
    Level::System,
    Level::Repository,
    Level::Environment,
];

impl Level {
    /// Puts the settings at this level for `cmd` (the testkit makes every command hermetic:
    /// this undoes that on purpose). The repository level is written by [`Level::enter`].
    pub fn expose<'c, C: Envs>(self, cmd: &'c mut C, hostile: &Hostile) -> &'c mut C {
        let file = hostile.dir.path().join("hostile.gitconfig");
        if !file.exists() {
            hostile.write_config(&file);
        }
        match self {
            Level::Clean | Level::Repository => {}
            Level::Global => {
                cmd.set("GIT_CONFIG_GLOBAL", file.as_os_str());
            }
            Level::System => {
                cmd.unset("GIT_CONFIG_NOSYSTEM");
                cmd.set("GIT_CONFIG_SYSTEM", file.as_os_str());
            }
            Level::Environment => {
                let settings = hostile.settings();
                cmd.set("GIT_CONFIG_COUNT", settings.len().to_string().as_ref());
                for (i, (k, v)) in settings.iter().enumerate() {
                    cmd.set(&format!("GIT_CONFIG_KEY_{i}"), k.as_ref());
                    cmd.set(&format!("GIT_CONFIG_VALUE_{i}"), v.as_ref());
                }
                cmd.set("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'".as_ref());
                cmd.set("GIT_EXTERNAL_DIFF", hostile.path("ext-diff.sh").as_ref());
                cmd.set("GIT_DIFF_OPTS", "--unified=1".as_ref());
                cmd.set("GIT_PAGER", hostile.path("pager.sh").as_ref());
                cmd.set("PAGER", hostile.path("pager.sh").as_ref());
            }
        }
        cmd
    }

    /// Writes the settings into `repo`'s own config for the repository level; returns the
    /// config as it was, for [`Level::leave`].
    pub fn enter(self, repo: &Path, hostile: &Hostile) -> Vec<u8> {
        let config = repo.join(".git/config");
        let before = fs::read(&config).unwrap();
        if self == Level::Repository {
            hostile.write_config(&config);
        }
        before
    }

    pub fn leave(self, repo: &Path, before: Vec<u8>) {
        fs::write(repo.join(".git/config"), before).unwrap();
    }
}

/// The environment setters of both command types the tests use.
pub trait Envs {
    fn set(&mut self, key: &str, value: &std::ffi::OsStr);
    fn unset(&mut self, key: &str);
}

impl Envs for Command {
    fn set(&mut self, key: &str, value: &std::ffi::OsStr) {
        self.env(key, value);
    }
    fn unset(&mut self, key: &str) {
        self.env_remove(key);
    }
}

impl Envs for assert_cmd::Command {
    fn set(&mut self, key: &str, value: &std::ffi::OsStr) {
        self.env(key, value);
    }
    fn unset(&mut self, key: &str) {
        self.env_remove(key);
    }
}

/// Plain git in `dir` with `settings` given by `-c` and `env` set; its stdout.
pub fn plain_git(
    dir: &Path,
    settings: &[(String, String)],
    env: &[(&str, String)],
    args: &[&str],
) -> Vec<u8> {
    let mut cmd = Command::new("git");
    testkit::hermetic(&mut cmd).current_dir(dir);
    for (k, v) in settings {
        cmd.arg("-c").arg(format!("{k}={v}"));
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    out.stdout
}

/// Each hostile setting changes what plain git prints or writes, and each program it names runs:
/// the matrix below tests settings that matter.
fn assert_each_setting_bites(repo: &Repo, base: &str, hostile: &Hostile) {
    let settings = hostile.settings();
    let find = |key: &str| -> (String, String) {
        settings.iter().find(|(k, _)| k == key).unwrap().clone()
    };
    let diff = ["diff", "--cached", base];
    let clean = plain_git(repo.path(), &[], &[], &diff);
    assert!(!clean.is_empty());
    for (key, _) in &settings {
        let changed = match key.as_str() {
            // Each shown with the command where it acts.
            "core.autocrlf" => {
                plain_git(
                    repo.path(),
                    &[find(key)],
                    &[],
                    &["cat-file", "--filters", ":lf.txt"],
                ) != b"plain\nedit\n"
            }
            "core.attributesFile" | "diff.hostile.binary" => {
                plain_git(
                    repo.path(),
                    &[find("core.attributesFile"), find("diff.hostile.binary")],
                    &[],
                    &diff,
                ) != clean
            }
            "filter.hostile.smudge" => {
                plain_git(
                    repo.path(),
                    &[find("core.attributesFile"), find(key)],
                    &[],
                    &["cat-file", "--filters", ":lf.txt"],
                ) != b"plain\nedit\n"
            }
            "core.excludesFile" => {
                repo.write("extra-test.sh", "echo untracked\n");
                let list = ["ls-files", "--others", "--exclude-standard"];
                let seen = plain_git(repo.path(), &[find(key)], &[], &list)
                    != plain_git(repo.path(), &[], &[], &list);
                fs::remove_file(repo.path().join("extra-test.sh")).unwrap();
                seen
            }
            "core.fsmonitor" => {
                plain_git(repo.path(), &[find(key)], &[], &["status", "--porcelain"]);
                hostile.marker("fsmonitor").exists()
            }
            "core.hooksPath" => {
                plain_git(
                    repo.path(),
                    &[find(key)],
                    &[],
                    &["checkout", "-q", "--", "lf.txt"],
                );
                hostile.marker("hook").exists()
            }
            // git pages only a terminal: what it would run is asked instead.
            "core.pager" => {
                plain_git(repo.path(), &[find(key)], &[], &["var", "GIT_PAGER"])
                    == format!("{}\n", find(key).1).into_bytes()
            }
            "apply.whitespace" => {
                let patch = plain_git(
                    repo.path(),
                    &[],
                    &[],
                    &["diff", "--cached", base, "--", "ws.txt"],
                );
                let scratch = tempfile::tempdir().unwrap();
                fs::write(scratch.path().join("p"), patch).unwrap();
                plain_git(scratch.path(), &[find(key)], &[], &["apply", "p"]);
                fs::read(scratch.path().join("ws.txt")).unwrap() != b"trailing   \nspace\t\n"
            }
            _ => plain_git(repo.path(), &[find(key)], &[], &diff) != clean,
        };
        assert!(
            changed,
            "{key} changes nothing plain git does: the test would prove nothing"
        );
    }
    // The environment's own knobs.
    let with_env = |k: &str, v: String| plain_git(repo.path(), &[], &[(k, v)], &diff);
    assert_ne!(with_env("GIT_DIFF_OPTS", "--unified=1".into()), clean);
    assert_ne!(
        with_env("GIT_EXTERNAL_DIFF", hostile.path("ext-diff.sh")),
        clean
    );
    for name in ["ext-diff", "fsmonitor", "hook", "filter"] {
        assert!(hostile.marker(name).exists(), "{name} never ran");
    }
    hostile.clear();
}

/// What the tools gave under one level.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    patch: Vec<u8>,
    manifest: Vec<u8>,
    apply_exit: Option<i32>,
    tree: String,
    apply_verdict: String,
    run_exit: Option<i32>,
    run_verdict: String,
}

/// `gate pack`, `gate apply` (of the clean pack, the candidate the reviewer was handed) and
/// `gate run` of it, under `level`.
fn answer(
    repo: &Repo,
    base: &str,
    level: Level,
    hostile: &Hostile,
    clean: &Path,
    work: &Path,
) -> Answer {
    let name = format!("{level:?}");
    let out = work.join(&name);
    let tmp = work.join(format!("{name}-tmp"));
    fs::create_dir_all(&tmp).unwrap();
    let before = level.enter(repo.path(), hostile);
    let with_level = |cmd: &mut assert_cmd::Command| {
        cmd.current_dir(repo.path())
            .env("TMPDIR", &tmp)
            .env("GATEKIT_STATE_DIR", work.join("state"));
        level.expose(cmd, hostile);
    };
    let mut pack = gate();
    with_level(&mut pack);
    let packed = pack
        .args(["pack", "--base", base, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{name}: {}", stderr(&packed));
    let mut apply = gate();
    with_level(&mut apply);
    let applied = apply
        .args(["apply", "--json", "--base", base, "--patch"])
        .arg(clean.join("build.patch"))
        .arg("--manifest")
        .arg(clean.join("candidate-manifest.sha256"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout)
        .unwrap_or_else(|_| panic!("{name}: {}", stderr(&applied)));
    if let Some(wt) = v["candidate"]["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    let mut run = gate();
    with_level(&mut run);
    let ran = run
        .arg("run")
        .arg("--config")
        .arg(clean.join("gate.toml"))
        .arg("--out")
        .arg(work.join(format!("{name}-run")))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(work.join(format!("{name}-run/gate.json"))).unwrap_or_default(),
    )
    .unwrap_or_default();
    level.leave(repo.path(), before);
    Answer {
        patch: fs::read(out.join("build.patch")).unwrap(),
        manifest: fs::read(out.join("candidate-manifest.sha256")).unwrap(),
        apply_exit: applied.status.code(),
        tree: v["candidate"]["tree"].as_str().unwrap_or("").to_string(),
        apply_verdict: v["verdict"].to_string(),
        run_exit: ran.status.code(),
        run_verdict: format!(
            "{} {} {}",
            report["verdict"],
            report["suites"][0]["record"]["exit_code"],
            stdout(&ran)
                .lines()
                .find(|l| l.starts_with("manifest"))
                .unwrap_or("")
        ),
    }
}

/// Packs the clean candidate into `dir` with a gate.toml whose one suite is the candidate's
/// own check: what the reviewer is handed.
pub fn hand_over(repo: &Repo, base: &str, dir: &Path) {
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", base, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    fs::write(
        dir.join("gate.toml"),
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nname = \"check\"\nrun = \"./run.sh\"\n"),
    )
    .unwrap();
}

#[test]
fn one_candidate_packs_applies_and_runs_the_same_under_hostile_git_config_at_every_level() {
    let repo = Repo::new();
    let base = stage_candidate(&repo);
    let hostile = Hostile::new();
    assert_each_setting_bites(&repo, &base, &hostile);
    let work = tempfile::tempdir().unwrap();

    // Each level really reaches plain git.
    let diff = ["diff", "--cached", base.as_str()];
    let clean_diff = plain_git(repo.path(), &[], &[], &diff);
    for level in &LEVELS[1..] {
        let before = level.enter(repo.path(), &hostile);
        let mut cmd = Command::new("git");
        testkit::hermetic(&mut cmd)
            .current_dir(repo.path())
            .args(diff);
        level.expose(&mut cmd, &hostile);
        let seen = cmd.output().unwrap().stdout;
        level.leave(repo.path(), before);
        assert_ne!(
            seen, clean_diff,
            "{level:?} settings do not reach plain git"
        );
    }
    hostile.clear();

    // (write-tree records its cache in the index: before the index is taken as the user's.)
    let staged_tree = repo.git(["write-tree"]);
    let index = repo.path().join(".git/index");
    let index_before = fs::read(&index).unwrap();
    let handed = work.path().join("handed");
    hand_over(&repo, &base, &handed);
    let answers: Vec<Answer> = LEVELS
        .iter()
        .map(|&level| {
            let got = answer(&repo, &base, level, &hostile, &handed, work.path());
            assert_eq!(
                hostile.ran(),
                Vec::<String>::new(),
                "{level:?}: a program git config named ran"
            );
            got
        })
        .collect();
    // The clean answer is the right one: the tree is the staged tree and the check passes.
    let clean = &answers[0];
    assert_eq!(clean.patch, fs::read(handed.join("build.patch")).unwrap());
    assert_eq!(clean.tree, staged_tree);
    assert_eq!(clean.apply_exit, Some(0));
    assert_eq!(clean.run_exit, Some(0), "{}", clean.run_verdict);
    for (level, got) in LEVELS.iter().zip(&answers).skip(1) {
        assert!(
            got.patch == clean.patch,
            "{level:?}: another patch:\n{}",
            String::from_utf8_lossy(&got.patch)
        );
        assert_eq!(got.manifest, clean.manifest, "{level:?}: another manifest");
        assert_eq!(got.tree, clean.tree, "{level:?}: another tree");
        assert_eq!(got.apply_exit, clean.apply_exit, "{level:?}: apply");
        assert_eq!(got.apply_verdict, clean.apply_verdict, "{level:?}: apply");
        assert_eq!(
            got.run_exit, clean.run_exit,
            "{level:?}: run {}",
            got.run_verdict
        );
        assert_eq!(got.run_verdict, clean.run_verdict, "{level:?}: run");
    }
    assert_eq!(
        fs::read(&index).unwrap(),
        index_before,
        "the user's index was rewritten"
    );
}

#[test]
fn no_gate_command_takes_the_users_index_lock_or_rewrites_their_index() {
    let repo = Repo::new();
    let base = stage_candidate(&repo);
    let work = tempfile::tempdir().unwrap();
    let handed = work.path().join("handed");
    hand_over(&repo, &base, &handed);
    // A stat-only change: porcelain git refreshes (rewrites) the index when it sees one.
    let touched = Command::new("touch")
        .args(["-d", "2001-01-01"])
        .arg(repo.path().join("lf.txt"))
        .status()
        .unwrap();
    assert!(touched.success());
    let git_dir = repo.path().join(".git");
    let lock = git_dir.join("index.lock");
    fs::write(&lock, "held by the user\n").unwrap();
    let index = git_dir.join("index");
    let stamp = |p: &Path| {
        (
            fs::read(p).unwrap(),
            fs::metadata(p).unwrap().modified().unwrap(),
        )
    };
    let (index_before, lock_before) = (stamp(&index), stamp(&lock));
    let tmp = work.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let cmd = |args: &[&std::ffi::OsStr]| {
        let out = gate()
            .current_dir(repo.path())
            .env("TMPDIR", &tmp)
            .env("GATEKIT_STATE_DIR", work.path().join("state"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "gate {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        out
    };
    let o = |s: &str| std::ffi::OsString::from(s);
    cmd(&[
        &o("pack"),
        &o("--base"),
        &o(&base),
        &o("--out"),
        work.path().join("again").as_os_str(),
    ]);
    let applied = cmd(&[
        &o("apply"),
        &o("--json"),
        &o("--base"),
        &o(&base),
        &o("--patch"),
        handed.join("build.patch").as_os_str(),
        &o("--manifest"),
        handed.join("candidate-manifest.sha256").as_os_str(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    repo.remove_checkout(v["candidate"]["worktree"].as_str().unwrap());
    cmd(&[
        &o("run"),
        &o("--config"),
        handed.join("gate.toml").as_os_str(),
        &o("--out"),
        work.path().join("run").as_os_str(),
    ]);
    assert_eq!(
        stamp(&lock),
        lock_before,
        "the user's index.lock was touched"
    );
    assert_eq!(
        stamp(&index),
        index_before,
        "the user's index was rewritten"
    );
    fs::remove_file(&lock).unwrap();
}
