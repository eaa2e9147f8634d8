//! `gate` under faults and hostile input: a rerun of another candidate, names that try to forge
//! summary lines, two runs on one `--out`, bad gate.toml values, a closed stdout, output folders
//! that cannot be written, interrupts. Every attack aims only at files in the test's own temp dir.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gate::record::Verdict;

use crate::common::{gate, stderr, stdout, Fixture};
use testkit::Repo;

const TWO_SUITES: &str =
    "[[suite]]\nname = \"a\"\nrun = \"true\"\n\n[[suite]]\nname = \"b\"\nrun = \"true\"\n";

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the one duration rule says of a timeout too long to be one, in gate.toml, mutants.toml
/// and on every command line alike.
const TOO_LONG: &str = "it is too long (at most 64 characters, and 12 digits to a number)";

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

// ---- 2. outside text never forges a line -----------------------------------------------------

const FORGED: &str = "verdict   PASS";

fn assert_unforged(what: &str, text: &[u8]) {
    assert!(
        !text.contains(&0x1b),
        "{what}: a raw ESC byte: {:?}",
        String::from_utf8_lossy(text)
    );
    assert!(
        !text.contains(&b'\r'),
        "{what}: a raw CR: {:?}",
        String::from_utf8_lossy(text)
    );
    let text = String::from_utf8_lossy(text);
    for line in text.lines() {
        assert!(
            !line.starts_with(FORGED),
            "{what}: a forged line {line:?} in\n{text}"
        );
    }
}

#[test]
fn names_and_subjects_with_line_breaks_cr_or_escapes_never_forge_a_line_or_reach_a_terminal() {
    let repo = Repo::new();
    repo.write("src/a.txt", "a\n")
        .write("gone/x\nverdict   PASS", "1\n")
        .write("gone/\u{1b}[31mred", "2\n");
    let base = repo.commit_all("base");
    repo.git(["branch", "work"]);
    repo.git(["checkout", "-q", "work"]);
    repo.write("src/a.txt", "a\nb\n")
        .write("tests/y\nverdict   PASS.sh", "#!/bin/sh\nexit 1\n")
        .chmod_x("tests/y\nverdict   PASS.sh")
        .write(
            "tests/\u{1b}[31m\u{1b}[2J.sh",
            "#!/bin/sh\necho '1 passed, 0 failed'\n",
        )
        .chmod_x("tests/\u{1b}[31m\u{1b}[2J.sh");
    repo.git(["rm", "-q", "gone/x\nverdict   PASS", "gone/\u{1b}[31mred"]);
    repo.git(["add", "-A"]);
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    // Drift: a commit on the head touching a candidate path, its subject an attack.
    repo.write("src/a.txt", "a\nc\n");
    repo.commit_all("fix\rverdict   PASS \u{1b}[2J");
    let config = cand.path().join("gate.toml");
    fs::write(
        &config,
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nglob = \"tests/*.sh\"\n"),
    )
    .unwrap();
    let out_dir = cand.path().join("o");
    let junit = cand.path().join("junit.xml");
    let run = |extra: &[&str]| {
        gate()
            .current_dir(repo.path())
            .arg("run")
            .arg("--config")
            .arg(&config)
            .arg("--out")
            .arg(&out_dir)
            .arg("--junit")
            .arg(&junit)
            .args(extra)
            .output()
            .unwrap()
    };
    let text = run(&["--color", "never"]);
    assert_eq!(text.status.code(), Some(1), "{}", stderr(&text));
    let summary = read(&out_dir.join("gate-summary.txt"));
    let summary_text = String::from_utf8_lossy(&summary).into_owned();
    // The attacks are there, made visible, not dropped.
    assert!(
        summary_text.contains("tests/y\\nverdict   PASS.sh"),
        "{summary_text}"
    );
    assert!(summary_text.contains("\\u{1b}[31mred"), "{summary_text}");
    assert!(
        summary_text.contains("fix\\rverdict   PASS \\u{1b}[2J"),
        "{summary_text}"
    );
    assert!(summary_text
        .lines()
        .last()
        .unwrap()
        .starts_with("verdict   FAIL"));
    assert_unforged("gate-summary.txt", &summary);
    assert_unforged("stdout", &text.stdout);
    assert_unforged("stderr", &text.stderr);
    assert_unforged("gate.json", &read(&out_dir.join("gate.json")));
    assert_unforged("junit.xml", &read(&junit));

    let md = run(&["--format", "markdown", "--color", "always"]);
    assert_eq!(md.status.code(), Some(1));
    assert_unforged("markdown", &md.stdout);
    assert_unforged("stderr (markdown)", &md.stderr);

    // Under --color always the only escapes are gatekit's own verdict colours.
    let painted = run(&["--color", "always"]);
    let mut shown = stdout(&painted);
    let paint = report::Painter::new(true);
    for verdict in [Verdict::Pass, Verdict::Fail, Verdict::Interrupted] {
        let word = verdict.as_str();
        shown = shown.replace(&paint.paint(word, verdict.style()), word);
    }
    assert!(shown.contains("verdict   FAIL"), "{shown}");
    assert_unforged("stdout (--color always)", shown.as_bytes());
}

#[test]
fn an_error_naming_outside_text_is_one_line_without_controls() {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let out = f
        .run(&config, &f.out.path().join("o"))
        .args(["--only", "x\nverdict   PASS\u{1b}[2J"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_unforged("stderr", &out.stderr);
    // A patch whose name is an attack: the error quotes it raw from deep in the library.
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        text.replace("\"build.patch\"", "\"x\\nverdict   PASS\\u001b[2J\\r\""),
    )
    .unwrap();
    let out = f.run(&config, &f.out.path().join("o")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("x verdict   PASS"),
        "{}",
        stderr(&out)
    );
    assert_unforged("stderr", &out.stderr);
}

#[test]
fn a_refused_argument_is_quoted_with_escapes_and_help_survives_a_closed_stdout() {
    let out = gate()
        .args(["completions", "\u{1b}[2J\nverdict   PASS"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\\nverdict   PASS"),
        "{}",
        stderr(&out)
    );
    assert_unforged("stderr", &out.stderr);
    let mut help = gate_std(Path::new("."));
    help.arg("--help");
    let (status, err) = with_closed_stdout(help);
    assert_eq!(status, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
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

// ---- 4. gate.toml ----------------------------------------------------------------------------

#[test]
fn bad_gate_toml_values_are_file_line_errors_before_anything_runs() {
    let f = Fixture::new();
    f.pack();
    let marker = f.out.path().join("ran");
    let suite = format!(
        "[[suite]]\nname = \"s\"\nrun = \"touch '{}'\"\n",
        marker.display()
    );
    let out_dir = f.out.path().join("never");
    for (body, expect) in [
        (String::new(), "gate.toml: no [[suite]]".to_string()),
        (
            format!("[env]\nA = \"x\\u0000y\"\n\n{suite}"),
            "gate.toml:6: env A: the value holds a NUL byte".into(),
        ),
        (
            format!("{suite}env = {{ B = \"\\u0000\" }}\n"),
            "gate.toml:8: env B: the value holds a NUL byte".into(),
        ),
        (
            format!("{suite}timeout = \"99999999999999999999d\"\n"),
            "gate.toml:8: timeout:".into(),
        ),
        (format!("{suite}timeout = \"31d\"\n"), "30 days".into()),
        // The one duration rule caps the text's length, as mutants.toml and --timeout do.
        (
            format!("{suite}timeout = \"{}\"\n", "1s ".repeat(40)),
            TOO_LONG.to_string(),
        ),
        // The one path rule: a glob, and a [worktree] path, stay in the candidate's tree.
        (
            "[[suite]]\nglob = \"../x/*.sh\"\n".to_string(),
            "gate.toml:6: `glob` \"../x/*.sh\" climbs out of the tree with `..`".into(),
        ),
        (
            "[[suite]]\nglob = \".\"\n".to_string(),
            "gate.toml:6: `glob` \".\" names the tree's root itself".into(),
        ),
        (
            format!("{suite}[worktree]\nlink = [\"../deps\"]\n"),
            "gate.toml:9: worktree.link \"../deps\" climbs out of the tree with `..`".into(),
        ),
    ] {
        let config = f.config(&body);
        let out = f.run(&config, &out_dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{body}: {}", stderr(&out));
        assert!(stderr(&out).contains(&expect), "{body}: {}", stderr(&out));
        assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    assert!(!marker.exists(), "a suite ran");
    assert!(!out_dir.exists(), "the output folder was made");
}

#[test]
fn a_manifest_line_naming_a_path_out_of_the_tree_is_refused_at_its_line_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "a\n").unwrap();
    let good = format!("{}  a\n", sha256(b"a\n"));
    for (bad, problem) in [
        ("../a", "has a `..` component"),
        ("/etc/passwd", "absolute path"),
        (".", "names the tree itself"),
        ("a/", "ends with `/`"),
    ] {
        fs::write(
            dir.path().join("m.sha256"),
            format!("{good}{}  {bad}\n", sha256(b"a\n")),
        )
        .unwrap();
        let out = gate()
            .current_dir(dir.path())
            .args(["check", "m.sha256"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("m.sha256:2:") && err.contains(problem),
            "{bad}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn glob_matches_that_are_links_out_or_not_executable_get_rows_and_never_run() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-outside");
    let evil = outside.path().join("evil.sh");
    fs::write(&evil, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&evil, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The link out is in the base, so the candidate's manifest (which refuses links out of the
    // tree) never names it: only the glob finds it.
    let repo = Repo::new();
    repo.write("README", "r\n");
    fs::create_dir_all(repo.path().join("scripts")).unwrap();
    std::os::unix::fs::symlink(&evil, repo.path().join("scripts/test-out.sh")).unwrap();
    let base = repo.commit_all("base");
    repo.write(
        "scripts/test-ok.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .chmod_x("scripts/test-ok.sh")
    .write("scripts/test-plain.sh", "#!/bin/sh\nexit 0\n")
    .write("scripts/test-inside.sh", "");
    fs::remove_file(repo.path().join("scripts/test-inside.sh")).unwrap();
    std::os::unix::fs::symlink("test-ok.sh", repo.path().join("scripts/test-inside.sh")).unwrap();
    repo.git(["add", "-A"]);
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    let config = cand.path().join("gate.toml");
    fs::write(
        &config,
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nglob = \"scripts/test-*.sh\"\n"),
    )
    .unwrap();
    let out_dir = cand.path().join("o");
    let out = gate()
        .current_dir(repo.path())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(!marker.exists(), "a link out of the tree was run");
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    let row = |name: &str| {
        summary
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {summary}"))
            .to_string()
    };
    assert!(
        row("scripts/test-out.sh").contains("a link out of the tree"),
        "{summary}"
    );
    assert!(
        row("scripts/test-plain.sh").contains("not executable"),
        "{summary}"
    );
    assert!(row("scripts/test-ok.sh").contains("exit 0"), "{summary}");
    assert!(
        row("scripts/test-inside.sh").contains("exit 0"),
        "{summary}"
    );
    let report = json(&out_dir.join("gate.json"));
    let refused: Vec<_> = report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["refused"].clone())
        .collect();
    assert_eq!(
        refused,
        vec![
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::json!("a link out of the tree"),
            serde_json::json!("not executable"),
        ]
    );
}

// ---- 5. gate check ---------------------------------------------------------------------------

#[test]
fn check_refuses_a_dir_that_is_a_file_or_missing_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.txt"), "a\n").unwrap();
    let manifest = tmp.path().join("m.sha256");
    fs::write(&manifest, format!("{}  a.txt\n", sha256(b"a\n"))).unwrap();
    for dir in [tmp.path().join("a.txt"), tmp.path().join("missing")] {
        let out = gate()
            .arg("check")
            .arg("--manifest")
            .arg(&manifest)
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(&dir.display().to_string()));
    }
}

#[test]
fn check_never_follows_a_link_out_of_dir_nor_a_path_that_climbs_or_is_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    fs::create_dir(&dir).unwrap();
    let secret = tmp.path().join("secret.txt");
    fs::write(&secret, "outside\n").unwrap();
    fs::write(dir.join("real.txt"), "outside\n").unwrap();
    // The manifest's digest is right for the outside file's content.
    let digest = sha256(b"outside\n");
    std::os::unix::fs::symlink(&secret, dir.join("link.txt")).unwrap();
    let cases = [
        (format!("{digest}  link.txt\n"), "leads out of the tree"),
        (format!("{digest}  ../secret.txt\n"), "`..`"),
        (format!("{digest}  {}\n", secret.display()), "absolute path"),
    ];
    for (line, why) in cases {
        let manifest = tmp.path().join("m.sha256");
        fs::write(&manifest, &line).unwrap();
        let out = gate()
            .arg("check")
            .arg("--manifest")
            .arg(&manifest)
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{line}: {}", stdout(&out));
        assert!(stdout(&out).is_empty(), "{line}: {}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{line}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{line}: {}", stderr(&out));
    }
}

// ---- 6. a closed stdout ----------------------------------------------------------------------

/// Runs `cmd` with its stdout a pipe whose read end is closed before the child writes.
fn with_closed_stdout(mut cmd: Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let status = wait_for(&mut child, Duration::from_secs(120));
    stderr_pipe.read_to_string(&mut err).unwrap();
    (status.code(), err)
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let dir = f.repo.path();
    let mut check = gate_std(dir);
    check
        .arg("check")
        .arg("--manifest")
        .arg(f.manifest())
        .arg(".");
    let mut completions = gate_std(dir);
    completions.args(["completions", "bash"]);
    let mut man = gate_std(dir);
    man.arg("man");
    let mut run = gate_std(dir);
    run.arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(f.out.path().join("o"))
        .arg("--json");
    let broken = f.out.path().join("broken.sha256");
    let manifest = fs::read_to_string(f.manifest()).unwrap();
    fs::write(&broken, manifest.replacen(&manifest[..8], "00000000", 1)).unwrap();
    let mut failing_check = gate_std(dir);
    failing_check
        .arg("check")
        .arg("--manifest")
        .arg(&broken)
        .arg(".");
    for (name, cmd, code) in [
        ("check", check, 0),
        ("check with a finding", failing_check, 1),
        ("completions", completions, 0),
        ("man", man, 0),
        ("run --json", run, 0),
    ] {
        let (status, err) = with_closed_stdout(cmd);
        assert_eq!(status, Some(code), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!err.contains("failed printing"), "{name}: {err}");
        assert!(!err.contains("error"), "{name}: {err}");
    }
    // The run's work was done and recorded though nobody read stdout.
    assert_eq!(json(&f.out.path().join("o/gate.json"))["verdict"], "PASS");
}

// ---- 7. output paths -------------------------------------------------------------------------

/// A place no write can reach, for root too: under a folder made read-only, or (as root, who
/// ignores modes) under a regular file.
fn unwritable(tmp: &Path) -> PathBuf {
    if is_root() {
        let file = tmp.join("a-file");
        fs::write(&file, "").unwrap();
        file.join("sub")
    } else {
        use std::os::unix::fs::PermissionsExt;
        let ro = tmp.join("read-only");
        fs::create_dir(&ro).unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
        ro.join("sub")
    }
}

#[test]
fn an_unwritable_out_or_junit_is_exit_2_before_any_suite_starts() {
    let f = Fixture::new();
    f.pack();
    let marker = f.out.path().join("suite-ran");
    let config = f.config(&format!(
        "[[suite]]\nname = \"s\"\nrun = \"touch '{}'\"\n",
        marker.display()
    ));
    let bad = unwritable(f.out.path());
    let out = f.run(&config, &bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(!marker.exists(), "a suite ran before --out was checked");

    let out = f
        .run(&config, &f.out.path().join("o"))
        .arg("--junit")
        .arg(bad.join("junit.xml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!marker.exists(), "a suite ran before --junit was checked");
    // A folder is not a JUnit file either.
    let out = f
        .run(&config, &f.out.path().join("o"))
        .arg("--junit")
        .arg(f.out.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!marker.exists());
    if !is_root() {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(bad.parent().unwrap(), fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn a_report_that_cannot_be_written_after_the_suites_ran_keeps_the_verdict_and_says_so() {
    let f = Fixture::new();
    f.pack();
    let out_dir = f.out.path().join("o");
    // gate.json can never be renamed into place: the suite puts a folder there once the output
    // guard has passed (one there before the run is refused up front, exit 2).
    // The report is already on disk, marked incomplete, when the suite runs: it is replaced
    // by the folder.
    let block = format!(
        "rm -f '{}'; mkdir -p '{}'",
        out_dir.join("gate.json").display(),
        out_dir.join("gate.json/blocker").display()
    );
    let config = f.config(&format!(
        "[[suite]]\nname = \"red\"\nrun = \"{block}; exit 1\"\n"
    ));
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a finding stays 1: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("gate.json"), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("verdict   FAIL"),
        "the summary is on stdout"
    );

    fs::remove_dir_all(out_dir.join("gate.json")).unwrap();
    let green = f.config(&format!("[[suite]]\nname = \"green\"\nrun = \"{block}\"\n"));
    let out = f.run(&green, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a PASS needs its record: {}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("verdict   PASS"));
    assert!(stderr(&out).contains("gate.json"), "{}", stderr(&out));
}

// ---- 8. interrupts ---------------------------------------------------------------------------

fn send(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// A repository whose staged candidate is large enough (32 MiB of noise) that packing or
/// applying it takes a while in a debug build; returns it with its base.
fn big_candidate() -> (Repo, String) {
    let repo = Repo::new();
    repo.write("README", "r\n");
    let base = repo.commit_all("base");
    repo.write_noise(16);
    repo.git(["add", "-A"]);
    (repo, base)
}

/// Starts `cmd`, sends it SIGTERM (to its own pid only) while it works, and returns its exit.
fn terminated(mut cmd: Command) -> std::process::ExitStatus {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the command finished before the signal"
    );
    send(child.id(), "TERM");
    wait_for(&mut child, Duration::from_secs(120))
}

#[test]
fn a_pack_interrupted_by_sigterm_exits_130_and_leaves_no_files() {
    let (repo, base) = big_candidate();
    let out_dir = tempfile::tempdir().unwrap();
    let target = out_dir.path().join("cand");
    let mut cmd = gate_std(repo.path());
    cmd.args(["pack", "--base", &base, "--out"]).arg(&target);
    assert_eq!(terminated(cmd).code(), Some(130));
    let leftovers: Vec<_> = fs::read_dir(&target)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    assert!(
        repo.extra_worktrees().is_empty(),
        "a scratch worktree was left"
    );
}

#[test]
fn an_apply_interrupted_by_sigterm_exits_130_and_leaves_no_worktree() {
    let (repo, base) = big_candidate();
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    let at = cand.path().join("wt");
    let mut cmd = gate_std(repo.path());
    cmd.args(["apply", "--base", &base, "--patch"])
        .arg(cand.path().join("build.patch"))
        .arg("--manifest")
        .arg(cand.path().join("candidate-manifest.sha256"))
        .arg("--worktree")
        .arg(&at);
    assert_eq!(terminated(cmd).code(), Some(130));
    assert!(!at.exists(), "the worktree was left at {}", at.display());
    assert!(repo.extra_worktrees().is_empty(), "a worktree was left");
}

#[test]
fn a_run_interrupted_by_sigint_or_sigterm_exits_130_with_its_suite_killed_and_nothing_left() {
    for signal in ["INT", "TERM"] {
        let f = Fixture::new();
        f.pack();
        let pid_file = f.out.path().join("suite.pid");
        let config = f.config(&format!(
            "[[suite]]\nname = \"slow\"\nrun = \"echo $$ > '{}'; exec sleep 60\"\n\n[[suite]]\nname = \"later\"\nrun = \"true\"\n",
            pid_file.display()
        ));
        let out_dir = f.out.path().join("o");
        let mut child = gate_std(f.repo.path())
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
        let suite_pid = loop {
            if let Some(pid) = fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break pid;
            }
            assert!(Instant::now() < deadline, "the suite never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        let sent = Instant::now();
        send(child.id(), signal);
        let status = wait_for(&mut child, Duration::from_secs(60));
        assert_eq!(status.code(), Some(130), "SIG{signal}");
        assert!(
            sent.elapsed() < Duration::from_secs(30),
            "SIG{signal}: slow to stop"
        );
        assert!(
            !testkit::alive(suite_pid),
            "SIG{signal}: the suite still runs"
        );
        let report = json(&out_dir.join("gate.json"));
        assert_eq!(report["verdict"], "INTERRUPTED", "SIG{signal}");
        assert_eq!(
            report["suites"].as_array().unwrap().len(),
            1,
            "later never started"
        );
        assert!(
            f.repo.extra_worktrees().is_empty(),
            "SIG{signal}: a worktree was left"
        );
    }
}

#[test]
fn a_command_blocked_on_its_input_still_ends_at_ctrl_c_with_130() {
    // `gate cites` reading a review from a stdin that never ends (a terminal, a stuck pipe):
    // the interrupt handler must not turn Ctrl-C into nothing.
    let f = Fixture::new();
    f.settle();
    let mut cmd = gate_std(f.repo.path());
    let mut child = cmd
        .args(["cites", "--head", "HEAD"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _held_open = child.stdin.take();
    std::thread::sleep(Duration::from_millis(300));
    send(child.id(), "INT");
    let status = wait_for(&mut child, Duration::from_secs(10));
    assert_eq!(
        status.code(),
        Some(130),
        "Ctrl-C did not end it: {status:?}"
    );
}
