//! `mutants` keeps its promises under faults and hostile input: a suite that rearranges the
//! mutated file, a spec that links out of the tree, crafted shards, builds that hang, bad
//! values, names that try to forge lines, two runs on one `--out`, a reader that closes stdout.
//!
//! Every attack here aims only at files inside the test's own temp dir (the "victim").
//! A suite that spoils the mutated file is in [`spoiled`], crafted shards in [`merge`], shards
//! forged to merge green in [`forged`].

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::{Output, Repo};

use crate::common::report_in;

mod forged;
mod merge;
mod spoiled;

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

/// The library every fixture here mutates, the spec the merge fixtures (and others) run, and
/// its test.
const LIB: &str = "f() {\n  echo 1\n}\n";

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
            "mutants.toml:3: suite \"u\": timeout: bad duration \"31d\": it is over the maximum of 30 days",
        ),
        (
            format!(
                "{}{}",
                suite("timeout = \"99999999999999999999999999d\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:3: suite \"u\": timeout:",
        ),
        (
            format!(
                "{}{}",
                suite("build = \"true\"\nbuild_timeout = \"40d\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:4: suite \"u\": build_timeout: bad duration \"40d\": it is over the maximum of 30 days",
        ),
        (
            format!(
                "{}{}",
                suite("build_timeout = \"1m\""),
                m("echo 1", "echo 2")
            ),
            "mutants.toml:3: suite \"u\": build_timeout without a `build` step",
        ),
        // gate.toml's keys that mean nothing here: refused with why, not as unknown fields.
        (
            format!("{}{}", suite("glob = \"t/*.sh\""), m("echo 1", "echo 2")),
            "mutants.toml:3: suite \"u\": `glob` means nothing in mutants.toml: a mutant names one suite",
        ),
        (
            format!("{}{}", suite("name = \"unit\""), m("echo 1", "echo 2")),
            "mutants.toml:3: suite \"u\": `name` means nothing in mutants.toml: a suite is named by its table, [suites.NAME]",
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
