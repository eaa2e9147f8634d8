//! `mutants run` on real git repositories with real suites (shell scripts).

use std::time::{Duration, Instant};

use crate::common::*;
use predicates::prelude::*;

#[test]
fn a_mutant_that_loops_forever_is_killed_as_a_hang_and_leaves_nothing_running() {
    let spec = format!(
        "{SUITE}{}",
        mutant(
            "spin forever",
            "spin() { :; }",
            "spin() { while :; do :; done; }",
            ""
        )
    );
    let fx = Fixture::new(&spec);
    let started = Instant::now();
    let out = fx.run(&[]);
    // A hang is a kill: the run holds.
    out.assert_exit(0);
    assert!(started.elapsed() < Duration::from_secs(30));
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [("spin forever".into(), "killed (hang)".into())]
    );
    let run = &row(&report, "spin forever")["run"];
    assert_eq!(run["status"], "hang");
    // Every suite process (baseline and the looping one) is gone.
    let pids = fx.pids("suite");
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!testkit::alive(pid), "suite {pid} still running");
    }
    // Stryker's status for a hang is Timeout.
    let stryker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stryker["files"]["lib.sh"]["mutants"][0]["status"],
        "Timeout"
    );
}

#[test]
fn a_test_that_spawns_a_child_in_a_new_session_has_it_killed_and_counted() {
    let spec = format!(
        "{SUITE}{}",
        mutant(
            "spawn escapes",
            "spawn() { :; }",
            r#"spawn() { setsid sh -c 'echo $$ > "$PIDS/escaped"; exec sleep 60' & sleep 0.3; return 1; }"#,
            ""
        )
    );
    let fx = Fixture::new(&spec);
    let started = Instant::now();
    let out = fx.run(&[]);
    out.assert_exit(0);
    assert!(started.elapsed() < Duration::from_secs(20));
    let report = fx.report();
    let run = &row(&report, "spawn escapes")["run"];
    assert_eq!(row(&report, "spawn escapes")["verdict"], "killed");
    assert!(run["strays_killed"].as_u64().unwrap() >= 1, "{run}");
    let escaped = fx.pids("escaped");
    assert_eq!(escaped.len(), 1);
    assert!(
        !testkit::alive(escaped[0]),
        "the setsid child survived the run"
    );
}

#[test]
fn a_suite_leaving_a_daemon_holding_stdout_neither_hangs_the_run_nor_survives_it() {
    let spec = format!(
        "{SUITE}{}",
        mutant(
            "daemon lingers",
            "daemon() { :; }",
            r#"daemon() { (sleep 60 & echo $! > "$PIDS/daemon"); return 1; }"#,
            ""
        )
    );
    let fx = Fixture::new(&spec);
    let started = Instant::now();
    let out = fx.run(&[]);
    out.assert_exit(0);
    // The daemon keeps the log open for 60 s; the run must not wait for it.
    assert!(started.elapsed() < Duration::from_secs(20));
    let report = fx.report();
    let r = row(&report, "daemon lingers");
    assert_eq!(r["verdict"], "killed");
    assert!(r["run"]["strays_killed"].as_u64().unwrap() >= 1);
    let daemon = fx.pids("daemon");
    assert_eq!(daemon.len(), 1);
    assert!(!testkit::alive(daemon[0]), "the daemon survived the run");
}

#[test]
fn controls_must_survive_and_a_noticed_control_is_a_finding() {
    let held = mutant(
        "space before parens",
        "greet() {",
        "greet () {",
        "expect = \"survive\"",
    );
    let killed_control = mutant(
        "plus to times",
        "$1 + $2",
        "$1 * $2",
        "expect = \"survive\"",
    );
    let multi_line = mutant(
        "greet says bye",
        "greet() {\n  echo \"hello\"",
        "greet() {\n  echo \"bye\"",
        "",
    );

    let fx = Fixture::new(&format!("{SUITE}{held}{multi_line}"));
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("space before parens".into(), "control held".into()),
            ("greet says bye".into(), "killed".into())
        ]
    );
    let killed = &row(&report, "greet says bye")["run"];
    assert_eq!(killed["failed_tests"], serde_json::json!([]));
    assert_eq!(killed["counts"]["failed"], 1);

    let fx = Fixture::new(&format!("{SUITE}{held}{killed_control}"));
    let out = fx.run(&[]);
    out.assert_exit(1);
    assert_eq!(
        verdicts(&fx.report())[1],
        ("plus to times".into(), "CONTROL KILLED".into())
    );
    assert!(out.stdout.contains("CONTROL KILLED"));
}

#[test]
fn an_anchor_found_zero_or_two_times_is_skipped_and_the_file_untouched() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("absent", "subtract()", "x", ""),
        mutant("twice", "() { :; }", "() { false; }", "")
    );
    let fx = Fixture::new(&spec);
    let out = fx.run(&[]);
    out.assert_exit(1);
    assert_eq!(
        verdicts(&fx.report()),
        [
            ("absent".into(), "skipped (0 matches)".into()),
            ("twice".into(), "skipped (3 matches)".into())
        ]
    );
    assert_eq!(fx.repo.read("lib.sh"), crate::common::LIB.as_bytes());
    assert_eq!(fx.repo.status(), "");
}

#[test]
fn a_red_baseline_stops_the_run_with_exit_4_and_no_verdicts() {
    let spec = format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("lib.sh", LIB.replace("$1 + $2", "$1 + $2 + 1"));
    fx.repo.commit_all("break add");
    let out = fx.run(&[]);
    out.assert_exit(4);
    let report = fx.report();
    assert_eq!(report["baseline_failed"], true);
    assert_eq!(report["mutants"], serde_json::json!([]));
    assert!(out.stdout.contains("BASELINE FAILED"));
    assert!(!out.stdout.contains("killed"));
    // The log's last lines are on screen, not only its path: the suite's own words.
    let err = out.stderr.as_str();
    assert!(err.contains("  | FAIL: test_add"), "{err}");

    // A hung baseline is red too, never a pass.
    let hung = "[suites.unit]\nrun = \"sleep 30\"\ntimeout = \"1s\"\n\n";
    let fx = Fixture::new(&format!("{hung}{}", mutant("m", "$1 + $2", "$1 - $2", "")));
    let out = fx.run(&[]);
    out.assert_exit(4);
    assert_eq!(fx.report()["baseline"][0]["status"], "hang");
}

#[test]
fn a_suite_that_cannot_start_is_an_error_never_a_kill() {
    let spec = "[suites.unit]\nrun = \"./run-tests\"\n\n[[mutant]]\nname = \"broken shebang\"\nfile = \"run-tests\"\nanchor = \"#!/bin/sh\"\nreplace = \"#!/nonexistent/sh\"\nsuite = \"unit\"\n";
    let fx = Fixture::new(spec);
    fx.repo
        .write("run-tests", "#!/bin/sh\necho '1 passed, 0 failed'\n");
    fx.repo.chmod_x("run-tests");
    fx.repo.commit_all("runner");
    let out = fx.run(&[]);
    out.assert_exit(1);
    let report = fx.report();
    let r = row(&report, "broken shebang");
    assert_eq!(r["verdict"], "error");
    assert_eq!(r["run"]["exit_code"], 127);
    let stryker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stryker["files"]["run-tests"]["mutants"][0]["status"],
        "RuntimeError"
    );
}

#[test]
fn a_suite_killed_from_outside_is_an_error_never_a_kill() {
    // With the mutant in place the suite's own shell is sent SIGKILL, as the OOM killer or
    // another process would send it: nothing a failing test does. A failing test beside it
    // is the kill it should be.
    let spec = "[suites.unit]\nrun = \"if grep -q outside mode; then kill -KILL $$; fi; grep -q fine mode && echo '1 passed, 0 failed'\"\n\n[[mutant]]\nname = \"killed from outside\"\nfile = \"mode\"\nanchor = \"fine\"\nreplace = \"outside\"\nsuite = \"unit\"\n\n[[mutant]]\nname = \"a failing test\"\nfile = \"mode\"\nanchor = \"fine\"\nreplace = \"broken\"\nsuite = \"unit\"\n";
    let fx = Fixture::new(spec);
    fx.repo.write("mode", "fine\n");
    fx.repo.commit_all("mode");
    let out = fx.run(&[]);
    out.assert_exit(1);
    let report = fx.report();
    let r = row(&report, "killed from outside");
    assert_eq!(r["verdict"], "error", "{r}");
    assert_eq!(r["run"]["signal"], "SIGKILL", "{r}");
    assert_eq!(row(&report, "a failing test")["verdict"], "killed");
}

#[test]
fn a_non_utf8_file_is_mutated_as_bytes_and_restored() {
    let spec = "[suites.unit]\nrun = \"grep -q value=1 data.bin && echo '1 passed, 0 failed'\"\n\n[[mutant]]\nname = \"value\"\nfile = \"data.bin\"\nanchor = \"value=1\"\nreplace = \"value=2\"\nsuite = \"unit\"\n";
    let fx = Fixture::new(spec);
    let data: &[u8] = b"\xff\xfe\x00latin-1 caf\xe9\nvalue=1\n\x80\x81";
    fx.repo.write("data.bin", data);
    fx.repo.commit_all("data");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    let r = row(&report, "value");
    assert_eq!(r["verdict"], "killed");
    assert_eq!(r["span"]["start_line"], 2);
    assert_eq!(fx.repo.read("data.bin"), data);
}

#[test]
fn uncommitted_changes_and_untracked_files_are_carried_and_dir_is_left_alone() {
    // The anchor exists only in the uncommitted edit, and the suite is an untracked file.
    let spec = "[suites.unit]\nrun = \"sh new-test.sh\"\n\n[[mutant]]\nname = \"double\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"unit\"\n";
    let fx = Fixture::new(spec);
    fx.repo.write(
        "lib.sh",
        format!("{LIB}double() {{ echo $(( $1 * 2 )); }}\n"),
    );
    fx.repo.write(
        "new-test.sh",
        ". ./lib.sh\n[ \"$(double 4)\" = 8 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
    );
    let status = fx.repo.status();
    let out = fx.run(&["--keep"]);
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report())[0].1, "killed");
    assert_eq!(fx.repo.status(), status);
    // --keep leaves the worktree, holding the carried state, restored.
    let kept = fx.repo.extra_worktrees();
    assert_eq!(kept.len(), 1);
    let lib = std::fs::read_to_string(kept[0].join("lib.sh")).unwrap();
    assert!(lib.contains("$(( $1 * 2 ))"));
    fx.repo.remove_checkout(&kept[0]);
}

#[test]
fn outputs_hold_the_table_the_stryker_report_and_an_escaped_html_page() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greet <b>", "echo \"hello\"", "echo \"<b>hello</b>\"", "")
    );
    let fx = Fixture::new(&spec);
    let out = fx.run(&[]);
    out.assert_exit(0);
    let txt = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    for needle in [
        "Mutant",
        "Site",
        "What it undoes",
        "Verdict",
        "5 pass -> 4 passed, 1 failed",
        "2 mutants: 2 killed",
    ] {
        assert!(txt.contains(needle), "{needle} not in\n{txt}");
    }
    let stryker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stryker["schemaVersion"], "2");
    let file = &stryker["files"]["lib.sh"];
    assert_eq!(file["source"], LIB);
    let m = &file["mutants"][0];
    assert_eq!(m["mutatorName"], "lib");
    assert_eq!(m["description"], "the claim of plus to minus");
    assert_eq!(m["status"], "Killed");
    assert_eq!(
        m["location"]["start"],
        serde_json::json!({"line": 1, "column": 18})
    );
    let html = std::fs::read_to_string(fx.out().join("mutants.html")).unwrap();
    assert!(html.contains("greet &lt;b&gt;"));
    assert!(!html.contains("<b>hello"));
    assert!(html.contains("<span class=\"add\">+  echo &quot;&lt;b&gt;hello"));
    for log in [
        "logs/001-plus-to-minus.log",
        "logs/002-greet-b.log",
        "logs/baseline.unit.log",
    ] {
        assert!(fx.out().join(log).exists(), "{log}");
    }
    // --json prints the same report on stdout.
    let json = fx.run(&["--json"]);
    let printed: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(verdicts(&printed), verdicts(&fx.report()));
}

#[test]
fn bad_specs_exit_2_naming_file_and_line_and_write_nothing() {
    let cases = [
        (
            format!("{SUITE}{}", mutant("a", "x", "y", "colour = 1")),
            "mutants.toml:13: unknown field `colour`",
        ),
        (
            format!(
                "{SUITE}{}",
                mutant("a", "x", "y", "").replace("suite = \"unit\"", "suite = \"nope\"")
            ),
            "mutants.toml:12: unknown suite \"nope\"",
        ),
        (
            format!(
                "{SUITE}{}{}",
                mutant("a", "x", "y", ""),
                mutant("a", "z", "y", "")
            ),
            "mutants.toml:15: two mutants are named \"a\"",
        ),
        (
            format!(
                "{SUITE}{}",
                mutant("a", "x", "y", "").replace("lib.sh", "../lib.sh")
            ),
            "mutants.toml:8: file \"../lib.sh\" is outside the tree",
        ),
        (
            format!(
                "{SUITE}{}",
                mutant("a", "x", "y", "").replace("lib.sh", "gone.sh")
            ),
            "mutants.toml:5: file \"gone.sh\" is not in the checkout",
        ),
        ("[suites.unit\n".to_string(), "mutants.toml:1:"),
        // The one duration rule caps a timeout's length, as gate.toml and --timeout do.
        (
            format!("{SUITE}{}", mutant("a", "x", "y", "")).replace(
                "timeout = \"3s\"",
                &format!("timeout = \"{}\"", "1s ".repeat(40)),
            ),
            "it is too long (at most 64 characters, and 12 digits to a number)",
        ),
        // The one path rule: a [worktree] path stays in the tree.
        (
            format!(
                "{SUITE}{}[worktree]\nlink = [\"../deps\"]\n",
                mutant("a", "x", "y", "")
            ),
            "mutants.toml:15: worktree.link \"../deps\" climbs out of the tree with `..`",
        ),
    ];
    for (spec, message) in cases {
        let fx = Fixture::new(&spec);
        let out = fx.run(&[]);
        out.assert_exit(2);
        let stderr = out.stderr.as_str();
        assert!(stderr.contains(message), "want {message:?} in {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            !fx.out().exists(),
            "a bad spec wrote {}",
            fx.out().display()
        );
        assert!(fx.repo.extra_worktrees().is_empty());
    }
    // So is an over-long --timeout, refused by the same rule in the same words.
    let fx = Fixture::new(&format!("{SUITE}{}", mutant("a", "$1 + $2", "$1 - $2", "")));
    fx.cmd()
        .args(["run", "mutants.toml", "--timeout"])
        .arg("1s ".repeat(40))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "it is too long (at most 64 characters, and 12 digits to a number)",
        ));
    // Unknown --only names are bad input too.
    let fx = Fixture::new(&format!("{SUITE}{}", mutant("a", "$1 + $2", "$1 - $2", "")));
    fx.run(&["--only", "nope"]);
    fx.cmd()
        .args(["run", "mutants.toml", "--only", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no mutant is named \"nope\""));
}

#[test]
fn check_exits_1_naming_each_anchor_not_found_exactly_once() {
    let spec = format!(
        "{SUITE}{}{}{}",
        mutant("good", "$1 + $2", "$1 - $2", ""),
        mutant("absent", "subtract()", "x", ""),
        mutant("thrice", "() { :; }", "x", "")
    );
    let fx = Fixture::new(&spec);
    fx.cmd()
        .args(["check", "mutants.toml"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "mutants.toml:14: anchor of \"absent\" occurs 0 times in lib.sh",
        ))
        .stderr(predicate::str::contains(
            "anchor of \"thrice\" occurs 3 times",
        ))
        .stderr(predicate::str::contains("\"good\"").not());
    let fx = Fixture::new(&format!(
        "{SUITE}{}",
        mutant("good", "$1 + $2", "$1 - $2", "")
    ));
    fx.cmd()
        .args(["check", "mutants.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("each found exactly once"));
}

#[test]
fn only_and_from_update_the_report_in_place_and_refuse_another_spec_or_tree() {
    let spec = format!(
        "{SUITE}{}{}{}",
        mutant("first", "$1 + $2", "$1 - $2", ""),
        mutant("second", "echo \"hello\"", "echo \"bye\"", ""),
        mutant("third", "greet() {", "greet () {", "expect = \"survive\"")
    );
    let fx = Fixture::new(&spec);
    // No report yet: --only starts one with just those rows.
    let out = fx.run(&["--only", "third", "--only", "first"]);
    out.assert_exit(0);
    let names: Vec<String> = verdicts(&fx.report()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["first", "third"]);
    assert!(fx.report()["mutants"][0]["rerun"].is_null());
    // --from on the same spec and tree: every other row kept, the rerun rows marked.
    let out = fx.run(&["--from", "second"]);
    out.assert_exit(0);
    let report = fx.report();
    let names: Vec<String> = verdicts(&report).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["first", "second", "third"]);
    assert!(
        report["mutants"][0]["rerun"].is_null(),
        "first was not rerun"
    );
    assert!(report["mutants"][1]["rerun"].is_string(), "second was");
    assert!(report["mutants"][2]["rerun"].is_string(), "third was");
    assert_eq!(report["tally"]["killed"], 2, "{}", report["tally"]);
    assert!(
        fx.out().join("logs/001-first.log").exists(),
        "a kept row lost its log"
    );
    let table = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(table.contains("second (rerun 20"), "{table}");
    assert!(!table.contains("first (rerun"), "{table}");

    // Another tree (DIR changed since): refused, the report untouched.
    let before = std::fs::read(fx.out().join("mutants.json")).unwrap();
    fx.repo
        .write("lib.sh", format!("{}# edited\n", crate::common::LIB));
    let out = fx.run(&["--only", "first"]);
    out.assert_exit(2);
    assert!(out.both().contains("the tree changed"), "{}", out);
    assert_eq!(
        std::fs::read(fx.out().join("mutants.json")).unwrap(),
        before
    );
    // Without --only the run starts afresh on the new tree.
    let out = fx.run(&[]);
    out.assert_exit(0);
    assert!(fx.report()["mutants"][0]["rerun"].is_null());
}

#[test]
fn only_accepts_a_spec_whose_kept_mutants_are_unchanged_committed_or_not() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("first", "$1 + $2", "$1 - $2", ""),
        mutant("second", "echo \"hello\"", "echo \"bye\"", ""),
    );
    let fx = Fixture::new(&spec);
    fx.run(&[]).assert_exit(0);
    let first_judged = fx.report()["mutants"][0]["rerun"].clone();
    let identity = |r: &serde_json::Value, i: usize| r["mutants"][i]["identity"].clone();
    let before = fx.report();

    // One mutant edited in the committed spec (and the edit committed): the spec's bytes, the
    // tree and the commit all changed, the code under test did not. `--only` that mutant
    // updates the report, the other row kept as it was.
    let edited = spec.replace("echo \"bye\"", "echo \"ciao\"");
    fx.repo.write("mutants.toml", &edited);
    fx.repo.commit_all("second says ciao");
    let out = fx.run(&["--only", "second"]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(
        report["mutants"][0]["rerun"], first_judged,
        "first was kept"
    );
    assert_eq!(identity(&report, 0), identity(&before, 0));
    assert_ne!(
        identity(&report, 1),
        identity(&before, 1),
        "second is another mutant now"
    );
    assert_eq!(report["mutants"][1]["replace"], "echo \"ciao\"");
    assert_ne!(report["spec_sha256"], before["spec_sha256"]);

    // A mutant edited but not rerun: its row would be a verdict on another mutant. Refused,
    // naming it, the report untouched.
    let kept = std::fs::read(fx.out().join("mutants.json")).unwrap();
    fx.repo
        .write("mutants.toml", edited.replace("$1 - $2", "$1 * $2"));
    let out = fx.run(&["--only", "second"]);
    out.assert_exit(2);
    assert!(
        out.both()
            .contains("mutant `first` changed since the report"),
        "{out}"
    );
    assert_eq!(std::fs::read(fx.out().join("mutants.json")).unwrap(), kept);
    // Rerun too, it is accepted.
    fx.run(&["--only", "second", "--only", "first"])
        .assert_exit(0);

    // Code changed besides the spec: still another tree.
    fx.repo
        .write("lib.sh", format!("{}# edited\n", crate::common::LIB));
    let out = fx.run(&["--only", "first"]);
    out.assert_exit(2);
    assert!(out.both().contains("the tree changed"), "{out}");
}

#[test]
fn an_earlier_runs_report_folder_in_dir_is_not_part_of_the_tree_under_test() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("first", "$1 + $2", "$1 - $2", ""),
        mutant("second", "echo \"hello\"", "echo \"bye\"", ""),
    );
    let fx = Fixture::new(&spec);
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["run", "mutants.toml", "--out", out];
        args.extend_from_slice(extra);
        testkit::Output::of(fx.cmd().args(&args))
    };
    // Two report folders inside DIR, untracked, as a user's default `mutants-out` is.
    run("one", &[]).assert_exit(0);
    run("two", &[]).assert_exit(0);
    let tree = |out: &str| report_in(&fx.repo.path().join(out))["tree"].clone();
    assert_eq!(
        tree("one"),
        tree("two"),
        "another run's report folder was carried"
    );
    // So each report is still updated in place with the other beside it.
    let out = run("one", &["--only", "second"]);
    out.assert_exit(0);
    assert!(
        report_in(&fx.repo.path().join("one"))["mutants"][1]["rerun"].is_string(),
        "{out}"
    );
}

#[test]
fn incremental_judges_only_mutants_that_changed_or_whose_code_changed() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("first", "$1 + $2", "$1 - $2", ""),
        mutant("second", "echo \"hello\"", "echo \"bye\"", ""),
    );
    let fx = Fixture::new(&spec);
    // No report yet: every mutant judged, and said so.
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(
        out.stderr
            .contains("nothing to reuse (no report in --out yet)"),
        "{out}"
    );
    let first = fx.report();
    assert!(first["mutants"][0]["reused"].is_null());

    // One mutant edited: only it is judged; the other keeps its verdict, saying from where.
    fx.repo.write(
        "mutants.toml",
        spec.replace("echo \"bye\"", "echo \"ciao\""),
    );
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(
        out.stderr
            .contains("1 of 2 mutants keep their verdicts (each mutant and what it reads unchanged); judging 1"),
        "{out}"
    );
    let report = fx.report();
    assert_eq!(report["mutants"][0]["reused"]["tree"], first["tree"]);
    // When it was really judged: its suite run's start, not the report's.
    assert_eq!(
        report["mutants"][0]["reused"]["at"],
        first["mutants"][0]["run"]["start"]
    );
    assert_eq!(report["mutants"][0]["run"], first["mutants"][0]["run"]);
    assert!(
        report["mutants"][1]["reused"].is_null(),
        "second was judged now"
    );
    assert_eq!(report["mutants"][1]["replace"], "echo \"ciao\"");
    assert_eq!(report["complete"], true);
    assert_eq!(report["tally"]["killed"], 2, "{}", report["tally"]);
    let table = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        table.contains("incremental: 1 judged now, 1 reused"),
        "{table}"
    );
    assert!(
        fx.out().join("logs/001-first.log").exists(),
        "a reused row lost its log"
    );

    // Nothing changed: nothing judged.
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(out.stderr.contains("2 of 2 mutants keep"), "{out}");

    // The code changed: every verdict is judged again.
    fx.repo
        .write("lib.sh", format!("{}# edited\n", crate::common::LIB));
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(out.stderr.contains("0 of 2 mutants keep"), "{out}");
    let report = fx.report();
    assert!(report["mutants"][0]["reused"].is_null());
    assert!(report["mutants"][1]["reused"].is_null());
}

#[test]
fn incremental_keeps_verdicts_while_a_suites_declared_inputs_and_the_mutated_file_are_unchanged() {
    let spec = format!(
        "[suites.unit]\nrun = \"sh test.sh\"\ninputs = [\"lib.sh\", \"test.sh\"]\n\n{}{}",
        mutant("first", "$1 + $2", "$1 - $2", ""),
        mutant("second", "echo \"hello\"", "echo \"bye\"", ""),
    );
    let fx = Fixture::new(&spec);
    fx.run(&["--incremental"]).assert_exit(0);
    // A file the suite does not read changed (the code tree did): every verdict kept.
    fx.repo.write("README.md", "notes\n");
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(out.stderr.contains("2 of 2 mutants keep"), "{out}");
    let report = fx.report();
    assert!(report["inputs"]["unit"].is_string(), "{report:#}");
    assert!(report["mutants"][0]["reused"].is_object());
    // A file it reads changed: every verdict judged again.
    fx.repo
        .write("test.sh", format!("{}# edited\n", crate::common::TEST));
    let out = fx.run(&["--incremental"]);
    out.assert_exit(0);
    assert!(out.stderr.contains("0 of 2 mutants keep"), "{out}");
}

#[test]
fn each_suite_run_gets_its_own_scratch_tmpdir_removed_afterwards() {
    // The suite records its TMPDIR and leaves a file and a read-only folder in it (which only
    // bites when the tests run as a user other than root: root removes it regardless).
    let suite = "[suites.unit]\nrun = \"echo $TMPDIR >> $PIDS/tmpdirs; mkdir $TMPDIR/ro; touch $TMPDIR/ro/left; chmod 500 $TMPDIR/ro; sh test.sh\"\n\n";
    let spec = format!(
        "{suite}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greet bye", "echo \"hello\"", "echo \"bye\"", "")
    );
    let fx = Fixture::new(&spec);
    // The canary is one more suite run: left out, this test counts them.
    let out = fx.run(&["--jobs", "2", "--no-canary"]);
    out.assert_exit(0);
    let dirs: Vec<String> = std::fs::read_to_string(fx.pids.path().join("tmpdirs"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // Two baselines (one per worktree) and two mutants, each in a folder of its own.
    assert_eq!(dirs.len(), 4, "{dirs:?}");
    let distinct: std::collections::BTreeSet<&String> = dirs.iter().collect();
    assert_eq!(distinct.len(), 4, "{dirs:?}");
    for d in &dirs {
        assert!(d.contains("/gatekit-") && d.contains("/tmp-"), "{d}");
        assert!(!std::path::Path::new(d).exists(), "{d} outlived its suite");
    }
}

#[test]
fn a_red_baseline_says_why_with_the_failed_tests_first_error_line_and_then_its_log() {
    let spec = format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    // pytest's shape: the reason far above the closing lines, which say only how many failed.
    let mut test = String::from(
        "echo '___ test_imports ___'\necho \"E   ModuleNotFoundError: No module named 'left_pad'\"\n",
    );
    for i in 0..30 {
        test.push_str(&format!("echo 'noise line {i}'\n"));
    }
    test.push_str("echo 'FAILED tests/test_x.py::test_imports - ModuleNotFoundError'\necho '1 failed, 3 passed in 0.10s'\nexit 1\n");
    fx.repo.write("test.sh", &test);
    fx.repo.commit_all("red baseline");
    let out = fx.run(&[]);
    out.assert_exit(4);
    let err = out.stderr.as_str();
    let why = err
        .find("  tests/test_x.py::test_imports: ModuleNotFoundError: No module named 'left_pad'\n")
        .unwrap_or_else(|| panic!("no reason: {err}"));
    let log = err
        .find(&format!(
            "  log {}",
            fx.out().join("logs/baseline.unit.log").display()
        ))
        .unwrap_or_else(|| panic!("no log: {err}"));
    assert!(why < log, "{err}");
}
