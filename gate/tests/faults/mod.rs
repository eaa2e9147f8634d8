//! `gate` under faults and hostile input: a rerun of another candidate, names that try to forge
//! summary lines, two runs on one `--out`, bad gate.toml values, a closed stdout, output folders
//! that cannot be written, interrupts. Every attack aims only at files in the test's own temp dir.
//!
//! Forged lines are in [`forged`], bad gate.toml and `gate check` input in [`bad_input`], closed
//! and unwritable outputs in [`outputs`], signals in [`interrupts`].

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{stderr, stdout, Fixture};

mod bad_input;
mod forged;
mod interrupts;
mod outputs;

const TWO_SUITES: &str =
    "[[suite]]\nname = \"a\"\nrun = \"true\"\n\n[[suite]]\nname = \"b\"\nrun = \"true\"\n";

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(path)).unwrap()
}

/// Whether the process runs as root (which ignores permission bits).
fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

/// The gate binary as a plain std command (for background runs and raw pipes), hermetic.
fn gate_std(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    cmd.current_dir(dir);
    cmd
}

/// Waits for `child` with an outer limit; kills it (by its own pid) if the limit passes.
fn wait_for(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("child {} did not finish within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- 1. one summary describes one tree ------------------------------------------------------

#[test]
fn only_refuses_a_candidate_whose_manifest_patch_or_tree_differs_and_leaves_the_summary_byte_for_byte(
) {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let out_dir = f.out.path().join("o");
    f.run(&config, &out_dir).assert().code(0);
    let summary = out_dir.join("gate-summary.txt");
    let report = out_dir.join("gate.json");
    let (text_before, json_before) = (read(&summary), read(&report));

    // The same patch, but another manifest (a comment line makes it other bytes).
    let manifest = fs::read_to_string(f.manifest()).unwrap();
    fs::write(f.manifest(), format!("# reviewed again\n{manifest}")).unwrap();
    let out = f
        .run(&config, &out_dir)
        .args(["--only", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("manifest sha256 differs from the summary's"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_eq!(read(&summary), text_before, "the summary was touched");
    assert_eq!(read(&report), json_before, "gate.json was touched");

    // Another patch that still applies: one more staged change, packed again.
    f.repo.write("src/lib.txt", "one\ntwo\nthree\nfour\n");
    f.repo.git(["add", "src/lib.txt"]);
    f.pack();
    let out = f
        .run(&config, &out_dir)
        .args(["--only", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("patch sha256 differs from the summary's"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&summary), text_before);
    assert_eq!(read(&report), json_before);

    // The same candidate, but the head moved: the summary's drift answer is for its own head.
    let fresh_head = f.out.path().join("head");
    f.run(&config, &fresh_head).assert().code(0);
    let before_head = read(&fresh_head.join("gate.json"));
    f.repo.write("unrelated.txt", "u\n");
    f.repo.git(["add", "unrelated.txt"]);
    f.repo
        .git(["commit", "-q", "-m", "unrelated", "--", "unrelated.txt"]);
    let out = f
        .run(&config, &fresh_head)
        .args(["--only", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("head commit differs from the summary's"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&fresh_head.join("gate.json")), before_head);

    // A summary of another tree (as one written for another candidate would be).
    let mut other: serde_json::Value = json(&report);
    let fresh = f.out.path().join("fresh");
    f.run(&config, &fresh).assert().code(0);
    let mut now = json(&fresh.join("gate.json"));
    now["candidate"]["tree"] = serde_json::json!("0".repeat(40));
    fs::write(
        fresh.join("gate.json"),
        serde_json::to_vec_pretty(&now).unwrap(),
    )
    .unwrap();
    let edited = read(&fresh.join("gate.json"));
    let out = f
        .run(&config, &fresh)
        .args(["--only", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("tree id "), "{}", stderr(&out));
    assert!(stderr(&out).contains("differs from the summary's"));
    assert_eq!(read(&fresh.join("gate.json")), edited);

    // --fresh starts a new summary for the changed candidate instead.
    other["reruns"] = serde_json::json!([]);
    let out = f
        .run(&config, &out_dir)
        .args(["--only", "a", "--fresh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "b never ran: {}", stdout(&out));
    let replaced = json(&report);
    assert_eq!(replaced["reruns"], serde_json::json!([]));
    assert_ne!(
        replaced["candidate"]["patch_sha256"],
        other["candidate"]["patch_sha256"]
    );
    assert!(
        stdout(&out).contains("suite b never ran"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_failed_rerun_flips_the_headline_and_only_a_pass_of_that_suite_on_the_same_tree_restores_it() {
    let f = Fixture::new();
    f.pack();
    let flag = f.out.path().join("green");
    fs::write(&flag, "").unwrap();
    let config = f.config(&format!(
        "[[suite]]\nname = \"flaky\"\nrun = \"test -e '{}'\"\n\n[[suite]]\nname = \"steady\"\nrun = \"true\"\n",
        flag.display()
    ));
    let out_dir = f.out.path().join("o");
    let headline = || {
        let text = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
        let first = text.lines().next().unwrap().to_string();
        let last = text.lines().last().unwrap().to_string();
        (
            first,
            last,
            json(&out_dir.join("gate.json"))["verdict"].clone(),
        )
    };
    f.run(&config, &out_dir).assert().code(0);
    assert!(headline().0.starts_with("gate PASS"));

    fs::remove_file(&flag).unwrap();
    f.run(&config, &out_dir)
        .args(["--only", "flaky"])
        .assert()
        .code(1);
    let (first, last, verdict) = headline();
    assert!(first.starts_with("gate FAIL"), "{first}");
    assert!(last.starts_with("verdict   FAIL"), "{last}");
    assert_eq!(verdict, "FAIL");

    // Another suite passing again does not clear flaky's latest failure.
    f.run(&config, &out_dir)
        .args(["--only", "steady"])
        .assert()
        .code(1);
    assert!(headline().0.starts_with("gate FAIL"));

    fs::write(&flag, "").unwrap();
    f.run(&config, &out_dir)
        .args(["--only", "flaky"])
        .assert()
        .code(0);
    let (first, last, verdict) = headline();
    assert!(first.starts_with("gate PASS"), "{first}");
    assert!(last.starts_with("verdict   PASS"), "{last}");
    assert_eq!(verdict, "PASS");
    assert_eq!(
        json(&out_dir.join("gate.json"))["reruns"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_summary_with_a_suite_never_run_is_not_a_pass() {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let out_dir = f.out.path().join("o");
    // --only with no summary yet: b never ran, so this is no PASS.
    let out = f
        .run(&config, &out_dir)
        .args(["--only", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("suite b never ran"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        json(&out_dir.join("gate.json"))["planned"],
        serde_json::json!(["a", "b"])
    );
    // Running b on the same tree completes it.
    f.run(&config, &out_dir)
        .args(["--only", "b"])
        .assert()
        .code(0);
    assert_eq!(json(&out_dir.join("gate.json"))["verdict"], "PASS");
}

// ---- 3. one run per --out --------------------------------------------------------------------

#[test]
fn a_second_run_on_the_same_out_is_refused_while_the_first_holds_it() {
    let f = Fixture::new();
    f.pack();
    let started = f.out.path().join("started");
    let config = f.config(&format!(
        "[[suite]]\nname = \"slow\"\nrun = \"touch '{}'; sleep 3\"\n",
        started.display()
    ));
    let out_dir = f.out.path().join("o");
    let mut first = gate_std(f.repo.path())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(
            Instant::now() < deadline,
            "the first run never started its suite"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!("pid {}", first.id())),
        "{}",
        stderr(&second)
    );
    assert!(stderr(&second).contains("in use by another run"));
    assert!(wait_for(&mut first, Duration::from_secs(60)).success());
    // The first run's report is whole, and the folder is free again.
    assert_eq!(json(&out_dir.join("gate.json"))["verdict"], "PASS");
    f.run(&config, &out_dir).assert().code(0);
}
