//! `mutants` keeps its promises under faults and hostile input: a suite that rearranges the
//! mutated file, a spec that links out of the tree, crafted shards, builds that hang, bad
//! values, names that try to forge lines, two runs on one `--out`, a reader that closes stdout.
//!
//! Every attack here aims only at files inside the test's own temp dir (the "victim").

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::{Output, Repo};

use crate::common::report_in;

const BIN: &str = env!("CARGO_BIN_EXE_mutants");

fn mutants() -> assert_cmd::Command {
    testkit::bin(BIN)
}

/// A committed repository with `files`.
fn repo(files: &[(&str, &str)]) -> Repo {
    let repo = Repo::new();
    for (path, body) in files {
        repo.write(path, body);
    }
    repo.commit_all("fixture");
    repo
}

/// `mutants run --jobs 1 --out OUT ARGS` in `repo`, with `env`.
fn run_in(repo: &Repo, out: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut cmd = mutants();
    cmd.current_dir(repo.path())
        .args(["run", "mutants.toml", "--jobs", "1", "--out"])
        .arg(out)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Output::of(&mut cmd)
}

// ---------------------------------------------------------------------------------------------
// 1. A suite that replaces the mutated file never has the original written through it.

const LIB: &str = "f() {\n  echo 1\n}\n";

/// The suite: when it sees the mutant, it does `action` to lib.sh (and fails); otherwise it
/// checks f and counts.
fn spoiling_suite(action: &str) -> String {
    format!(
        "if grep -q MUTATED {file}; then\n  {action}\n  exit 1\nfi\n. ./{file}\nif [ \"$(f)\" = 1 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n",
        file = "sub/lib.sh"
    )
}

const SPOIL_SPEC: &str = r#"[suites.unit]
run = "sh test.sh"
timeout = "20s"

[[mutant]]
name = "the suite replaces the file"
file = "sub/lib.sh"
anchor = "echo 1"
replace = "echo MUTATED"
suite = "unit"

[[mutant]]
name = "a control after it"
file = "sub/lib.sh"
anchor = "f() {"
replace = "f()  {"
suite = "unit"
expect = "survive"

[[mutant]]
name = "a real kill after it"
file = "sub/lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"
"#;

/// Runs the spoiling spec with `action`, against a victim file and a victim folder in the
/// test's own temp dir; returns the report, after checking what every case must hold.
fn spoiled_run(action: &str, status: &str) -> Value {
    let victims = tempfile::tempdir().unwrap();
    let victim = victims.path().join("victim");
    fs::write(&victim, "victim bytes\n").unwrap();
    let victim_dir = victims.path().join("victim-dir");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("lib.sh"), "victim lib\n").unwrap();
    let repo = repo(&[
        ("sub/lib.sh", LIB),
        ("test.sh", &spoiling_suite(action)),
        ("mutants.toml", SPOIL_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    let result = run_in(
        &repo,
        out.path(),
        &[("VICTIM", &victim), ("VICTIM_DIR", &victim_dir)],
        &[],
    );
    // One finding (the error row), never a crash of the run.
    result.assert_exit(1);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim bytes\n");
    assert_eq!(
        fs::read_to_string(victim_dir.join("lib.sh")).unwrap(),
        "victim lib\n"
    );
    assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 1);
    let report = report_in(out.path());
    let rows = report["mutants"].as_array().unwrap();
    assert_eq!(rows[0]["verdict"], "error", "{}", rows[0]);
    let got = rows[0]["run"]["status"].as_str().unwrap();
    assert!(got.contains(status), "{got}");
    // Stryker's viewers see a runtime error with the reason, never a kill.
    let stryker: Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("mutation-report.json")).unwrap())
            .unwrap();
    let first = &stryker["files"]["sub/lib.sh"]["mutants"][0];
    assert_eq!(first["status"], "RuntimeError", "{first}");
    assert!(
        first["statusReason"].as_str().unwrap().contains(status),
        "{first}"
    );
    // The next mutants run in a fresh copy: the control holds, the kill is a kill.
    assert_eq!(rows[1]["verdict"], "control held", "{}", rows[1]);
    assert_eq!(rows[2]["verdict"], "killed", "{}", rows[2]);
    // DIR itself was never touched.
    assert_eq!(
        fs::read_to_string(repo.path().join("sub/lib.sh")).unwrap(),
        LIB
    );
    assert!(repo.extra_worktrees().is_empty());
    report
}

#[test]
fn a_suite_that_swaps_the_mutated_file_for_a_link_never_has_it_written_through() {
    spoiled_run(
        r#"rm sub/lib.sh; ln -s "$VICTIM" sub/lib.sh"#,
        "the suite replaced the mutated file (now a symlink)",
    );
}

#[test]
fn a_suite_that_swaps_the_mutated_file_for_a_folder_is_an_error_and_the_copy_is_rebuilt() {
    spoiled_run(
        "rm sub/lib.sh; mkdir sub/lib.sh; echo x > sub/lib.sh/inner",
        "the suite replaced the mutated file (now a folder)",
    );
}

#[test]
fn a_suite_that_deletes_the_mutated_file_is_an_error_not_a_kill() {
    spoiled_run("rm sub/lib.sh", "the suite deleted the mutated file");
}

#[test]
fn a_suite_that_puts_another_file_in_its_place_is_an_error() {
    spoiled_run(
        "cp sub/lib.sh sub/new; rm sub/lib.sh; mv sub/new sub/lib.sh",
        "the suite replaced the mutated file (now another file)",
    );
}

#[test]
fn a_suite_that_swaps_the_parent_folder_for_a_link_never_has_the_victim_written() {
    spoiled_run(
        r#"mv sub sub.old; ln -s "$VICTIM_DIR" sub"#,
        "the suite replaced the mutated file (now another file)",
    );
}

#[test]
fn a_run_refuses_a_planted_logs_link_and_never_clears_or_writes_through_it() {
    let victims = tempfile::tempdir().unwrap();
    let victim_dir = victims.path().join("elsewhere");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("keep.log"), "victim log\n").unwrap();
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", MERGE_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&victim_dir, out.path().join("logs")).unwrap();
    let result = run_in(&repo, out.path(), &[], &[]);
    // Refused before any suite runs (the one output guard): never followed, never removed.
    result.assert_exit(2);
    assert!(result.stderr.contains("is a link"), "{result}");
    assert_eq!(
        fs::read_to_string(victim_dir.join("keep.log")).unwrap(),
        "victim log\n"
    );
    assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 1);
    let logs = fs::symlink_metadata(out.path().join("logs")).unwrap();
    assert!(logs.file_type().is_symlink(), "the user's link was removed");
}

// ---------------------------------------------------------------------------------------------
// 2. `check` applies run's path rule.

#[test]
fn check_and_list_refuse_a_spec_file_that_links_out_of_the_tree_and_never_read_it() {
    let victims = tempfile::tempdir().unwrap();
    let victim = victims.path().join("victim");
    fs::write(&victim, "secret ANCHOR\n").unwrap();
    let repo = Repo::new();
    repo.write("real.txt", "ANCHOR here\n");
    fs::create_dir(repo.path().join("folder")).unwrap();
    repo.write("folder/x", "x");
    std::os::unix::fs::symlink(&victim, repo.path().join("link.txt")).unwrap();
    let spec = |file: &str| {
        format!("[suites.u]\nrun = \"true\"\n\n[[mutant]]\nname = \"m\"\nfile = \"{file}\"\nanchor = \"ANCHOR\"\nreplace = \"OTHER\"\nsuite = \"u\"\n")
    };
    repo.write("link.toml", spec("link.txt"))
        .write("folder.toml", spec("folder"))
        .write("real.toml", spec("real.txt"));
    repo.commit_all("fixture");
    for (cmd, toml, why) in [
        ("check", "link.toml", "leads outside the tree"),
        ("check", "folder.toml", "is not a regular file"),
        ("list", "link.toml", "leads outside the tree"),
        ("list", "folder.toml", "is not a regular file"),
    ] {
        let out = mutants()
            .current_dir(repo.path())
            .args([cmd, toml])
            .output()
            .map(Output::from)
            .unwrap();
        assert_eq!(out.exit(), 2, "{toml}: {}", out);
        let err = out.stderr.as_str();
        assert!(
            err.contains(&format!("{toml}:4:")) && err.contains(why),
            "{toml}: {err}"
        );
        assert!(out.stdout.is_empty(), "{}", out);
    }
    // The same rule lets a regular file inside the tree through.
    mutants()
        .current_dir(repo.path())
        .args(["check", "real.toml"])
        .assert()
        .code(0);
    mutants()
        .current_dir(repo.path())
        .args(["list", "real.toml"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("real.txt  1"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret ANCHOR\n");
}

// ---------------------------------------------------------------------------------------------
// 3. merge refuses what does not add up, and never follows a path out of a shard.

const MERGE_SPEC: &str = r#"[suites.unit]
run = "sh test.sh"
timeout = "20s"

[[mutant]]
name = "one"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"

[[mutant]]
name = "two"
file = "lib.sh"
anchor = "f() {"
replace = "f() { return 1;"
suite = "unit"
"#;

const MERGE_TEST: &str = ". ./lib.sh\nif [ \"$(f)\" = 1 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n";

/// Two real shards of one run, in `tmp/s1` and `tmp/s2`.
struct Shards {
    repo: Repo,
    tmp: tempfile::TempDir,
}

impl Shards {
    fn new() -> Shards {
        let repo = repo(&[
            ("lib.sh", LIB),
            ("test.sh", MERGE_TEST),
            ("mutants.toml", MERGE_SPEC),
        ]);
        let tmp = tempfile::tempdir().unwrap();
        let s = Shards { repo, tmp };
        for k in [1, 2] {
            let out = run_in(&s.repo, &s.dir(k), &[], &["--shard", &format!("{k}/2")]);
            out.assert_exit(0);
        }
        s
    }

    fn dir(&self, k: usize) -> PathBuf {
        self.tmp.path().join(format!("s{k}"))
    }

    fn victim(&self) -> PathBuf {
        let v = self.tmp.path().join("victim");
        if !v.exists() {
            fs::write(&v, "victim bytes\n").unwrap();
        }
        v
    }

    fn edit(&self, k: usize, f: impl FnOnce(&mut Value)) {
        let path = self.dir(k).join("mutants.json");
        let mut v = report_in(&self.dir(k));
        f(&mut v);
        fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    fn merge_into(&self, out: &Path) -> Output {
        mutants()
            .current_dir(self.repo.path())
            .arg("merge")
            .arg(self.dir(1))
            .arg(self.dir(2))
            .arg("--out")
            .arg(out)
            .output()
            .map(Output::from)
            .unwrap()
    }

    fn merge(&self) -> Output {
        self.merge_into(&self.tmp.path().join("merged"))
    }

    /// Asserts the merge was refused (exit 2) with one line holding every `words`, and that
    /// nothing was written to the merge's --out.
    fn refused(&self, words: &[&str]) {
        let out = self.merge();
        out.assert_exit(2);
        let err = out.stderr.as_str();
        assert_eq!(err.lines().count(), 1, "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} not in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !self.tmp.path().join("merged").join("mutants.json").exists(),
            "a refused merge wrote a report"
        );
    }
}

#[test]
fn merge_of_real_shards_names_the_one_tree_it_judges() {
    let s = Shards::new();
    let out = s.merge();
    out.assert_exit(0);
    let merged = report_in(&s.tmp.path().join("merged"));
    let shard = report_in(&s.dir(1));
    assert_eq!(merged["tree"], shard["tree"]);
    assert_eq!(
        merged["tree"].as_str().unwrap(),
        s.repo.git(["rev-parse", "HEAD^{tree}"]).trim()
    );
    assert_eq!(merged["mutants"].as_array().unwrap().len(), 2);
}

#[test]
fn merge_refuses_shards_of_different_trees() {
    let s = Shards::new();
    // Shard 2 again, on an uncommitted edit: the same commit, another tree.
    s.repo.write("lib.sh", format!("{LIB}# edited\n"));
    fs::remove_dir_all(s.dir(2)).unwrap();
    let out = run_in(&s.repo, &s.dir(2), &[], &["--shard", "2/2"]);
    out.assert_exit(0);
    s.refused(&["s2/mutants.json", "field `tree`"]);
}

#[test]
fn merge_refuses_shards_of_different_runs_naming_the_field() {
    for (field, value) in [
        ("commit", json!("0".repeat(40))),
        ("spec_sha256", json!("0".repeat(64))),
        ("tool_version", json!("0.0.0-other")),
        ("tree", json!("1".repeat(40))),
    ] {
        let s = Shards::new();
        s.edit(2, |v| v[field] = value.clone());
        s.refused(&["s2/mutants.json", &format!("field `{field}`")]);
    }
}

#[test]
fn merge_refuses_shards_of_different_candidates_naming_the_patch_or_the_manifest() {
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\ntimeout = \"20s\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n\n[[mutant]]\nname = \"returns early\"\nfile = \"lib.sh\"\nanchor = \"double() {\"\nreplace = \"double() { return 1;\"\nsuite = \"double\"\n";
    let fx = crate::common::Fixture::new(spec);
    let (dir, _) = crate::common::candidate(&fx, true);
    let gate_toml = dir.path().join("gate.toml");
    let shard = |k: usize| fx.out.path().join(format!("s{k}"));
    for k in [1, 2] {
        let out = fx
            .cmd()
            .args(["run", "mutants.toml", "--candidate"])
            .arg(&gate_toml)
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(shard(k))
            .output()
            .map(Output::from)
            .unwrap();
        out.assert_exit(0);
    }
    let sums = report_in(&shard(1))["candidate"].clone();
    for field in ["patch_sha256", "manifest_sha256"] {
        assert_eq!(sums[field].as_str().unwrap().len(), 64, "{sums}");
    }
    let merge = |out: &str| {
        fx.cmd()
            .arg("merge")
            .arg(shard(1))
            .arg(shard(2))
            .arg("--out")
            .arg(fx.out.path().join(out))
            .output()
            .map(Output::from)
            .unwrap()
    };
    let ok = merge("merged");
    ok.assert_exit(0);
    let original = fs::read_to_string(shard(2).join("mutants.json")).unwrap();
    for field in ["patch_sha256", "manifest_sha256", "tree", "base"] {
        let mut v: Value = serde_json::from_str(&original).unwrap();
        v["candidate"][field] = json!("a".repeat(if field.ends_with("256") { 64 } else { 40 }));
        fs::write(shard(2).join("mutants.json"), v.to_string()).unwrap();
        let out = merge(&format!("refused-{field}"));
        assert_eq!(out.exit(), 2, "{field}: {}", out);
        let err = out.stderr.as_str();
        assert!(
            err.contains("s2/mutants.json") && err.contains(&format!("field `candidate.{field}`")),
            "{err}"
        );
    }
}

#[test]
fn merge_refuses_malformed_shard_fields() {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"k": 3, "n": 2}), "field `shard.k`"),
        (json!({"k": 0, "n": 2}), "field `shard.k`"),
        (json!({"k": 1, "n": 2}), "given twice"),
        (json!({"k": 2, "n": 3}), "field `shard.n`"),
        (
            json!({"k": 1, "n": 18446744073709551615u64}),
            "field `shard.n`",
        ),
        (json!(null), "field `shard`"),
        (json!({"k": "2", "n": 2}), "field `shard.k`"),
    ];
    for (shard, words) in cases {
        let s = Shards::new();
        s.edit(2, |v| v["shard"] = shard.clone());
        s.refused(&["mutants.json", words]);
    }
}

/// An edit to a shard's report.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn merge_refuses_any_malformed_field_naming_it_and_never_panics() {
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|v| v["jobs"] = json!("two")), "field `jobs`"),
        (
            Box::new(|v| {
                v["mutants"][0].as_object_mut().unwrap().remove("verdict");
            }),
            "field `mutants[0].verdict`",
        ),
        (
            Box::new(|v| {
                v["mutants"][0]["run"]
                    .as_object_mut()
                    .unwrap()
                    .remove("build_secs");
            }),
            "field `mutants[0].run.build_secs`",
        ),
        (
            Box::new(|v| v["mutants"][0]["surprise"] = json!(1)),
            "field `mutants[0].surprise`",
        ),
        (
            Box::new(|v| v["mutants"][0]["verdict"] = json!("obliterated")),
            "field `mutants[0].verdict`",
        ),
        (
            Box::new(|v| v["mutants"][0]["file"] = json!("../outside.sh")),
            "field `mutants[0].file`",
        ),
        (
            Box::new(|v| v["mutants"][0]["run"]["duration_secs"] = json!(1e300)),
            "field `mutants[0].run.duration_secs`",
        ),
        (
            Box::new(|v| v["baseline"][0]["mutant_timeout_secs"] = json!(-1.0)),
            "field `baseline[0].mutant_timeout_secs`",
        ),
        (Box::new(|v| *v = json!([1, 2])), "not a mutants report"),
    ];
    for (edit, words) in cases {
        let s = Shards::new();
        s.edit(2, |v| edit(v));
        s.refused(&["s2/mutants.json", words]);
    }
    let s = Shards::new();
    fs::write(
        s.dir(2).join("mutants.json"),
        b"{\"version\": 1, \"tool\": \x00\xff",
    )
    .unwrap();
    s.refused(&["s2/mutants.json", "not a mutants report"]);
}

#[test]
fn merge_never_reads_or_writes_a_log_path_that_leaves_the_shard() {
    for how in ["climbs", "absolute", "link", "outside logs"] {
        let s = Shards::new();
        let victim = s.victim();
        let log = match how {
            "climbs" => "../victim".to_string(),
            "absolute" => victim.display().to_string(),
            "link" => {
                let link = s.dir(2).join("logs").join("planted.log");
                std::os::unix::fs::symlink(&victim, &link).unwrap();
                "logs/planted.log".to_string()
            }
            _ => "mutants.txt".to_string(),
        };
        s.edit(2, |v| v["mutants"][0]["run"]["log"] = json!(log));
        s.refused(&["s2/mutants.json", "field `mutants[0].run.log`"]);
        assert_eq!(fs::read_to_string(&victim).unwrap(), "victim bytes\n");
        assert!(!s.tmp.path().join("merged/logs/planted.log").exists());
    }
}

#[test]
fn merge_refuses_a_planted_link_in_its_out_and_never_writes_through_it() {
    let s = Shards::new();
    let victim = s.victim();
    let merged = s.tmp.path().join("merged");
    fs::create_dir_all(merged.join("logs")).unwrap();
    let log = report_in(&s.dir(2))["mutants"][0]["run"]["log"]
        .as_str()
        .unwrap()
        .to_string();
    std::os::unix::fs::symlink(&victim, merged.join(&log)).unwrap();
    let out = s.merge();
    out.assert_exit(2);
    assert!(out.stderr.contains("is a link"), "{out}");
    assert_eq!(out.stderr.lines().count(), 1, "{out}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim bytes\n");
    let planted = fs::symlink_metadata(merged.join(&log)).unwrap();
    assert!(
        planted.file_type().is_symlink(),
        "the user's link was removed"
    );
    assert!(
        !merged.join("mutants.json").exists(),
        "a report was written"
    );
}

#[test]
fn merge_refuses_an_out_that_is_one_of_the_shards() {
    let s = Shards::new();
    let before = fs::read(s.dir(1).join("mutants.json")).unwrap();
    // The same folder by another spelling.
    let out = s.merge_into(&s.dir(2).join("..").join("s1"));
    out.assert_exit(2);
    assert!(out.stderr.contains("is the shard folder"));
    assert_eq!(fs::read(s.dir(1).join("mutants.json")).unwrap(), before);
}

#[test]
fn merge_refuses_sources_for_files_no_row_names() {
    let s = Shards::new();
    let path = s.dir(2).join("mutation-report.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    v["files"]["../victim"] = json!({"language": "text", "source": "x", "mutants": []});
    fs::write(&path, v.to_string()).unwrap();
    s.refused(&["s2/mutation-report.json", "files.../victim"]);
    // A mutation-report.json that is a link is never read.
    let s = Shards::new();
    let path = s.dir(2).join("mutation-report.json");
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(s.victim(), &path).unwrap();
    s.refused(&["s2/mutation-report.json"]);
}

// ---------------------------------------------------------------------------------------------
// 4. A build step has its own timeout; a build that fails or hangs is an error.

#[test]
fn a_build_that_hangs_or_fails_is_an_error_never_a_hang_or_a_killed_control() {
    let repo = repo(&[
        ("lib.sh", "f() {\n  echo 1\n}\n"),
        ("test.sh", MERGE_TEST),
        (
            "mutants.toml",
            r#"[suites.unit]
build = "if grep -q HANG lib.sh; then sleep 30; fi; if grep -q BREAK lib.sh; then exit 3; fi"
build_timeout = "2s"
run = "sh test.sh"
timeout = "20s"

[[mutant]]
name = "a build that hangs"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 1 # HANG"
suite = "unit"

[[mutant]]
name = "a control whose build fails"
file = "lib.sh"
anchor = "f() {"
replace = "f() { # BREAK"
suite = "unit"
expect = "survive"

[[mutant]]
name = "a control whose build hangs"
file = "lib.sh"
anchor = "f() {"
replace = "f() { # HANG"
suite = "unit"
expect = "survive"

[[mutant]]
name = "an ordinary kill"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"
"#,
        ),
    ]);
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = run_in(&repo, out.path(), &[], &[]);
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the build's timeout was not used"
    );
    result.assert_exit(1);
    let report = report_in(out.path());
    let rows = report["mutants"].as_array().unwrap();
    for (i, status) in [
        (0, "build timed out after"),
        (1, "build failed (exit 3)"),
        (2, "build timed out after"),
    ] {
        assert_eq!(rows[i]["verdict"], "error", "{}", rows[i]);
        let got = rows[i]["run"]["status"].as_str().unwrap();
        assert!(got.contains(status), "{got}");
        assert!(
            rows[i]["run"]["build_secs"].as_f64().is_some(),
            "{}",
            rows[i]
        );
    }
    let hung = rows[0]["run"]["build_secs"].as_f64().unwrap();
    assert!((1.5..10.0).contains(&hung), "{hung}");
    assert_eq!(rows[3]["verdict"], "killed", "{}", rows[3]);
    assert_eq!(report["tally"]["killed_hang"], 0);
    assert_eq!(report["tally"]["control_killed"], 0);
    assert!(report["baseline"][0]["build_secs"].as_f64().is_some());
    // The text report shows the build apart from the run.
    let txt = fs::read_to_string(out.path().join("mutants.txt")).unwrap();
    let baseline = txt
        .lines()
        .find(|l| l.starts_with("baseline: unit"))
        .unwrap();
    assert!(baseline.contains(" build"), "{baseline}");
    // Its row in the table (the counts follow under the table, on a line of their own).
    let kill = txt
        .lines()
        .find(|l| l.starts_with("an ordinary kill") && !l.contains("Counts:"))
        .unwrap_or_else(|| panic!("{txt}"));
    assert!(kill.contains(" build"), "{kill}");
}

#[test]
fn a_suite_without_a_build_step_reports_no_build_time() {
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", MERGE_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    let result = run_in(&repo, out.path(), &[], &[]);
    result.assert_exit(0);
    let report = report_in(out.path());
    assert!(report["baseline"][0]["build_secs"].is_null());
    assert!(report["mutants"][0]["run"]["build_secs"].is_null());
}

// ---------------------------------------------------------------------------------------------
// 5. Bad input: exit 2 with FILE:LINE, or naming the value.

#[test]
fn bad_specs_are_refused_at_their_line() {
    let suite = |extra: &str| format!("[suites.u]\nrun = \"true\"\n{extra}\n");
    let m = |anchor: &str, replace: &str| {
        format!("[[mutant]]\nname = \"m\"\nfile = \"lib.sh\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"u\"\n")
    };
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{}{}", suite(""), m("echo 1", "echo 1")),
            "mutants.toml:8: mutant \"m\": `replace` equals `anchor`",
        ),
        (
            format!("{}{}", suite(""), m("", "x")),
            "mutants.toml:7: `anchor` is empty",
        ),
        (
            format!(
                "{}{}",
                suite("env = { A = \"x\\u0000y\" }"),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:3: suite \"u\": env A: the value holds a NUL byte",
        ),
        (
            format!("{}{}", suite("timeout = \"31d\""), m("echo 1", "echo 2")),
            "mutants.toml:3: timeout: bad duration \"31d\": it is over the maximum of 30 days",
        ),
        (
            format!(
                "{}{}",
                suite("timeout = \"99999999999999999999999999d\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:3: timeout:",
        ),
        (
            format!(
                "{}{}",
                suite("build = \"true\"\nbuild_timeout = \"40d\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:4: build_timeout: bad duration \"40d\": it is over the maximum of 30 days",
        ),
        (
            format!(
                "{}{}",
                suite("build_timeout = \"1m\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:3: suite \"u\": build_timeout without a `build` step",
        ),
    ];
    for (spec, want) in cases {
        let repo = repo(&[("lib.sh", LIB), ("mutants.toml", &spec)]);
        for cmd in ["check", "run"] {
            let out = tempfile::tempdir().unwrap();
            let mut c = mutants();
            c.current_dir(repo.path()).args([cmd, "mutants.toml"]);
            if cmd == "run" {
                c.arg("--out").arg(out.path().join("o"));
            }
            let result = c.output().map(Output::from).unwrap();
            assert_eq!(result.exit(), 2, "{cmd} {spec}\n{}", result);
            let err = result.stderr.as_str();
            assert!(err.contains(want), "{cmd}: want {want:?} in {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(
                !out.path().join("o").exists(),
                "a refused run wrote its --out"
            );
        }
    }
}

#[test]
fn bad_values_on_the_command_line_are_refused_naming_the_value() {
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", MERGE_SPEC),
    ]);
    for (args, value) in [
        (vec!["--jobs", "0"], "0"),
        (vec!["--jobs", "100000"], "100000"),
        (vec!["--jobs", "-1"], "-1"),
        (vec!["--shard", "0/3"], "0/3"),
        (vec!["--shard", "4/3"], "4/3"),
        (vec!["--shard", "1/0"], "1/0"),
        (
            vec!["--shard", "1/99999999999999999999999"],
            "1/99999999999999999999999",
        ),
        (vec!["--timeout", "31d"], "31d"),
        (vec!["--timeout", "0s"], "0s"),
        (
            vec!["--timeout", "99999999999999999999999999h"],
            "99999999999999999999999999h",
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let result = mutants()
            .current_dir(repo.path())
            .args(["run", "mutants.toml", "--out"])
            .arg(out.path().join("o"))
            .args(&args)
            .output()
            .map(Output::from)
            .unwrap();
        assert_eq!(result.exit(), 2, "{args:?}: {}", result);
        let err = result.stderr.as_str();
        assert!(err.contains(value), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.path().join("o").exists());
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Outside text never forges a line or reaches the terminal raw.

/// The name of a hostile mutant (TOML escapes): a line break that forges a verdict line, a
/// carriage return, and an ANSI colour.
const EVIL: &str = r"evil\nverdict   PASS\r\u001b[31mred";

#[test]
fn a_hostile_name_never_forges_a_line_or_reaches_the_terminal_raw() {
    let spec = format!(
        "[suites.\"u{EVIL}\"]\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n[[mutant]]\nname = \"{EVIL}\"\nsite = \"{EVIL}\"\nfile = \"lib.sh\"\nanchor = \"echo 1\"\nreplace = \"echo 2\"\nundoes = \"{EVIL}\"\nsuite = \"u{EVIL}\"\n"
    );
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", &spec),
    ]);
    let out = tempfile::tempdir().unwrap();
    let mut outputs: Vec<(String, String)> = Vec::new();
    for format in ["text", "markdown"] {
        let result = run_in(
            &repo,
            out.path(),
            &[],
            &["--format", format, "--color", "never"],
        );
        result.assert_exit(0);
        outputs.push((format!("stdout ({format})"), result.stdout.clone()));
        outputs.push((format!("stderr ({format})"), result.stderr.clone()));
    }
    for file in ["mutants.html", "junit.xml"] {
        outputs.push((
            file.into(),
            fs::read_to_string(out.path().join(file)).unwrap(),
        ));
    }
    let txt = fs::read_to_string(out.path().join("mutants.txt")).unwrap();
    outputs.push(("mutants.txt".into(), txt.clone()));
    for (name, body) in &outputs {
        for line in body.lines() {
            assert!(
                !line.trim_start().starts_with("verdict   PASS"),
                "{name}: a forged line: {line:?}"
            );
        }
    }
    // No raw escape or carriage return in any text output (mutants.txt, the text and Markdown
    // on stdout, stderr, the HTML, the XML): mutants' own lines (the header and baseline lines,
    // progress) are escaped by mutants, the table cells by report::table.
    let header: String = txt
        .lines()
        .take_while(|l| !l.starts_with("run:"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(header.contains("baseline: u"), "{header}");
    for (name, body) in &outputs {
        assert!(!body.contains('\u{1b}'), "{name}: a raw ESC:\n{body}");
        assert!(!body.contains('\r'), "{name}: a raw CR:\n{body}");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. One run per --out.

#[test]
fn a_second_run_on_the_same_out_is_refused_while_the_first_holds_it() {
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", &format!("sleep 3\n{MERGE_TEST}")),
        ("mutants.toml", MERGE_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    let mut first = Command::new(BIN);
    testkit::hermetic(&mut first);
    let mut first = first
        .current_dir(repo.path())
        .args(["run", "mutants.toml", "--out"])
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id().to_string();
    let lock = out.path().join(".gatekit-lock");
    let started = Instant::now();
    while fs::read_to_string(&lock).unwrap_or_default().trim() != pid {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = mutants()
        .current_dir(repo.path())
        .args(["run", "mutants.toml", "--out"])
        .arg(out.path())
        .output()
        .map(Output::from)
        .unwrap();
    second.assert_exit(2);
    let err = second.stderr.as_str();
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    // The second run wrote nothing: the first finishes with its own report whole.
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let report = report_in(out.path());
    assert_eq!(report["mutants"].as_array().unwrap().len(), 2);
}

#[test]
fn a_merge_into_an_out_another_process_holds_is_refused_and_writes_nothing() {
    let s = Shards::new();
    let merged = s.tmp.path().join("merged");
    let held = files::lock::OutLock::acquire(&merged).unwrap();
    s.refused(&[
        "in use by another run",
        &format!("pid {}", std::process::id()),
    ]);
    assert!(!merged.join("logs").exists());
    drop(held);
    let out = s.merge();
    out.assert_exit(0);
}

// ---------------------------------------------------------------------------------------------
// 8. A closed stdout ends quietly.

/// Runs `mutants ARGS` in `dir` with stdout a pipe whose read end is already closed, so the
/// first write fails with EPIPE.
fn with_closed_stdout(dir: &Path, args: &[&str]) -> Output {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    let mut cmd = Command::new(BIN);
    testkit::hermetic(&mut cmd);
    let child = cmd
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.wait_with_output().map(Output::from).unwrap()
}

#[test]
fn a_reader_that_closes_stdout_early_ends_the_output_quietly() {
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", MERGE_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("o");
    let o = o.to_str().unwrap();
    for (args, want) in [
        (vec!["completions", "bash"], 0),
        (vec!["man"], 0),
        (vec!["check", "mutants.toml"], 0),
        (vec!["check", "mutants.toml", "--json"], 0),
        (vec!["list", "mutants.toml"], 0),
        (vec!["run", "mutants.toml", "--json", "--out", o], 0),
        (vec!["run", "mutants.toml", "--out", o], 0),
        (vec!["merge", o, "--out", &format!("{o}-merged")], 0),
    ] {
        let result = with_closed_stdout(repo.path(), &args);
        let err = result.stderr.as_str();
        assert_eq!(result.code, Some(want), "{args:?}: {err}");
        assert!(
            !err.contains("panicked")
                && !err.contains("failed printing")
                && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}
