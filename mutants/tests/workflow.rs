//! The larger workflows: interrupting a run, sharding and merging, comparison suites with the
//! failed tests' names, and mutants on a candidate built the way `gate apply` builds it.

use std::process::{Command, Stdio};

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::Value;
use testkit::Output;

#[test]
fn sigint_kills_the_running_suite_restores_removes_worktrees_and_keeps_the_partial_report() {
    interrupted_by(Signal::SIGINT);
}

#[test]
fn sigterm_kills_the_running_suite_restores_removes_worktrees_and_keeps_the_partial_report() {
    interrupted_by(Signal::SIGTERM);
}

/// A run sent `signal` while its second mutant's suite sleeps: exit 130, the sleeper gone, the
/// first verdict kept, the files restored and the worktrees removed.
fn interrupted_by(signal: Signal) {
    let suite = "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"60s\"\n\n";
    let spec = format!(
        "{suite}{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "sleeps",
            "spin() { :; }",
            r#"spin() { echo $$ > "$PIDS/sleeper"; sleep 30; }"#,
            ""
        ),
        mutant(
            "never reached",
            "greet() {",
            "greet () {",
            "expect = \"survive\""
        )
    );
    let fx = Fixture::new(&spec);
    let status = fx.repo.status();
    let out = fx.out();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    let child = cmd
        .current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .args(["run", "mutants.toml", "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeper = fx.first_pid("sleeper", "the sleeper");
    let (exit, output) = signal_and_wait(child, signal, &format!("after {signal}"));
    assert_eq!(exit.code(), Some(130), "{signal}: {}", output);
    assert!(
        !testkit::alive(sleeper),
        "the interrupted suite is still running"
    );
    let report = report_in(&out);
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["exit_code"], 130);
    assert_eq!(
        verdicts(&report),
        [("plus to minus".into(), "killed".into())]
    );
    assert!(std::fs::read_to_string(out.join("mutants.txt"))
        .unwrap()
        .contains(
            "INTERRUPTED: cut short after 1 of 3 mutants judged; not judged: sleeps, never reached"
        ));
    assert!(
        fx.repo.extra_worktrees().is_empty(),
        "worktrees left behind"
    );
    assert_eq!(fx.repo.status(), status);
    assert_eq!(fx.repo.read("lib.sh"), LIB.as_bytes());
}

/// The parts of a row that must not depend on how the run was split.
fn essence(report: &Value) -> Vec<Value> {
    report["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            serde_json::json!({
                "index": r["index"], "name": r["name"], "verdict": r["verdict"],
                "matches": r["matches"], "span": r["span"], "diff": r["diff"],
                "counts": r["run"]["counts"], "failed_tests": r["run"]["failed_tests"],
                "exit_code": r["run"]["exit_code"], "log": r["run"]["log"],
            })
        })
        .collect()
}

#[test]
fn shards_merged_equal_a_single_run() {
    let spec = format!(
        "{SUITE}{}{}{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greet bye", "echo \"hello\"", "echo \"bye\"", ""),
        mutant("control", "greet() {", "greet () {", "expect = \"survive\""),
        mutant("absent", "subtract()", "x", ""),
        mutant("plus one", "$(( $1", "$(( 1 + $1", "")
    );
    let fx = Fixture::new(&spec);
    let base = fx.out.path();
    let run = |dir: &str, extra: &[&str]| {
        let out = base.join(dir);
        let mut args = vec!["run", "mutants.toml", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        fx.cmd().args(&args).output().map(Output::from).unwrap()
    };
    let single = run("single", &["--jobs", "2"]);
    single.assert_exit(1);
    assert_eq!(run("s1", &["--shard", "1/2"]).exit(), 0);
    let s2 = run("s2", &["--shard", "2/2"]);
    s2.assert_exit(1);
    let s1_rows = verdicts(&report_in(&base.join("s1")));
    assert_eq!(s1_rows.len(), 3);
    assert_eq!(verdicts(&report_in(&base.join("s2"))).len(), 2);

    let merged = base.join("merged");
    let m = fx
        .cmd()
        .args(["merge"])
        .arg(base.join("s2"))
        .arg(base.join("s1"))
        .arg("--out")
        .arg(&merged)
        .output()
        .map(Output::from)
        .unwrap();
    m.assert_exit(1);
    let merged_report = report_in(&merged);
    let single_report = report_in(&base.join("single"));
    assert_eq!(essence(&merged_report), essence(&single_report));
    assert_eq!(merged_report["tally"], single_report["tally"]);
    assert_eq!(merged_report["planned"], 5);
    // The logs came along, and the table's rows are the single run's rows.
    assert!(merged.join("logs/005-plus-one.log").exists());
    let rows = |p: &std::path::Path| -> Vec<String> {
        let t = std::fs::read_to_string(p.join("mutants.txt")).unwrap();
        t.lines()
            .skip_while(|l| !l.starts_with("Mutant"))
            .map(|l| {
                l.split("  ")
                    .filter(|c| !c.is_empty())
                    .take(4)
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    };
    assert_eq!(rows(&merged), rows(&base.join("single")));

    // A missing shard is refused, not merged into a report that looks complete.
    fx.cmd()
        .args(["merge"])
        .arg(base.join("s1"))
        .arg("--out")
        .arg(base.join("partial"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("shard 2/2 is missing"));
}

#[test]
fn comparison_suites_show_their_own_verdict_and_failed_tests_become_killed_by() {
    let spec = "[suites.unit]\nrun = \"sh cargo-like.sh\"\n\n[suites.pre-existing]\nrun = \"sh old-test.sh\"\n\n\
        [[mutant]]\nname = \"plus to minus\"\nsite = \"add\"\nfile = \"lib.sh\"\nanchor = \"$1 + $2\"\nreplace = \"$1 - $2\"\nsuite = \"unit\"\nalso = [\"pre-existing\"]\n";
    let fx = Fixture::new(spec);
    // The new suite names its failing test the way cargo test does; the old one never looks
    // at `add`.
    fx.repo.write(
        "cargo-like.sh",
        ". ./lib.sh\nif [ \"$(add 2 3)\" = 5 ]; then echo 'test add_works ... ok'; echo 'test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured'; else echo 'test add_works ... FAILED'; echo 'test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured'; exit 101; fi\n",
    );
    fx.repo
        .write("old-test.sh", ". ./lib.sh\necho '7 passed, 0 failed'\n");
    fx.repo.commit_all("suites");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    let r = row(&report, "plus to minus");
    assert_eq!(r["verdict"], "killed");
    assert_eq!(r["run"]["failed_tests"], serde_json::json!(["add_works"]));
    assert_eq!(r["also"][0]["suite"], "pre-existing");
    assert_eq!(r["also"][0]["verdict"], "SURVIVED");
    let txt = out.stdout.as_str();
    assert!(txt.contains("pre-existing (comparison)"), "{txt}");
    assert!(txt.contains("SURVIVED (7 pass -> 7 passed)"), "{txt}");
    assert!(txt.contains("3 pass -> 2 passed, 1 failed"), "{txt}");
    assert!(txt.contains("add_works"), "{txt}");
    let stryker: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stryker["files"]["lib.sh"]["mutants"][0]["killedBy"],
        serde_json::json!(["add_works"])
    );
}

#[test]
fn a_candidate_run_checks_the_manifest_before_and_after_and_records_the_tree() {
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let fx = Fixture::new(spec);
    let (dir, tree) = candidate(&fx, true);
    let gate_toml = dir.path().join("gate.toml");
    let out = fx.run(&["--candidate", gate_toml.to_str().unwrap()]);
    out.assert_exit(0);
    let stderr = out.stderr.as_str();
    assert!(
        stderr.contains("manifest before the first mutant: 2/2 OK"),
        "{stderr}"
    );
    assert!(
        stderr.contains("manifest after the last mutant: 2/2 OK"),
        "{stderr}"
    );
    let report = fx.report();
    assert_eq!(report["candidate"]["tree"], tree.as_str());
    assert_eq!(report["candidate"]["manifest_after"], "2/2 OK");
    assert_eq!(verdicts(&report)[0].1, "killed");
    assert!(fx.repo.extra_worktrees().is_empty());
    assert_eq!(fx.repo.status(), "");

    // A candidate whose manifest does not hold is a failed precondition: no mutant runs.
    let fx = Fixture::new(spec);
    let (dir, _) = candidate(&fx, false);
    let out = fx.run(&[
        "--candidate",
        dir.path().join("gate.toml").to_str().unwrap(),
    ]);
    out.assert_exit(4);
    assert!(out.stderr.contains("1/2 OK, 1 FAILED"));
    assert!(fx.repo.extra_worktrees().is_empty());
}

#[test]
fn a_candidate_runs_its_mutants_under_gate_tomls_env_with_the_suites_own_winning() {
    // The suite passes only when gate.toml's [env] reached it, and its own env beat it.
    let spec = "[suites.double]\nrun = \"[ \\\"$FROM_GATE\\\" = yes ] && [ \\\"$BOTH\\\" = suite ] && sh double-test.sh\"\nenv = { BOTH = \"suite\" }\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let fx = Fixture::new(spec);
    let (dir, _) = candidate(&fx, true);
    let gate_toml = dir.path().join("gate.toml");
    let mut text_toml = std::fs::read_to_string(&gate_toml).unwrap();
    text_toml.push_str("\n[env]\nFROM_GATE = \"yes\"\nBOTH = \"gate\"\n");
    std::fs::write(&gate_toml, text_toml).unwrap();
    let out = fx.run(&["--candidate", gate_toml.to_str().unwrap()]);
    // A red baseline (exit 4) would mean the env did not arrive.
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report())[0].1, "killed");
}

#[test]
fn a_candidate_brings_gate_tomls_worktree_unless_the_spec_has_its_own_and_says_which() {
    // The suite passes only when gate.toml's [worktree] setup ran in its checkout.
    let spec = "[suites.double]\nrun = \"[ -f \\\"$PIDS/gate-setup\\\" ] && sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let fx = Fixture::new(spec);
    let (dir, _) = candidate(&fx, true);
    let gate_toml = dir.path().join("gate.toml");
    let mut text_toml = std::fs::read_to_string(&gate_toml).unwrap();
    text_toml.push_str("\n[worktree]\nsetup = \"echo \\\"$PWD\\\" >> \\\"$PIDS/gate-setup\\\"\"\n");
    std::fs::write(&gate_toml, text_toml).unwrap();
    let out = fx.run(&["--candidate", gate_toml.to_str().unwrap()]);
    // A red baseline (exit 4) would mean gate.toml's setup did not run.
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report())[0].1, "killed");
    assert!(
        out.stderr.contains(&format!(
            "mutants: [worktree] from {} (the spec has none)",
            gate_toml.display()
        )),
        "{}",
        out.stderr
    );

    // The spec's own [worktree] wins whole, and the output says so.
    let own = format!("[worktree]\nsetup = \"true\"\n\n{spec}");
    let fx = Fixture::new(&own);
    let (dir, _) = candidate(&fx, true);
    let gate_toml = dir.path().join("gate.toml");
    let mut text_toml = std::fs::read_to_string(&gate_toml).unwrap();
    text_toml.push_str("\n[worktree]\nsetup = \"echo \\\"$PWD\\\" >> \\\"$PIDS/gate-setup\\\"\"\n");
    std::fs::write(&gate_toml, text_toml).unwrap();
    let out = fx.run(&["--candidate", gate_toml.to_str().unwrap()]);
    out.assert_exit(4);
    assert!(
        out.stderr.contains(&format!(
            "mutants: [worktree] from mutants.toml; {}'s is not used (the spec's own wins)",
            gate_toml.display()
        )),
        "{}",
        out.stderr
    );
    assert!(!fx.pids.path().join("gate-setup").exists());
}

#[test]
fn a_candidates_base_patch_and_manifest_on_the_command_line_win_over_gate_tomls() {
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let fx = Fixture::new(spec);
    let base = fx.repo.head();
    let (dir, tree) = candidate(&fx, true);
    // A gate.toml in a folder of its own that names nothing real.
    let conf = tempfile::tempdir().unwrap();
    let gate_toml = conf.path().join("gate.toml");
    std::fs::write(
        &gate_toml,
        "base = \"no-such-rev\"\npatch = \"missing.patch\"\nmanifest = \"missing.sha256\"\n",
    )
    .unwrap();
    let patch = dir.path().join("build.patch");
    let manifest = dir.path().join("candidate-manifest.sha256");
    let out = fx.run(&[
        "--candidate",
        gate_toml.to_str().unwrap(),
        "--base",
        &base,
        "--patch",
        patch.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
    ]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(report["candidate"]["tree"], tree.as_str());
    assert_eq!(verdicts(&report)[0].1, "killed");
    // Without --candidate they mean nothing: a usage error.
    let out = fx.run(&["--patch", patch.to_str().unwrap()]);
    out.assert_exit(2);
}
