//! Every report the three tools write, on the built-in sample, held byte for byte against its
//! committed snapshot (`tests/snapshots/`): a change in what a reviewer reads, or in a field a
//! program parses, shows as a diff here, never silently.
//!
//! The sample is the demo's (`gatekit demo --keep`), then gate and mutants run once more on it
//! with every output they have (text, JSON, Markdown, JUnit, Stryker's schema, SARIF). What
//! differs between two honest runs (times, durations, temp paths, commit ids, process ids) is
//! redacted, and runs of padding are folded so a duration one digit longer does not move a
//! column; every word, count, verdict and field stays. `INSTA_UPDATE=always cargo test -p
//! gatekit --test main reports` rewrites the snapshots after an intended change; review the diff.

use std::fs;
use std::path::{Path, PathBuf};

use testkit::Output;

use crate::gatekit;

/// The demo's kept folder and the test's own temp root (HOME, TMPDIR and the outputs inside it).
struct Sample {
    root: tempfile::TempDir,
    kept: PathBuf,
}

impl Sample {
    fn tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// `gatekit ARGS` in the sample's repository, with this test's HOME and TMPDIR.
    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = gatekit();
        cmd.args(args)
            .current_dir(self.kept.join("sample"))
            .env("HOME", self.home())
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("TMPDIR", self.tmp());
        Output::of(&mut cmd)
    }

    fn path(&self, rel: &str) -> String {
        self.kept.join(rel).display().to_string()
    }
}

fn demo() -> Sample {
    // In /tmp whatever TMPDIR says, so every path has the length the snapshots were taken
    // with (a report wraps a long line by its width).
    let root = tempfile::tempdir_in("/tmp").unwrap();
    for dir in ["tmp", "home"] {
        fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    let mut cmd = gatekit();
    cmd.args(["demo", "--keep"])
        .env("HOME", root.path().join("home"))
        .env("XDG_CACHE_HOME", root.path().join("home/.cache"))
        .env("XDG_CONFIG_HOME", root.path().join("home/.config"))
        .env("TMPDIR", root.path().join("tmp"));
    let out = Output::of(&mut cmd);
    out.assert_exit(0);
    let kept = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("sample kept in "))
        .unwrap_or_else(|| panic!("the demo names its kept folder: {}", out.both()));
    Sample {
        kept: PathBuf::from(kept.trim()),
        root,
    }
}

/// What two honest runs of the same sample write differently, each replaced by a name.
fn filters(sample: &Sample) -> Vec<(String, String)> {
    let literal = |p: &Path| regex::escape(&p.display().to_string());
    vec![
        (literal(&sample.kept), "[DEMO]".into()),
        (literal(&sample.tmp()), "[TMP]".into()),
        (literal(sample.root.path()), "[ROOT]".into()),
        // Checkouts and scratch are named by process and time.
        (r"\[TMP\]/[A-Za-z0-9._-]+".into(), "[TMP]/[SCRATCH]".into()),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z".into(),
            "[TIME]".into(),
        ),
        // Durations: `0.05s`, `1m02s`, and the seconds fields of the JSON reports.
        (r"\b\d+(\.\d+)?(ms|s)\b".into(), "[DUR]".into()),
        (
            r#""(duration_secs|build_secs|duration|time_secs|elapsed_secs|durationMs|time)": ?[0-9.e+-]+"#
                .into(),
            r#""$1": "[DUR]""#.into(),
        ),
        (r#"time="[0-9.]+""#.into(), r#"time="[DUR]""#.into()),
        // Commit ids differ with the commit time; trees, blobs and content hashes do not.
        (r"\b[0-9a-f]{40}\b".into(), "[ID]".into()),
        (r"\b[0-9a-f]{12}\.\.[0-9a-f]{12}\b".into(), "[ID]..[ID]".into()),
        (r"(base `?)[0-9a-f]{12}\b".into(), "$1[SHORT]".into()),
        (r#""nonce": "[0-9a-f]+""#.into(), r#""nonce": "[NONCE]""#.into()),
        (r"nonce=[0-9a-f]+".into(), "nonce=[NONCE]".into()),
        (r"probe-test-client-[A-Za-z0-9]+".into(), "probe-test-client-[RAND]".into()),
        (r"\bpid \d+".into(), "pid [PID]".into()),
        // Padding folded: a column one character wider must not fail the snapshot.
        (r"  +".into(), "  ".into()),
        (r"---+".into(), "---".into()),
    ]
}

fn check(sample: &Sample, name: &str, text: &str) {
    let filters = filters(sample);
    let refs: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => refs, prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, text);
    });
}

fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

#[test]
fn every_report_of_the_sample_is_the_committed_one() {
    let sample = demo();
    let out = |rel: &str| sample.path(&format!("again/{rel}"));

    let gate = sample.run(&[
        "gate",
        "run",
        "--config",
        &sample.path("candidate/gate.toml"),
        "--out",
        &out("gate"),
        "--format",
        "markdown",
        "--junit",
        &out("gate-junit.xml"),
    ]);
    gate.assert_exit(0);
    check(&sample, "gate.md", &gate.stdout);
    check(
        &sample,
        "gate-summary.txt",
        &read(&out("gate/gate-summary.txt")),
    );
    check(&sample, "gate.json", &read(&out("gate/gate.json")));
    check(&sample, "gate-junit.xml", &read(&out("gate-junit.xml")));

    let mutants = sample.run(&[
        "mutants",
        "run",
        &sample.path("candidate/mutants.toml"),
        "--candidate",
        &sample.path("candidate/gate.toml"),
        "--out",
        &out("mutants"),
        "--format",
        "markdown",
        "--sarif",
        &out("mutants.sarif"),
    ]);
    mutants.assert_exit(0);
    check(&sample, "mutants.md", &mutants.stdout);
    for file in [
        "mutants.txt",
        "mutants.json",
        "mutation-report.json",
        "junit.xml",
    ] {
        check(
            &sample,
            &format!("mutants-{file}"),
            &read(&out(&format!("mutants/{file}"))),
        );
    }
    check(&sample, "mutants.sarif", &read(&out("mutants.sarif")));

    for file in ["results.txt", "results.json"] {
        check(
            &sample,
            &format!("probe-{file}"),
            &read(&sample.path(&format!("candidate/probe-out/{file}"))),
        );
    }
}
