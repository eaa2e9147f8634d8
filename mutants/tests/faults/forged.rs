//! `merge` accepts only what a single run could have written, tried as a forger would: real
//! shards of a spec whose single run exits 1 (one survivor), each then edited the smallest way
//! that would turn the merge green, and each refused (exit 2, one line naming the shard and the
//! row, nothing written). Signed shards (keys made in the test's temp dir, HOME there) are
//! taken under `--allowed-signers` only while their report is the one signed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use testkit::{Output, Repo};

use crate::common::report_in;

use super::{mutants, repo, LIB, MERGE_TEST};

/// Three mutants dealt over two shards: 1/2 holds "one" (index 0) and "two" (index 2), 2/2
/// holds "stays" (index 1), a survivor (the suite never looks at the comment it adds).
const SPEC: &str = r#"[suites.unit]
run = "sh test.sh"
timeout = "20s"

[[mutant]]
name = "one"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"

[[mutant]]
name = "stays"
file = "lib.sh"
anchor = "f() {"
replace = "f() { # unseen"
suite = "unit"

[[mutant]]
name = "two"
file = "lib.sh"
anchor = "f() {"
replace = "f() { return 1;"
suite = "unit"
"#;

/// The shards' statement, inside each shard's --out (where `merge --allowed-signers` reads it).
const STATEMENT: &str = "mutants.intoto.json";

struct Shards {
    repo: Repo,
    tmp: tempfile::TempDir,
}

impl Shards {
    /// Two real shards of SPEC in `tmp/s1`, `tmp/s2`, each run with `extra`.
    fn run(extra: &dyn Fn(&Path) -> Vec<String>) -> Shards {
        let repo = repo(&[
            ("lib.sh", LIB),
            ("test.sh", MERGE_TEST),
            ("mutants.toml", SPEC),
        ]);
        let s = Shards {
            repo,
            tmp: tempfile::tempdir().unwrap(),
        };
        for k in [1, 2] {
            let out = s.dir(k);
            let mut cmd = s.cmd(s.repo.path());
            cmd.args(["run", "mutants.toml", "--jobs", "1", "--shard"])
                .arg(format!("{k}/2"))
                .arg("--out")
                .arg(&out)
                .args(extra(&out));
            // Shard 2 holds the survivor: its own run exits 1, shard 1's exits 0.
            Output::of(&mut cmd).assert_exit(if k == 2 { 1 } else { 0 });
        }
        s
    }

    fn new() -> Shards {
        Shards::run(&|_| Vec::new())
    }

    /// `mutants` with HOME inside the test's temp dir, started in `cwd`.
    fn cmd(&self, cwd: &Path) -> assert_cmd::Command {
        let mut cmd = mutants();
        cmd.current_dir(cwd)
            .env("HOME", self.tmp.path())
            .env_remove("SSH_AUTH_SOCK");
        cmd
    }

    fn dir(&self, k: usize) -> PathBuf {
        self.tmp.path().join(format!("s{k}"))
    }

    fn out(&self) -> PathBuf {
        self.tmp.path().join("merged")
    }

    fn edit(&self, k: usize, f: impl FnOnce(&mut Value)) {
        let mut v = report_in(&self.dir(k));
        f(&mut v);
        let text = serde_json::to_string_pretty(&v).unwrap() + "\n";
        fs::write(self.dir(k).join("mutants.json"), text).unwrap();
    }

    /// `mutants merge s1 s2 --out merged ARGS`, started in `cwd`.
    fn merge_in(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = self.cmd(cwd);
        cmd.arg("merge")
            .arg(self.dir(1))
            .arg(self.dir(2))
            .arg("--out")
            .arg(self.out())
            .args(args);
        Output::of(&mut cmd)
    }

    /// The merge run in the repository, with `--spec mutants.toml`.
    fn merge_with_spec(&self) -> Output {
        self.merge_in(self.repo.path(), &["--spec", "mutants.toml"])
    }

    /// Asserts `out` is a refusal: exit 2, one line holding every `words`, nothing written.
    fn refused(&self, out: &Output, words: &[&str]) {
        out.assert_exit(2);
        let err = out.stderr.as_str();
        assert_eq!(err.lines().count(), 1, "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} not in {err}");
        }
        assert!(
            !self.out().join("mutants.json").exists(),
            "a refused merge wrote a report"
        );
    }
}

/// The row of mutant `name` in a shard report, for editing.
fn row<'a>(v: &'a mut Value, name: &str) -> &'a mut Value {
    let rows = v["mutants"].as_array_mut().unwrap();
    rows.iter_mut().find(|r| r["name"] == name).unwrap()
}

/// A survivor's verdict flipped to `killed` (row and run), with the tally and exit code made to
/// match: only the row's own record (exit 0) still says otherwise.
fn flip_to_killed(v: &mut Value) {
    let r = row(v, "stays");
    r["verdict"] = json!("killed");
    r["run"]["verdict"] = json!("killed");
    v["tally"]["survived"] = json!(0);
    v["tally"]["killed"] = json!(1);
    v["exit_code"] = json!(0);
}

#[test]
fn untouched_shards_merge_into_what_the_single_run_says() {
    let s = Shards::new();
    let merged = s.merge_with_spec();
    merged.assert_exit(1);
    let report = report_in(&s.out());
    let names: Vec<&str> = report["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "stays", "two"]);
    assert_eq!(report["tally"]["survived"], 1);
    assert_eq!(report["mutants"][1]["run"]["exit_code"], 0);
    // Without --spec, in the repository: the spec the shards name is read from where they say.
    let _ = fs::remove_dir_all(s.out());
    let merged = s.merge_in(s.repo.path(), &[]);
    merged.assert_exit(1);
    assert!(
        !merged.stderr.contains("not against their spec"),
        "{merged}"
    );
    // Away from it, the merge says it could not hold the shards to their spec.
    let _ = fs::remove_dir_all(s.out());
    let elsewhere = s.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let merged = s.merge_in(&elsewhere, &[]);
    merged.assert_exit(1);
    let note = "the shards' spec mutants.toml is not here: the shards were checked against each other, not against their spec";
    assert!(merged.stderr.contains(note), "{merged}");
}

#[test]
fn a_survivors_row_deleted_with_planned_lowered_is_refused_naming_the_shard_and_the_row() {
    let s = Shards::new();
    s.edit(2, |v| {
        v["mutants"] = json!([]);
        v["planned"] = json!(0);
        v["tally"] = json!({"total": 0, "killed": 0, "killed_hang": 0, "survived": 0,
            "skipped": 0, "control_held": 0, "control_killed": 0, "error": 0, "unviable": 0,
            "claims_not_named": 0});
        v["exit_code"] = json!(0);
    });
    let words = ["s2/mutants.json", "\"stays\" (index 1)", "missing row"];
    s.refused(&s.merge_with_spec(), &words);
    // Without --spec, the spec the shards name (here, unchanged) is the one they are held to.
    s.refused(&s.merge_in(s.repo.path(), &[]), &words);
    // Without any spec at hand, the shares dealt over the mutants the shards add up to (two)
    // leave no room for shard 1's "two" (index 2): still refused, naming that row.
    let elsewhere = s.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    s.refused(
        &s.merge_in(&elsewhere, &[]),
        &["s1/mutants.json", "\"two\" (index 2)", "extra row"],
    );
}

/// The spec's last mutant dropped (its row gone, `planned` lowered, the tally and exit code
/// made to match) leaves shards that look like a run of a shorter spec: only the spec tells.
#[test]
fn the_specs_last_mutant_dropped_is_refused_against_the_spec() {
    let s = Shards::new();
    s.edit(1, |v| {
        let rows = v["mutants"].as_array_mut().unwrap();
        rows.retain(|r| r["name"] != "two");
        v["planned"] = json!(1);
        v["tally"]["total"] = json!(1);
        v["tally"]["killed"] = json!(1);
    });
    let words = ["s1/mutants.json", "\"two\" (index 2)", "missing row"];
    s.refused(&s.merge_with_spec(), &words);
    s.refused(&s.merge_in(s.repo.path(), &[]), &words);
}

#[test]
fn a_verdict_flipped_to_killed_while_its_record_says_exit_0_is_refused() {
    let s = Shards::new();
    s.edit(2, flip_to_killed);
    s.refused(
        &s.merge_with_spec(),
        &[
            "s2/mutants.json",
            "field `mutants[0].run.verdict` is killed",
            "\"stays\" (index 1)",
            "(exit 0) judges it SURVIVED",
        ],
    );
    // The row's verdict alone flipped (its run's left as recorded): refused at the row.
    let s = Shards::new();
    s.edit(2, |v| {
        flip_to_killed(v);
        row(v, "stays")["run"]["verdict"] = json!("SURVIVED");
    });
    s.refused(
        &s.merge_in(s.repo.path(), &[]),
        &["s2/mutants.json", "field `mutants[0].verdict` is killed"],
    );
    // A survivor passed off as a skip, though its anchor was found once and its suite ran.
    let s = Shards::new();
    s.edit(2, |v| {
        let r = row(v, "stays");
        r["verdict"] = json!("skipped (1 matches)");
        r["run"] = json!(null);
        v["tally"]["survived"] = json!(0);
        v["tally"]["skipped"] = json!(1);
    });
    s.refused(
        &s.merge_with_spec(),
        &["s2/mutants.json", "field `mutants[0].run` is null"],
    );
    // A kill made out of a run that could not start: an error, never a kill.
    let s = Shards::new();
    s.edit(1, |v| {
        let r = row(v, "one");
        r["run"]["not_started"] = json!("build failed (exit 3)");
    });
    s.refused(
        &s.merge_with_spec(),
        &["s1/mutants.json", "\"one\" (index 0)", "judges it error"],
    );
}

#[test]
fn an_extra_row_is_refused_naming_it() {
    let s = Shards::new();
    s.edit(2, |v| {
        let mut ghost = v["mutants"][0].clone();
        ghost["index"] = json!(3);
        ghost["name"] = json!("ghost");
        ghost["verdict"] = json!("killed");
        ghost["run"]["verdict"] = json!("killed");
        ghost["run"]["exit_code"] = json!(1);
        ghost["run"]["status"] = json!("exit 1");
        v["mutants"].as_array_mut().unwrap().push(ghost);
        v["planned"] = json!(2);
        v["tally"]["total"] = json!(2);
        v["tally"]["killed"] = json!(1);
    });
    s.refused(
        &s.merge_with_spec(),
        &[
            "s2/mutants.json",
            "field `mutants[1]`",
            "\"ghost\" (index 3)",
            "extra row",
        ],
    );
    // A row that is another mutant than the spec's at its index.
    let s = Shards::new();
    s.edit(2, |v| row(v, "stays")["replace"] = json!("f() { return 1;"));
    s.refused(
        &s.merge_with_spec(),
        &["s2/mutants.json", "field `mutants[0].replace`"],
    );
}

#[test]
fn counts_that_do_not_add_up_are_refused() {
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| {
                v["tally"]["survived"] = json!(0);
                v["tally"]["killed"] = json!(1);
            }),
            "field `tally`",
        ),
        (
            Box::new(|v| v["planned"] = json!(2)),
            "field `planned` is 2",
        ),
        (
            Box::new(|v| v["exit_code"] = json!(0)),
            "field `exit_code` is 0, but mutant \"stays\" (index 1) is SURVIVED",
        ),
        (
            Box::new(|v| {
                v["mutants"] = json!([]);
                v["tally"]["total"] = json!(0);
                v["tally"]["survived"] = json!(0);
            }),
            "field `planned` is 1",
        ),
        (
            Box::new(|v| {
                v["mutants"] = json!([]);
                v["unjudged"] = json!([{"index": 1, "name": "stays", "file": "lib.sh"}]);
                v["tally"]["total"] = json!(0);
                v["tally"]["survived"] = json!(0);
            }),
            "field `complete` is true, but 1 of its 1 planned mutants have no verdict",
        ),
    ];
    for (edit, words) in cases {
        let s = Shards::new();
        s.edit(2, |v| edit(v));
        s.refused(&s.merge_with_spec(), &["s2/mutants.json", words]);
    }
}

#[test]
fn a_spec_the_shards_did_not_run_is_refused() {
    let s = Shards::new();
    // Other bytes, the same mutants (a comment): the shards ran these mutants.
    s.repo
        .write("reworded.toml", format!("{SPEC}\n# a comment\n"));
    let out = s.merge_in(s.repo.path(), &["--spec", "reworded.toml"]);
    assert!(
        [0, 1].contains(&out.exit()) && s.out().join("mutants.json").exists(),
        "a comment made the shards another spec's: {out}"
    );
    std::fs::remove_dir_all(s.out()).unwrap();
    // One mutant changed: refused, naming it.
    s.repo.write("other.toml", SPEC.replace("echo 2", "echo 3"));
    let out = s.merge_in(s.repo.path(), &["--spec", "other.toml"]);
    s.refused(
        &out,
        &[
            "s1/mutants.json",
            "field `spec_sha256`",
            "its mutant `one` is not the one the shard ran",
            "another spec",
        ],
    );
}

fn ssh_keygen(home: &Path) -> Command {
    let mut cmd = Command::new("ssh-keygen");
    cmd.env("HOME", home).env_remove("SSH_AUTH_SOCK");
    cmd
}

/// A new key pair at `home/name`, and its allowed_signers line for `principal`.
fn key_pair(home: &Path, name: &str, principal: &str) -> (PathBuf, String) {
    let key = home.join(name);
    assert!(ssh_keygen(home)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", principal, "-f"])
        .arg(&key)
        .status()
        .unwrap()
        .success());
    let public = fs::read_to_string(home.join(format!("{name}.pub"))).unwrap();
    let mut fields = public.split_whitespace();
    let line = format!(
        "{principal} {} {}\n",
        fields.next().unwrap(),
        fields.next().unwrap()
    );
    (key, line)
}

#[test]
fn signed_shards_are_taken_only_while_their_report_is_the_one_signed() {
    let keys = tempfile::tempdir().unwrap();
    let (key, line) = key_pair(keys.path(), "ci", "ci@example.invalid");
    let allowed = keys.path().join("allowed_signers");
    fs::write(&allowed, &line).unwrap();
    let allowed = allowed.to_str().unwrap().to_string();
    let signed = |out: &Path| {
        vec![
            "--attest".to_string(),
            out.join(STATEMENT).display().to_string(),
            "--sign-key".to_string(),
            key.display().to_string(),
        ]
    };
    let s = Shards::run(&signed);
    let with_signers = ["--spec", "mutants.toml", "--allowed-signers", &allowed];
    let merged = s.merge_in(s.repo.path(), &with_signers);
    merged.assert_exit(1);
    assert_eq!(report_in(&s.out())["tally"]["survived"], 1);
    for k in ["s1", "s2"] {
        assert!(
            merged
                .stderr
                .contains(&format!("{k} signed by ci@example.invalid")),
            "{merged}"
        );
    }

    // An edit every other check lets through (a duration), made after signing: refused.
    let _ = fs::remove_dir_all(s.out());
    s.edit(2, |v| row(v, "stays")["run"]["duration_secs"] = json!(0.5));
    s.merge_with_spec().assert_exit(1);
    let _ = fs::remove_dir_all(s.out());
    s.refused(
        &s.merge_in(s.repo.path(), &with_signers),
        &["s2/mutants.json", "changed after it was signed"],
    );

    // A shard with no signature beside its statement, or none at all: unsigned, refused.
    let s = Shards::run(&signed);
    fs::remove_file(s.dir(2).join(format!("{STATEMENT}.sig"))).unwrap();
    s.refused(
        &s.merge_in(s.repo.path(), &with_signers),
        &["s2", "unsigned shard"],
    );
    let s = Shards::new();
    s.refused(
        &s.merge_in(s.repo.path(), &with_signers),
        &["s1", "unsigned shard", STATEMENT],
    );

    // Signed by a key the allowed_signers file does not list: refused.
    let (stranger, _) = key_pair(keys.path(), "stranger", "x@example.invalid");
    let s = Shards::run(&|out: &Path| {
        vec![
            "--attest".to_string(),
            out.join(STATEMENT).display().to_string(),
            "--sign-key".to_string(),
            stranger.display().to_string(),
        ]
    });
    s.refused(
        &s.merge_in(s.repo.path(), &with_signers),
        &["s1/mutants.intoto.json.sig", "bad signature"],
    );
}
