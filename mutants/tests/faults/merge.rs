//! `merge` refuses what does not add up (shards of other runs, malformed or crafted reports,
//! an `--out` in use or among the shards), in one line naming the file, and never follows a
//! path out of a shard.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use testkit::{Output, Repo};

use crate::common::report_in;

use super::{mutants, repo, run_in, LIB, MERGE_SPEC, MERGE_TEST};

// ---------------------------------------------------------------------------------------------
// 3. merge refuses what does not add up, and never follows a path out of a shard.

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

/// A shard's report with a field this mutants does not write, or a field of the wrong type, is
/// refused before anything is merged: one line, exit 2, naming the file, the field's path and
/// what is wrong there (the typed records refuse it, nothing reads the report untyped).
#[test]
fn merge_refuses_a_shard_with_an_unknown_field_or_a_wrong_type_in_one_line_naming_the_file() {
    let s = Shards::new();
    s.edit(2, |v| v["tally"]["ghosts"] = json!(0));
    s.refused(&[
        "s2/mutants.json",
        "field `tally.ghosts`",
        "unknown field `ghosts`",
    ]);
    let s = Shards::new();
    s.edit(2, |v| v["mutants"][0]["run"]["exit_code"] = json!("one"));
    s.refused(&[
        "s2/mutants.json",
        "field `mutants[0].run.exit_code`",
        "invalid type: string \"one\"",
    ]);
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
            "field `mutants[0]`: missing field `verdict`",
        ),
        (
            Box::new(|v| {
                v["mutants"][0]["run"]
                    .as_object_mut()
                    .unwrap()
                    .remove("build_secs");
            }),
            "field `mutants[0].run`: missing field `build_secs`",
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
