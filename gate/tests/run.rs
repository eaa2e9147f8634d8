//! `gate run`: suites in order through the runner, the summary and JSON, reruns, clean-up.

use std::fs;
use std::time::{Duration, Instant};

use crate::common::{gate, stderr, stdout, Fixture};

#[test]
fn suites_run_in_order_with_env_timeout_and_counts_and_the_summary_reads_well() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let before = f.repo.status();
    let config = f.config(
        r#"[env]
SHARED = "from-config"

[[suite]]
name = "first"
run = "echo \"shared=$SHARED own=$OWN\"; echo '3 passed, 0 failed'"
env = { OWN = "mine" }

[[suite]]
name = "second"
run = "sh tests/ok.sh"
timeout = "30s"
"#,
    );
    let out_dir = f.out.path().join("gate-out");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    assert_eq!(summary, stdout(&out), "stdout is the summary");
    let lines: Vec<&str> = summary.lines().collect();
    assert!(lines[0].starts_with("gate PASS  20"), "{summary}");
    assert!(summary.contains("manifest  ") && summary.contains("6/6 OK"));
    let first = lines.iter().position(|l| l.starts_with("first ")).unwrap();
    let second = lines.iter().position(|l| l.starts_with("second ")).unwrap();
    assert!(first < second, "suites out of order: {summary}");
    assert!(lines[first].contains("exit 0") && lines[first].contains("3 passed"));
    assert!(lines[second].contains("2 passed"), "{summary}");
    assert!(summary.contains("total     2/2 suites passed"));
    assert!(summary.contains("verdict   PASS"));
    let log = fs::read_to_string(out_dir.join("logs/01-first.log")).unwrap();
    assert!(log.contains("shared=from-config own=mine"), "{log}");

    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["verdict"], "PASS");
    assert_eq!(json["suites"][0]["name"], "first");
    assert_eq!(json["suites"][0]["record"]["exit_code"], 0);
    assert_eq!(json["suites"][0]["record"]["counts"]["passed"], 3);
    let start = json["suites"][0]["record"]["start"].as_str().unwrap();
    assert!(start.ends_with('Z') && start.len() == 20, "{start}");
    assert_eq!(json["candidate"]["manifest"]["summary"], "6/6 OK");
    // The checkout was removed and the user's checkout is as it was.
    assert!(f.repo.extra_worktrees().is_empty());
    assert_eq!(f.repo.status(), before);
}

#[test]
fn a_failing_suite_is_a_finding_and_later_suites_still_run() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        "[[suite]]\nname = \"red\"\nrun = \"echo '1 passed, 2 failed'; exit 1\"\n\n[[suite]]\nname = \"green\"\nrun = \"true\"\n",
    );
    let out_dir = f.out.path().join("o");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("verdict   FAIL: suite red exit 1"), "{text}");
    assert!(text.contains("1 passed, 2 failed"), "{text}");
    assert!(text
        .lines()
        .any(|l| l.starts_with("green") && l.contains("exit 0")));
}

#[test]
fn a_hang_whose_child_escaped_the_group_is_killed_and_reported_as_a_hang() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let pidfile = f.out.path().join("escaped.pid");
    let config = f.config(&format!(
        "[[suite]]\nname = \"hangs\"\nrun = \"setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 1000\"\ntimeout = \"1s\"\n",
        pidfile.display()
    ));
    let out_dir = f.out.path().join("o");
    let started = Instant::now();
    let out = f.run(&config, &out_dir).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("hang (killed at 1.00s), 1 strays killed"),
        "{text}"
    );
    let pid: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !testkit::alive(pid),
        "escaped child {pid} survived the gate"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    assert_eq!(json["suites"][0]["outcome"], "hang");
    assert_eq!(json["suites"][0]["record"]["hang"], true);
}

#[test]
fn a_suite_whose_child_keeps_stdout_open_does_not_hang_the_gate() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        "[[suite]]\nname = \"daemon\"\nrun = \"setsid sleep 1000 & echo '1 passed, 0 failed'\"\ntimeout = \"60s\"\n",
    );
    let started = Instant::now();
    let out = f
        .run(&config, &f.out.path().join("o"))
        .arg("--echo")
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("exit 0, 1 strays killed"));
}

#[test]
fn glob_suites_run_each_file_in_sorted_order_with_their_own_tmpdir() {
    let f = Fixture::new();
    f.repo
        .write(
            "scripts/test-b.sh",
            "#!/bin/sh\n[ -z \"$(ls -A \"$TMPDIR\")\" ] || exit 9\ntouch \"$TMPDIR/b\"\necho \"tmp=$TMPDIR\"\n",
        )
        .chmod_x("scripts/test-b.sh")
        .write(
            "scripts/test-a.sh",
            "#!/bin/sh\n[ -z \"$(ls -A \"$TMPDIR\")\" ] || exit 9\ntouch \"$TMPDIR/a\"\necho \"tmp=$TMPDIR\"\n",
        )
        .chmod_x("scripts/test-a.sh")
        .write("scripts/helper.sh", "#!/bin/sh\nexit 1\n");
    f.repo.git(["add", "-A"]);
    f.pack();
    f.settle();
    let config = f.config("[[suite]]\nglob = \"scripts/test-*.sh\"\n");
    let out_dir = f.out.path().join("o");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    let a = text.find("scripts/test-a.sh ").unwrap();
    let b = text.find("scripts/test-b.sh ").unwrap();
    assert!(a < b, "{text}");
    assert!(!text.contains("helper.sh"));
    let tmp_a = fs::read_to_string(out_dir.join("logs/01-scripts-test-a-sh.log")).unwrap();
    let tmp_b = fs::read_to_string(out_dir.join("logs/02-scripts-test-b-sh.log")).unwrap();
    assert_ne!(tmp_a, tmp_b, "suites shared a TMPDIR");
    let dir_a = tmp_a.trim().strip_prefix("tmp=").unwrap();
    assert!(
        !std::path::Path::new(dir_a).exists(),
        "scratch TMPDIR not removed"
    );
}

#[test]
fn only_reruns_one_suite_and_appends_to_the_summary() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let flag = f.out.path().join("fixed");
    let config = f.config(&format!(
        "[[suite]]\nname = \"flaky\"\nrun = \"test -e {}\"\n\n[[suite]]\nname = \"steady\"\nrun = \"true\"\n",
        flag.display()
    ));
    let out_dir = f.out.path().join("o");
    f.run(&config, &out_dir).assert().code(1);
    fs::write(&flag, "").unwrap();
    let out = f
        .run(&config, &out_dir)
        .args(["--only", "flaky"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    let rerun_at = summary.find("\nrerun 20").expect("a rerun section");
    assert!(summary[rerun_at..].contains("manifest 6/6 OK"), "{summary}");
    // The first run's failure is still on record above the rerun.
    assert!(summary[..rerun_at].contains("exit 1"), "{summary}");
    let after = &summary[rerun_at..];
    assert!(after
        .lines()
        .any(|l| l.starts_with("flaky") && l.contains("exit 0")));
    assert!(!after.lines().any(|l| l.starts_with("steady")), "{summary}");
    assert!(summary.contains("verdict   PASS"), "{summary}");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    assert_eq!(json["reruns"].as_array().unwrap().len(), 1);
    assert_eq!(json["suites"].as_array().unwrap().len(), 2);

    f.run(&config, &out_dir)
        .args(["--only", "nope"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no suite named \"nope\""));
}

#[test]
fn a_bad_gate_toml_names_file_and_line_and_writes_nothing() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let out_dir = f.out.path().join("never");
    for (suites, expect) in [
        (
            "[[suite]]\nname = \"x\"\nrun = \"true\"\ntmeout = \"1m\"\n",
            "gate.toml:8: unknown field `tmeout`",
        ),
        (
            "[[suite]]\nname = \"x\"\nrun = \"true\"\ntimeout = \"soon\"\n",
            "gate.toml:8: timeout: bad duration",
        ),
        (
            "[[suite]]\nname = \"x\"\nrun = \"true\"\ntimeout = \"30\"\n",
            "gate.toml:8: timeout: bad duration",
        ),
    ] {
        let config = f.config(suites);
        let out = f.run(&config, &out_dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(expect), "{}", stderr(&out));
        assert!(!out_dir.exists(), "output written for bad input");
    }
    assert!(f.repo.extra_worktrees().is_empty());
}

#[test]
fn keep_leaves_the_worktree_with_the_candidate_applied() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let out_dir = f.out.path().join("o");
    f.run(&config, &out_dir).arg("--keep").assert().success();
    let kept = f.repo.extra_worktrees();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        fs::read(kept[0].join("src/lib.txt")).unwrap(),
        b"one\ntwo\nthree\n"
    );
    f.repo.remove_checkout(&kept[0]);
}

#[test]
fn cites_matches_the_head_at_any_width_and_lists_the_rest() {
    let f = Fixture::new();
    f.settle();
    let head = f.repo.git(["rev-parse", "work"]);
    let review = f.out.path().join("review.md");
    fs::write(
        &review,
        format!(
            "Gated {} and {} today.\nOld: deadbeef12\n",
            &head[..9],
            &head[..7]
        ),
    )
    .unwrap();
    let out = crate::common::gate()
        .current_dir(f.repo.path())
        .args(["cites", "--head", "work"])
        .arg(&review)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("cited   yes: {} (line 1, commit)", &head[..9])),
        "{text}"
    );
    assert!(text.contains("others  deadbeef12 (line 2)"), "{text}");

    // Only another commit cited: exit 1, and the other token shows the scan worked.
    let out = crate::common::gate()
        .current_dir(f.repo.path())
        .args(["cites", "--head", "work"])
        .write_stdin(format!("Gated {}\n", &f.base[..10]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("cited   NO"));
    assert!(stdout(&out).contains(&f.base[..10]));

    // An approval bound to the gated tree cites every head whose tree it is: here a new commit
    // on top with the same tree (a reworded message, say).
    let tree = f.repo.git(["rev-parse", "work^{tree}"]);
    let reworded = f
        .repo
        .git(["commit-tree", &tree, "-p", "work", "-m", "reworded"]);
    let out = crate::common::gate()
        .current_dir(f.repo.path())
        .args(["cites", "--head", &reworded])
        .write_stdin(format!("Gated; tree {} PASS\n", &tree[..12]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!("cited   yes: {} (line 1, tree)", &tree[..12])),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_glob_star_stays_within_one_folder() {
    // `scripts/test-*.sh` names `scripts/test-a.sh`, never `scripts/test-x/deep.sh`: a `*` that
    // crossed folders would run a script nobody listed.
    let repo = testkit::Repo::new();
    repo.write(
        "scripts/test-a.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .chmod_x("scripts/test-a.sh")
    .write("scripts/test-x/deep.sh", "#!/bin/sh\necho deep ran\n")
    .chmod_x("scripts/test-x/deep.sh")
    .write("README", "v1\n");
    let base = repo.commit_all("base");
    repo.write("README", "v2\n");
    repo.git(["add", "README"]);
    let out = tempfile::tempdir().unwrap();
    let config = crate::common::pack_with_config(
        &repo,
        &base,
        out.path(),
        "[[suite]]\nglob = \"scripts/test-*.sh\"\n",
    );
    let ran = crate::common::run_config(&repo, &config, &out.path().join("gate-out"), &[]);
    ran.assert_exit(0);
    let text = &ran.stdout;
    assert!(text.contains("scripts/test-a.sh"), "{text}");
    assert!(!text.contains("deep.sh"), "{text}");
    assert!(text.contains("1/1 suites passed"), "{text}");
}

#[test]
fn one_gate_toml_serves_many_candidates_through_base_patch_and_manifest_flags() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    // The candidate's files in a folder of their own; gate.toml elsewhere names files that do
    // not exist, and the command line names the real ones (one relative with `..`, one absolute).
    let cands = tempfile::tempdir().unwrap();
    let one = cands.path().join("one");
    std::fs::create_dir(&one).unwrap();
    std::fs::copy(f.patch(), one.join("build.patch")).unwrap();
    std::fs::copy(f.manifest(), one.join("candidate-manifest.sha256")).unwrap();
    let conf_dir = cands.path().join("conf");
    std::fs::create_dir(&conf_dir).unwrap();
    let config = conf_dir.join("gate.toml");
    std::fs::write(
        &config,
        "base = \"no-such-rev\"\npatch = \"missing.patch\"\nmanifest = \"missing.sha256\"\n\n[[suite]]\nname = \"ok\"\nrun = \"echo '2 passed, 0 failed'\"\n",
    )
    .unwrap();
    let out_dir = cands.path().join("gate-out");
    let out = gate()
        .current_dir(f.repo.path())
        .env("TMPDIR", f.out.path())
        .args(["run", "--base", &f.base, "--patch"])
        .arg(one.join("build.patch"))
        .arg("--manifest")
        .arg(conf_dir.join("../one/candidate-manifest.sha256"))
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("6/6 OK"), "{}", stdout(&out));

    // gate.toml itself may name them with `..` or absolutely: they are only read.
    std::fs::write(
        &config,
        format!(
            "base = \"{}\"\npatch = \"../one/build.patch\"\nmanifest = \"{}\"\n\n[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
            f.base,
            one.join("candidate-manifest.sha256").display()
        ),
    )
    .unwrap();
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    // Outputs keep every guard: a report written over the patch it reads is refused.
    let out = f
        .run(&config, &out_dir)
        .arg("--junit")
        .arg(one.join("build.patch"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(one.join("build.patch")).unwrap(),
        std::fs::read(f.patch()).unwrap()
    );
}

#[test]
fn outside_a_repository_the_error_suggests_repo() {
    let f = Fixture::new();
    f.pack();
    let nowhere = tempfile::tempdir().unwrap();
    let out = gate()
        .current_dir(nowhere.path())
        .env("GIT_CEILING_DIRECTORIES", nowhere.path().parent().unwrap())
        .args(["run", "--config"])
        .arg(f.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("not a git repository"), "{err}");
    assert!(err.contains("name one with --repo DIR"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_run_on_build_outputs_restored_from_the_cache_says_so_on_the_record() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    // Ignored in the user's checkout, as `cache` asks (untracked: the candidate is unchanged).
    f.repo.write(".gitignore", "build/\n");
    let config = f.config(
        "[worktree]\ncache = [\"build\"]\n\n[[suite]]\nname = \"builds\"\nrun = \"mkdir -p build && echo made > build/out\"\n",
    );
    let cache = tempfile::tempdir().unwrap();
    let run = |out: &str| {
        let out_dir = f.out.path().join(out);
        let output = f
            .run(&config, &out_dir)
            .env("GATEKIT_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
        (json, stdout(&output))
    };
    let (cold, _) = run("cold");
    assert_eq!(
        cold["reused"],
        serde_json::json!([]),
        "a cold run reused nothing"
    );
    let (warm, summary) = run("warm");
    let said = warm["reused"][0].as_str().unwrap_or_default().to_string();
    assert!(said.starts_with("build restored from the cache"), "{warm}");
    assert!(
        summary.contains("reused    build restored from the cache"),
        "{summary}"
    );
}
