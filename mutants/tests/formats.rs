//! `mutants run`'s reports where reviewers read them, each checked by a real consumer: junit.xml
//! parsed by `junitparser`, mutants.json validated by `jsonschema` against docs/schema, the
//! Markdown for a pull request, colour only where asked, the live line on a real pty (`script`),
//! completions checked by `bash -n`, man pages rendered by groff, and mutants.html rendered in
//! headless Chromium (a screenshot, and the DOM after its script ran).
//!
//! The Python consumers come from PyPI and chromium from Debian (`.ci/run` installs them).
//! Without them a test skips with a notice, except under CI (`CI` set), where a missing Python
//! module is a failure: a check that silently checks nothing in CI would hide a broken report.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::*;
use serde_json::{json, Value};
use testkit::{junit, schema_errors, Output};

/// Validates an instance against a schema; prints `{"errors": [...]}`.
/// One mutant of every verdict, in this order: killed, killed (hang), SURVIVED (its name holds
/// markup), control held, CONTROL KILLED, skipped (0 matches), error (a second suite whose
/// runner cannot start once its shebang is broken).
fn every_verdict() -> Fixture {
    let suites = "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"2s\"\n\n\
                  [suites.exec]\nrun = \"./run-tests\"\n\n";
    let spec = format!(
        "{suites}{}{}{}{}{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "spin forever",
            "spin() { :; }",
            "spin() { while :; do :; done; }",
            ""
        ),
        mutant("spawn <&> true", "spawn() { :; }", "spawn() { true; }", ""),
        mutant(
            "control: daemon spacing",
            "daemon() { :; }",
            "daemon () { :; }",
            "expect = \"survive\""
        ),
        mutant(
            "control: greet hi",
            "echo \"hello\"",
            "echo \"hi\"",
            "expect = \"survive\""
        ),
        mutant("absent", "subtract()", "x", ""),
        "[[mutant]]\nname = \"broken shebang\"\nfile = \"run-tests\"\nanchor = \"#!/bin/sh\"\n\
         replace = \"#!/nonexistent/sh\"\nsuite = \"exec\"\n",
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("run-tests", "#!/bin/sh\necho '1 passed, 0 failed'\n");
    fx.repo.chmod_x("run-tests");
    fx.repo.commit_all("runner");
    fx
}

const EVERY_VERDICT: [&str; 7] = [
    "killed",
    "killed (hang)",
    "SURVIVED",
    "control held",
    "CONTROL KILLED",
    "skipped (0 matches)",
    "error",
];

#[test]
fn junit_has_a_testcase_per_mutant_that_junitparser_reads_as_pass_failure_skip_and_error() {
    let fx = every_verdict();
    let out = fx.run(&[]);
    out.assert_exit(1);
    let got: Vec<String> = verdicts(&fx.report()).into_iter().map(|v| v.1).collect();
    assert_eq!(got, EVERY_VERDICT);
    let Some(facts) = junit(&fx.out().join("junit.xml")) else {
        return;
    };
    assert_eq!(
        (
            &facts["tests"],
            &facts["failures"],
            &facts["errors"],
            &facts["skipped"]
        ),
        (&json!(7), &json!(2), &json!(1), &json!(1)),
        "{facts:#}"
    );
    let cases = facts["cases"].as_array().unwrap();
    let field =
        |key: &str| -> Vec<&str> { cases.iter().map(|c| c[key].as_str().unwrap()).collect() };
    assert_eq!(
        field("name"),
        [
            "plus to minus",
            "spin forever",
            "spawn <&> true",
            "control: daemon spacing",
            "control: greet hi",
            "absent",
            "broken shebang"
        ]
    );
    // The site, or the file for a mutant that names no site.
    assert_eq!(
        field("classname"),
        ["lib", "lib", "lib", "lib", "lib", "lib", "run-tests"]
    );
    let kinds: Vec<&str> = cases
        .iter()
        .map(|c| c["results"][0]["kind"].as_str().unwrap_or("passed"))
        .collect();
    assert_eq!(
        kinds,
        ["passed", "passed", "Failure", "passed", "Failure", "Skipped", "Error"]
    );
    let survivor = &cases[2]["results"][0];
    let message = survivor["message"].as_str().unwrap();
    assert!(message.starts_with("SURVIVED"), "{message}");
    assert!(message.contains("the claim of spawn <&> true"), "{message}");
    assert!(
        survivor["text"]
            .as_str()
            .unwrap()
            .contains("5 passed, 0 failed"),
        "the body is the log's tail: {survivor}"
    );
    let control = &cases[4]["results"][0];
    assert!(control["message"]
        .as_str()
        .unwrap()
        .starts_with("CONTROL KILLED"));
    assert!(control["text"]
        .as_str()
        .unwrap()
        .contains("FAIL: test_greet"));
    assert!(cases[5]["results"][0]["message"]
        .as_str()
        .unwrap()
        .contains("0 matches"));
    assert!(cases[6]["results"][0]["message"]
        .as_str()
        .unwrap()
        .contains("exit 127"));
    // The hang passes (the suite noticed) with its time, and its diff rides along.
    assert!(cases[1]["time"].as_f64().unwrap() >= 2.0, "{}", cases[1]);
    assert!(cases[1]["system_out"]
        .as_str()
        .unwrap()
        .contains("+spin() { while :; do :; done; }"));
}

#[test]
fn junit_of_a_red_baseline_is_a_failure_not_an_empty_green_file() {
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
    let Some(facts) = junit(&fx.out().join("junit.xml")) else {
        return;
    };
    assert_eq!(
        (&facts["tests"], &facts["failures"]),
        (&json!(1), &json!(1))
    );
    let result = &facts["cases"][0]["results"][0];
    assert!(result["message"]
        .as_str()
        .unwrap()
        .starts_with("BASELINE FAILED"));
    assert!(result["text"].as_str().unwrap().contains("FAIL: test_add"));
}

#[test]
fn mutants_json_of_a_run_a_merge_and_a_candidate_validates_and_a_renamed_field_does_not() {
    let fx = every_verdict();
    let out = fx.run(&["--format", "json"]);
    out.assert_exit(1);
    let report = fx.report();
    assert_eq!(report["version"], 1);
    let printed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(printed, report, "--format json prints mutants.json");
    let Some(errors) = schema_errors("mutants.schema.json", &report) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new());

    // Shards and their merge.
    let base = fx.out.path();
    for k in ["1/2", "2/2"] {
        let dir = base.join(format!("shard{}", &k[..1]));
        fx.cmd()
            .args(["run", "mutants.toml", "--shard", k, "--out"])
            .arg(&dir)
            .output()
            .map(Output::from)
            .unwrap();
        assert_eq!(
            schema_errors("mutants.schema.json", &report_in(&dir)).unwrap(),
            Vec::<String>::new()
        );
    }
    let merged = base.join("merged");
    let m = fx
        .cmd()
        .arg("merge")
        .args([base.join("shard1"), base.join("shard2")])
        .arg("--out")
        .arg(&merged)
        .output()
        .map(Output::from)
        .unwrap();
    m.assert_exit(1);
    let merged_report = report_in(&merged);
    assert_eq!(merged_report["shard"], Value::Null);
    assert_eq!(
        schema_errors("mutants.schema.json", &merged_report).unwrap(),
        Vec::<String>::new()
    );

    // A candidate run carries its candidate facts.
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let cfx = Fixture::new(spec);
    let (dir, _) = candidate(&cfx, true);
    let out = cfx.run(&[
        "--candidate",
        dir.path().join("gate.toml").to_str().unwrap(),
    ]);
    out.assert_exit(0);
    let cand = cfx.report();
    assert_eq!(cand["candidate"]["manifest_after"], "2/2 OK");
    assert_eq!(
        schema_errors("mutants.schema.json", &cand).unwrap(),
        Vec::<String>::new()
    );

    // Strict enough to catch a consumer-breaking change: a renamed field, top level or in a
    // row, and a missing version are refused.
    let mut renamed = report.clone();
    let tally = renamed.as_object_mut().unwrap().remove("tally").unwrap();
    renamed["totals"] = tally;
    assert!(!schema_errors("mutants.schema.json", &renamed)
        .unwrap()
        .is_empty());
    let mut nested = report.clone();
    let verdict = nested["mutants"][0]
        .as_object_mut()
        .unwrap()
        .remove("verdict")
        .unwrap();
    nested["mutants"][0]["outcome"] = verdict;
    assert!(!schema_errors("mutants.schema.json", &nested)
        .unwrap()
        .is_empty());
    let mut word = report.clone();
    word["mutants"][2]["verdict"] = json!("survived");
    assert!(!schema_errors("mutants.schema.json", &word)
        .unwrap()
        .is_empty());
    let mut no_version = report.clone();
    no_version.as_object_mut().unwrap().remove("version");
    assert!(!schema_errors("mutants.schema.json", &no_version)
        .unwrap()
        .is_empty());
    // The tree a report judges and each run's build time are required too.
    let mut no_tree = report.clone();
    no_tree.as_object_mut().unwrap().remove("tree");
    assert!(!schema_errors("mutants.schema.json", &no_tree)
        .unwrap()
        .is_empty());
    let mut no_build = report;
    no_build["mutants"][0]["run"]
        .as_object_mut()
        .unwrap()
        .remove("build_secs");
    assert!(!schema_errors("mutants.schema.json", &no_build)
        .unwrap()
        .is_empty());
}

#[test]
fn a_report_of_suites_with_build_steps_validates_with_their_build_times() {
    let spec = format!(
        "[suites.unit]\nbuild = \"sh -n lib.sh\"\nrun = \"sh test.sh\"\ntimeout = \"3s\"\n\n{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    assert!(report["baseline"][0]["build_secs"].as_f64().is_some());
    assert!(report["mutants"][0]["run"]["build_secs"].as_f64().is_some());
    let Some(errors) = schema_errors("mutants.schema.json", &report) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new());
    let mut negative = report;
    negative["baseline"][0]["build_secs"] = json!(-1.0);
    assert!(!schema_errors("mutants.schema.json", &negative)
        .unwrap()
        .is_empty());
}

#[test]
fn merge_refuses_a_report_of_another_version() {
    let fx = Fixture::new(&format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    ));
    assert_eq!(fx.run(&[]).exit(), 0);
    let path = fx.out().join("mutants.json");
    let mut report = fx.report();
    report["version"] = json!(99);
    fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
    fx.cmd()
        .arg("merge")
        .arg(fx.out())
        .arg("--out")
        .arg(fx.out.path().join("merged"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("version 99 is not 1"));
}

#[test]
fn markdown_is_a_facts_table_and_a_verdict_table_with_findings_in_bold_and_json_is_an_alias() {
    let fx = every_verdict();
    let out = fx.run(&["--format", "markdown"]);
    out.assert_exit(1);
    let md = out.stdout.clone();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "## mutants FAIL", "{md}");
    assert!(
        md.contains("| **verdict** | **FAIL**: 7 mutants: 1 killed, 1 killed (hang), 1 control held, 1 SURVIVED, 1 CONTROL KILLED, 1 skipped, 1 error |"),
        "{md}"
    );
    assert!(md.contains("| **spec** | `mutants.toml` (sha256 `"), "{md}");
    assert!(md.contains("| **baseline** | `unit` passed in "), "{md}");
    let header = lines
        .iter()
        .position(|l| l.starts_with("| Mutant | Site | What it undoes | Verdict |"))
        .unwrap_or_else(|| panic!("no verdict table: {md}"));
    let columns = lines[header].matches(" | ").count() + 1;
    assert!(lines[header + 1].starts_with("| --- | --- |"));
    let rows = &lines[header + 2..header + 9];
    for row in rows {
        // Escaped pipes aside, every row has the header's cells: no name can split a row.
        let cells = row.replace("\\|", "").matches(" | ").count() + 1;
        assert_eq!(cells, columns, "{row}");
    }
    assert!(rows[0].starts_with("| plus to minus | lib |"), "{md}");
    assert!(rows[0].contains("| killed |"), "{md}");
    // Markup in a name is text, not HTML; findings are bold, verdicts that hold are not.
    assert!(rows[2].starts_with("| spawn \\<&\\> true |"), "{md}");
    assert!(rows[2].contains("| **SURVIVED** |"), "{md}");
    assert!(rows[4].contains("| **CONTROL KILLED** |"), "{md}");
    assert!(rows[5].contains("| **skipped (0 matches)** |"), "{md}");
    assert!(rows[6].contains("| **error** |"), "{md}");
    assert!(rows[3].contains("| control held |"), "{md}");
    // The file on disk stays the text table.
    let txt = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(txt.starts_with("spec: mutants.toml"), "{txt}");

    // --json is --format json; both at once is a usage error.
    let json_flag = fx.run(&["--json", "--only", "plus to minus"]);
    let as_json: Value = serde_json::from_str(&json_flag.stdout).unwrap();
    assert_eq!(as_json, report_in(&fx.out()));
    let both = fx.run(&["--json", "--format", "markdown"]);
    both.assert_exit(2);
    // merge prints the same Markdown for joined shards.
    let m = fx
        .cmd()
        .arg("merge")
        .arg(fx.out())
        .args(["--format", "markdown", "--out"])
        .arg(fx.out.path().join("merged"))
        .output()
        .map(Output::from)
        .unwrap();
    // (The --only run above updated the report in place: its findings are still there.)
    assert!(m.stdout.starts_with("## mutants FAIL"));
}

/// Runs `mutants ARGS` under a pseudo-terminal (util-linux `script`), so stdout and stderr are
/// a terminal; everything it wrote there. `None` when `script` is missing.
fn on_a_terminal(fx: &Fixture, args: &str, env: &[(&str, &str)]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: util-linux `script` is not installed, so no pty test");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_mutants");
    let mut cmd = Command::new("script");
    testkit::hermetic(&mut cmd);
    cmd.current_dir(fx.repo.path())
        .args(["-q", "-e", "-c", &format!("{bin} {args}"), "/dev/null"])
        .env("TERM", "xterm")
        .env("PIDS", fx.pids.path())
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map(Output::from).unwrap();
    Some(out.stdout.clone())
}

#[test]
fn verdicts_are_coloured_on_a_terminal_or_when_asked_and_never_in_files_or_pipes() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("spawn true", "spawn() { :; }", "spawn() { true; }", "")
    );
    let fx = Fixture::new(&spec);
    let red = "\x1b[1;31mSURVIVED\x1b[0m";
    let green = "\x1b[1;32mkilled\x1b[0m";

    let piped = fx.run(&[]);
    assert!(!piped.stdout.contains('\x1b'));
    assert!(!piped.stderr.contains('\x1b'));
    let always = fx.run(&["--color", "always"]);
    let painted = always.stdout.clone();
    assert!(
        painted.contains(red) && painted.contains(green),
        "{painted:?}"
    );
    // Painted after alignment: the columns line up as in the plain table.
    let file = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(!file.contains('\x1b'), "files are never coloured: {file:?}");
    assert_eq!(report::color::strip(&painted), file);
    let err = always.stderr.as_str();
    // (Which finishes first depends on the order mutants are taken in: longest first once a
    // report in --out timed them.)
    assert!(err.contains(&format!("/2] {red}")), "{err:?}");

    let out = fx.out();
    let args = format!("run mutants.toml --out {}", out.display());
    let Some(tty) = on_a_terminal(&fx, &args, &[]) else {
        return;
    };
    assert!(tty.contains(red), "auto colours a terminal: {tty:?}");
    let no_color = on_a_terminal(&fx, &args, &[("NO_COLOR", "1")]).unwrap();
    assert!(
        no_color.contains("SURVIVED") && !no_color.contains(red),
        "{no_color:?}"
    );
    let never = on_a_terminal(&fx, &format!("{args} --color never"), &[]).unwrap();
    assert!(!never.contains(red), "{never:?}");
}

#[test]
fn a_running_mutant_ticks_its_seconds_on_a_terminal_and_gets_plain_lines_elsewhere() {
    let spec = format!(
        "{}{}",
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n",
        mutant("slow", "spin() { :; }", "spin() { sleep 2.6; }", "")
    );
    let fx = Fixture::new(&spec);
    let plain = fx.run(&[]);
    let err = plain.stderr.as_str();
    assert!(err.contains("[1/1] SURVIVED"), "{err}");
    assert!(!err.contains('\r'), "no redraws off a terminal: {err:?}");

    let args = format!("run mutants.toml --out {}", fx.out().display());
    let Some(tty) = on_a_terminal(&fx, &args, &[]) else {
        return;
    };
    for tick in ["running slow (1s)", "running slow (2s)"] {
        assert!(tty.contains(tick), "no {tick:?} in {tty:?}");
    }
    assert!(tty.contains("0 killed, 0 survived"), "{tty:?}");
    // Back to the line's start and erase it (indicatif erases the whole line, `ESC [ 2 K`).
    assert!(
        tty.contains("\r\x1b[K") || tty.contains("\r\x1b[2K"),
        "the live line is redrawn in place: {tty:?}"
    );
}

#[test]
fn version_completions_and_man_pages_come_from_the_command_line_definitions() {
    let mutants = || testkit::bin(env!("CARGO_BIN_EXE_mutants"));
    let version = mutants()
        .arg("--version")
        .output()
        .map(Output::from)
        .unwrap();
    assert_eq!(
        version.stdout.as_str(),
        format!("mutants {}\n", env!("CARGO_PKG_VERSION"))
    );
    let bash = mutants()
        .args(["completions", "bash"])
        .output()
        .map(Output::from)
        .unwrap();
    assert!((bash.code == Some(0)));
    let script = bash.stdout.clone();
    for word in [
        "run",
        "check",
        "list",
        "merge",
        "completions",
        "man",
        "--shard",
        "--format",
        "markdown",
    ] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    testkit::assert_bash_completion("mutants", &script);
    let dir = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish"] {
        let out = mutants()
            .args(["completions", shell])
            .output()
            .map(Output::from)
            .unwrap();
        assert!(
            (out.code == Some(0)) && out.stdout.contains("shard"),
            "{shell}"
        );
    }

    let man = mutants().arg("man").output().map(Output::from).unwrap();
    assert!(man.stdout.contains(".TH mutants 1"));
    let pages = dir.path().join("man");
    mutants()
        .args(["man", "--out"])
        .arg(&pages)
        .assert()
        .success();
    for page in [
        "mutants.1",
        "mutants-run.1",
        "mutants-check.1",
        "mutants-list.1",
        "mutants-merge.1",
    ] {
        assert!(pages.join(page).is_file(), "{page}");
    }
    if Command::new("groff").arg("--version").output().is_err() {
        eprintln!("SKIP: groff is not installed, so the man page was not rendered");
        return;
    }
    let rendered = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(pages.join("mutants-run.1"))
        .output()
        .map(Output::from)
        .unwrap();
    assert!((rendered.code == Some(0)));
    let text = rendered.stdout.as_str();
    assert!(
        text.contains("mutants-run") && text.contains("--shard"),
        "{text}"
    );
    assert!(
        rendered.stderr.is_empty(),
        "groff warned: {}",
        rendered.stderr.as_str()
    );
}

/// Headless Chromium on `url`: `--dump-dom` (the DOM after the page's script ran) when
/// `screenshot` is `None`, else a 1280x900 screenshot into it. `None` when chromium is absent.
fn chromium(url: &str, screenshot: Option<&Path>) -> Option<String> {
    let bin = Path::new("/usr/bin/chromium");
    if !bin.exists() {
        eprintln!("SKIP: /usr/bin/chromium is absent (scripts/install-chromium.sh installs it), so mutants.html was not rendered");
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = assert_cmd::Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .timeout(std::time::Duration::from_secs(60));
    match screenshot {
        Some(png) => cmd.arg(format!("--screenshot={}", png.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(url).output().map(Output::from).unwrap();
    assert!(
        (out.code == Some(0)),
        "chromium failed: {}",
        out.stderr.as_str()
    );
    Some(out.stdout.clone())
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn mutants_html_renders_in_headless_chromium_with_its_table_diffs_and_a_working_survivor_filter() {
    let fx = every_verdict();
    let out = fx.run(&[]);
    out.assert_exit(1);
    let page = fx.out().join("mutants.html");
    let url = format!("file://{}", page.display());

    let png = fx.out.path().join("mutants.png");
    let Some(_) = chromium(&url, Some(&png)) else {
        return;
    };
    let bytes = fs::read(&png).unwrap();
    assert_eq!(png_size(&bytes), (1280, 900));
    // A blank page compresses to a few kilobytes; badges, a table and text do not.
    assert!(
        bytes.len() > 30_000,
        "a suspiciously small screenshot: {} bytes",
        bytes.len()
    );

    let dom = chromium(&url, None).unwrap();
    assert!(
        dom.contains("<th>Mutant</th>") && dom.contains("<th>Verdict</th>"),
        "{dom}"
    );
    for verdict in EVERY_VERDICT {
        assert!(
            dom.contains(&format!(">{verdict}</span>")),
            "no {verdict} badge"
        );
    }
    // The swap as a diff, escaped, one click away, and the survivor's already unfolded.
    assert!(
        dom.contains("<span class=\"del\">-spawn() { :; }</span>"),
        "{dom}"
    );
    assert!(
        dom.contains("<span class=\"add\">+spawn() { true; }</span>"),
        "{dom}"
    );
    assert!(dom.contains("spawn &lt;&amp;&gt; true"), "{dom}");
    assert!(
        dom.contains("<details open=\"\"><summary>diff and log"),
        "{dom}"
    );
    // The script ran: the filter is shown, with every row.
    assert!(dom.contains("showing 7 of 7"), "{dom}");
    assert!(!dom.contains("<nav class=\"filter\" hidden"), "{dom}");
    assert_eq!(dom.matches("<tbody class=\"mutant").count(), 7);
    assert_eq!(dom.matches("hidden=\"\"").count(), 0);

    // #survivors leaves only the survivor; #findings the four findings.
    let survivors = chromium(&format!("{url}#survivors"), None).unwrap();
    assert!(survivors.contains("showing 1 of 7"), "{survivors}");
    assert!(survivors.contains("data-filter=\"survivors\""));
    let shown: Vec<&str> = survivors
        .split("<tbody ")
        .skip(1)
        .filter(|tb| !tb.split('>').next().unwrap().contains("hidden"))
        .collect();
    assert_eq!(shown.len(), 1);
    assert!(
        shown[0].contains("data-verdict=\"survived\""),
        "{}",
        shown[0]
    );
    let findings = chromium(&format!("{url}#findings"), None).unwrap();
    assert!(findings.contains("showing 4 of 7"), "{findings}");
}

#[test]
fn mutants_txt_keeps_within_120_columns_with_long_names_claims_and_failed_tests() {
    // A name and a claim of the length the project's own seeds have, and a suite that names
    // long failed tests the way pytest does.
    let name = "persisted output keeps its preview short and names the saved file";
    let claim = "a short preview beside a save note is `saved` (Claude Code's persisted-output), a long head `truncated+saved`";
    let spec = format!(
        "{SUITE}[[mutant]]\nname = \"{name}\"\nsite = \"lib\"\nfile = \"lib.sh\"\n\
         anchor = '''$1 + $2'''\nreplace = '''$1 - $2'''\nundoes = \"{claim}\"\nsuite = \"unit\"\n"
    );
    let fx = Fixture::new(&spec);
    let mut test = String::from(
        ". ./lib.sh\nif [ \"$(add 2 3)\" = 5 ]; then echo '42 passed in 0.10s'; exit 0; fi\n",
    );
    for i in 0..3 {
        test.push_str(&format!(
            "echo 'FAILED tests/test_persisted_output_preview.py::TestPreviewOfSavedOutput::test_a_long_head_is_truncated_and_saved_{i} - assert False'\n"
        ));
    }
    test.push_str("echo '3 failed, 39 passed in 0.10s'\nexit 1\n");
    fx.repo.write("test.sh", &test);
    fx.repo.commit_all("long names");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let txt = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    for l in txt.lines() {
        assert!(
            l.chars().count() <= 120,
            "{} columns: {l}\n{txt}",
            l.chars().count()
        );
    }
    let flat = txt.split_whitespace().collect::<Vec<_>>().join(" ");
    // The counts and failed tests follow under the table, on the mutant's line.
    assert!(
        flat.contains(&format!("{name} Counts: 42 pass -> 39 passed, 3 failed; Failed tests: tests/test_persisted_output_preview.py::TestPreviewOfSavedOutput::test_a_long_head_is_truncated_and_saved_0")),
        "{txt}"
    );
    for word in claim.split(' ') {
        assert!(flat.contains(word), "{word} missing:\n{txt}");
    }
    // Markdown and HTML keep every column.
    let md = fx.run(&["--format", "markdown"]).stdout;
    assert!(
        md.contains("| Counts | Time | Exit | Strays | Failed tests |"),
        "{md}"
    );
    assert!(md.contains(r"| 42 pass -\> 39 passed, 3 failed |"), "{md}");
    assert!(
        md.contains(r"test\_a\_long\_head\_is\_truncated\_and\_saved\_2 |"),
        "{md}"
    );
    let html = fs::read_to_string(fx.out().join("mutants.html")).unwrap();
    assert!(
        html.contains("test_a_long_head_is_truncated_and_saved_2"),
        "no failed test in the HTML"
    );
}
