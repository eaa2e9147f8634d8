//! Hostile git settings for the tests that prove the tools give one answer whatever git config
//! says: a candidate of every awkward kind, the settings (each shown to change what plain git
//! does), the levels they are put at (system, global, repository, environment), and markers
//! that show whether a program a setting names ever ran.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Repo;

/// `src/prog.c` at the base and in the candidate: the text where myers and histogram differ.
pub const PROG_BASE: &str = "#include <stdio.h>\n\n// Frobs foo heartily\nint frobnitz(int foo)\n{\n    int i;\n    for(i = 0; i < 10; i++)\n    {\n        printf(\"Your answer is: \");\n        printf(\"%d\\n\", foo);\n    }\n}\n\nint fact(int n)\n{\n    if(n > 1)\n    {\n        return fact(n-1) * n;\n    }\n    return 1;\n}\n\nint main(int argc, char **argv)\n{\n    frobnitz(fact(10));\n}\n";
pub const PROG_NEW: &str = "#include <stdio.h>\n\nint fib(int n)\n{\n    if(n > 2)\n    {\n        return fib(n-1) + fib(n-2);\n    }\n    return 1;\n}\n\n// Frobs foo heartily\nint frobnitz(int foo)\n{\n    int i;\n    for(i = 0; i < 10; i++)\n    {\n        printf(\"%d\\n\", foo);\n    }\n}\n\nint main(int argc, char **argv)\n{\n    frobnitz(fib(10));\n}\n";

/// The candidate's own check, run as its suite: it passes only on the tree as staged (trailing
/// whitespace kept, CRLF kept and never added, the rename done, the new code in place).
pub const CHECK: &str = "#!/bin/sh\nfail=0\ncr=$(printf '\\r')\ngrep -q 'trailing   $' ws.txt || { echo 'FAIL: whitespace'; fail=1; }\ngrep -q \"one$cr\" crlf.txt || { echo 'FAIL: crlf'; fail=1; }\n! grep -q \"$cr\" lf.txt || { echo 'FAIL: cr added'; fail=1; }\ngrep -q 'edit' lf.txt || { echo 'FAIL: lf.txt'; fail=1; }\ngrep -q fib src/prog.c || { echo 'FAIL: prog'; fail=1; }\ngrep -q 'edited setting' data.cfg || { echo 'FAIL: data.cfg'; fail=1; }\ntest -e new/name.txt && ! test -e old/name.txt || { echo 'FAIL: rename'; fail=1; }\nif [ $fail = 0 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n";

/// Writes the base and stages the candidate in `repo` (text with trailing whitespace, CRLF
/// content, a rename, a copy, a binary file, a name git quotes, an executable bit, a file the
/// repository's attributes give a filter and a diff driver; `keep.txt` it leaves alone);
/// returns the base commit.
pub fn stage_candidate(repo: &Repo) -> String {
    repo.write("src/prog.c", PROG_BASE)
        .write("old/name.txt", "moved\n")
        .write("lf.txt", "plain\n")
        .write("keep.txt", "unchanged by the candidate\n")
        // The repository's own attributes name a filter and a diff driver: a fresh clone on
        // another machine has neither configured.
        .write(".gitattributes", "data.cfg filter=hostile diff=hostile\n")
        .write("data.cfg", "setting = one\n");
    let base = repo.commit_all("base");
    repo.write("src/prog.c", PROG_NEW)
        .write("copy.c", PROG_BASE)
        .write("data.cfg", "setting = one\nedited setting = two\n")
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

impl Default for Hostile {
    fn default() -> Self {
        Hostile::new()
    }
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

    pub fn path(&self, name: &str) -> String {
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
        self.write_settings(path, &self.settings());
    }

    /// The user's home as git finds it without `GIT_CONFIG_GLOBAL`: `~/.gitconfig` with every
    /// setting but the two file locations, and the files git reads by default in their place
    /// (`$XDG_CONFIG_HOME/git/attributes` and `.../ignore`) holding the hostile ones. Returns
    /// (HOME, XDG_CONFIG_HOME).
    pub fn home(&self) -> (PathBuf, PathBuf) {
        let home = self.dir.path().join("home");
        let xdg = home.join(".config");
        if !home.exists() {
            fs::create_dir_all(xdg.join("git")).unwrap();
            let settings: Vec<(String, String)> = self
                .settings()
                .into_iter()
                .filter(|(k, _)| k != "core.attributesFile" && k != "core.excludesFile")
                .collect();
            self.write_settings(&home.join(".gitconfig"), &settings);
            fs::copy(
                self.dir.path().join("attributes"),
                xdg.join("git/attributes"),
            )
            .unwrap();
            fs::copy(self.dir.path().join("ignore"), xdg.join("git/ignore")).unwrap();
        }
        (home, xdg)
    }

    fn write_settings(&self, path: &Path, settings: &[(String, String)]) {
        for (key, value) in settings {
            let out = Command::new("git")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .arg("config")
                .arg("--file")
                .arg(path)
                .args([key, value])
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
    /// `GIT_CONFIG_GLOBAL` naming a hostile file.
    Global,
    /// No `GIT_CONFIG_GLOBAL`: `~/.gitconfig` and `$XDG_CONFIG_HOME/git/*` (see [`Hostile::home`]).
    Home,
    /// `GIT_CONFIG_SYSTEM` naming a hostile file (the real `/etc/gitconfig` is not a test's to write).
    System,
    Repository,
    Environment,
}

pub const LEVELS: [Level; 6] = [
    Level::Clean,
    Level::Global,
    Level::Home,
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
            Level::Home => {
                let (home, xdg) = hostile.home();
                cmd.unset("GIT_CONFIG_GLOBAL");
                cmd.set("HOME", home.as_os_str());
                cmd.set("XDG_CONFIG_HOME", xdg.as_os_str());
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
    crate::hermetic(&mut cmd).current_dir(dir);
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
pub fn assert_each_setting_bites(repo: &Repo, base: &str, hostile: &Hostile) {
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
