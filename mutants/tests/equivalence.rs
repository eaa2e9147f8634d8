//! One spec, one tree, one set of verdicts: `--jobs 1`, `--jobs 2`, `--no-cache`, a cold cache,
//! a warm cache and a hostile git config must agree on every mutant of projects built to make
//! them disagree: a configure-once build that writes the checkout's absolute path, a build
//! folder in which a deleted test's output lingers, and uncommitted changes carried under a
//! user's git config that rewrites diffs and applies.

use std::path::Path;
use std::process::Command;

use testkit::{Output, Repo};

use crate::common::{report_in, verdicts};

/// A project under test with its own cache, temp and output folders (all in temp dirs).
struct Project {
    repo: Repo,
    cache: tempfile::TempDir,
    tmp: tempfile::TempDir,
    outs: tempfile::TempDir,
    home: tempfile::TempDir,
    /// What every run so far said on stderr.
    said: std::cell::RefCell<String>,
}

impl Project {
    fn new() -> Project {
        Project {
            repo: Repo::new(),
            cache: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            outs: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            said: Default::default(),
        }
    }

    /// `mutants run mutants.toml --out OUTS/NAME ARGS`, with `gitconfig` (a file in this test's
    /// HOME) as the user's global git config when given; the verdicts, in spec order.
    fn verdicts(
        &self,
        name: &str,
        args: &[&str],
        gitconfig: Option<&Path>,
    ) -> Vec<(String, String)> {
        let out = self.outs.path().join(name);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
        testkit::hermetic(&mut cmd);
        cmd.current_dir(self.repo.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("GATEKIT_CACHE_DIR", self.cache.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("CARGO_TARGET_DIR")
            .args(["run", "mutants.toml", "--out"])
            .arg(&out)
            .args(args);
        if let Some(config) = gitconfig {
            cmd.env("GIT_CONFIG_GLOBAL", config);
        }
        let run = Output::of(&mut assert_cmd::Command::from_std(cmd));
        assert!(
            matches!(run.code, Some(0) | Some(1)),
            "{name}: the run did not judge: {run}"
        );
        self.said.borrow_mut().push_str(&run.stderr);
        verdicts(&report_in(&out))
    }
}

const LIB: &str = "add() { echo $(( $1 + $2 )); }\nneg() { echo $(( 0 - $1 )); }\n";

fn mutant(name: &str, anchor: &str, replace: &str, expect: &str) -> String {
    format!("[[mutant]]\nname = \"{name}\"\nfile = \"lib.sh\"\nanchor = '{anchor}'\nreplace = '{replace}'\nsuite = \"unit\"\n{expect}\n")
}

/// A configure-once build: the first build in a checkout writes the checkout's absolute path
/// into `build/config.sh`, and the suite loads the library from there. Handed to a second
/// copy as it is, that copy would test the first copy's files.
#[test]
fn a_configure_once_build_that_writes_absolute_paths_gets_one_verdict_every_way() {
    let p = Project::new();
    let spec = format!(
        "[worktree]\ncache = [\"build\"]\n\n[suites.unit]\nbuild = \"[ -f build/config.sh ] || {{ mkdir -p build && echo \\\"SRC=$PWD\\\" > build/config.sh; }}\"\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n{}{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("plus to times", "$1 + $2", "$1 * $2", ""),
        mutant("neg is identity", "0 - $1", "0 + $1", ""),
        mutant("control: spacing", "add() {", "add()  {", "expect = \"survive\""),
    ) + &mutant("neg is zero", "0 - $1", "0", "")
        + &mutant("add first only", "$1 + $2", "$1", "");
    p.repo
        .write(".gitignore", "build/\n")
        .write("lib.sh", LIB)
        .write(
            "test.sh",
            ". build/config.sh\n. \"$SRC/lib.sh\"\nsleep 0.3\n[ \"$(add 2 3)\" = 5 ] && [ \"$(neg 2)\" = -2 ] && echo '2 passed, 0 failed' || { echo '1 passed, 1 failed'; exit 1; }\n",
        )
        .write("mutants.toml", spec);
    p.repo.commit_all("configure once");
    let expected: Vec<(String, String)> = [
        ("plus to minus", "killed"),
        ("plus to times", "killed"),
        ("neg is identity", "killed"),
        ("control: spacing", "control held"),
        ("neg is zero", "killed"),
        ("add first only", "killed"),
    ]
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .to_vec();
    assert_eq!(
        p.verdicts("jobs1", &["--jobs", "1", "--no-cache"], None),
        expected
    );
    assert_eq!(
        p.verdicts("jobs2", &["--jobs", "2", "--no-cache"], None),
        expected
    );
    assert_eq!(p.verdicts("cold", &["--jobs", "2"], None), expected);
    assert_eq!(p.verdicts("warm", &["--jobs", "2"], None), expected);
    // Whether a second copy would have read the first one's files depends on timing; what
    // must never happen is the hand-over itself.
    assert!(
        p.said.borrow().contains(
            "build is not handed to the other checkouts nor kept: config.sh names the checkout it was built in"
        ),
        "{}",
        p.said.borrow()
    );
}

/// A build that copies every test into `build/tests` and a suite that runs whatever is there:
/// a test deleted from the tree lingers in a build folder kept from before, and would kill a
/// mutant the tree's own tests do not.
#[test]
fn a_deleted_tests_lingering_output_never_decides_a_verdict() {
    let p = Project::new();
    let spec = format!(
        "[worktree]\ncache = [\"build\"]\n\n[suites.unit]\nbuild = \"mkdir -p build/tests && cp -p tests/*.sh build/tests/\"\nrun = \"for t in build/tests/*.sh; do sh $t || exit 1; done; echo 'all passed'\"\ntimeout = \"20s\"\n\n{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("neg is identity", "0 - $1", "0 + $1", ""),
    );
    p.repo
        .write(".gitignore", "build/\n")
        .write("lib.sh", LIB)
        .write("tests/add.sh", ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ]\n")
        .write("tests/neg.sh", ". ./lib.sh\n[ \"$(neg 2)\" = -2 ]\n")
        .write("mutants.toml", spec);
    p.repo.commit_all("two tests");
    let both = p.verdicts("first", &["--jobs", "1"], None);
    assert_eq!(both[1].1, "killed", "neg.sh kills it: {both:?}");

    // neg.sh is deleted: nothing in the tree tests neg any more.
    std::fs::remove_file(p.repo.path().join("tests/neg.sh")).unwrap();
    p.repo.commit_all("drop the neg test");
    let expected: Vec<(String, String)> =
        [("plus to minus", "killed"), ("neg is identity", "SURVIVED")]
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .to_vec();
    assert_eq!(p.verdicts("warm", &["--jobs", "1"], None), expected);
    assert_eq!(p.verdicts("warm2", &["--jobs", "2"], None), expected);
    assert_eq!(
        p.verdicts("nocache", &["--jobs", "2", "--no-cache"], None),
        expected
    );
}

/// The user's global git config rewrites every diff and apply it can reach: the working copies
/// still hold DIR's uncommitted state byte for byte, and the verdicts are the clean config's.
#[test]
fn a_hostile_user_git_config_does_not_change_a_verdict() {
    let p = Project::new();
    let spec = format!(
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("neg is identity", "0 - $1", "0 + $1", ""),
    );
    p.repo
        .write("lib.sh", LIB)
        .write(
            "test.sh",
            ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ] && [ \"$(neg 2)\" = -2 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        )
        .write("mutants.toml", spec);
    p.repo.commit_all("base");
    // Uncommitted: the test now also checks a trailing-space line, which a whitespace-fixing
    // apply would strip, and the library gains the line it reads.
    p.repo
        .write("lib.sh", format!("{LIB}pad() {{ echo 'x  '; }}  \n"));
    p.repo.write(
        "test.sh",
        ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ] && [ \"$(neg 2)\" = -2 ] && grep -q '}  $' lib.sh && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
    );
    let clean = p.verdicts("clean", &["--jobs", "1"], None);
    assert_eq!(
        clean,
        [
            ("plus to minus".to_string(), "killed".to_string()),
            ("neg is identity".to_string(), "killed".to_string())
        ]
    );
    let marker = p.home.path().join("external-diff-ran");
    let hostile = p.home.path().join("gitconfig");
    std::fs::write(
        &hostile,
        format!(
            "[diff]\n\tnoprefix = true\n\trenames = copies\n\talgorithm = histogram\n\texternal = sh -c 'touch {}'\n[color]\n\tui = always\n[apply]\n\twhitespace = fix\n[core]\n\tautocrlf = true\n\twhitespace = trailing-space\n\tpager = false\n",
            marker.display()
        ),
    )
    .unwrap();
    assert_eq!(
        p.verdicts("hostile", &["--jobs", "2"], Some(&hostile)),
        clean
    );
    assert!(!marker.exists(), "the user's external diff driver ran");
}
