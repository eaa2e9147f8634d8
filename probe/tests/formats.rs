//! `probe bracket` and `probe check` reports where reviewers read them: results.json validated
//! by Python's `jsonschema` against docs/schema/results.schema.json (from real runs against a
//! stdio client, `probe test-client`), Markdown, colour only where asked, progress per point on a real pty, and
//! `--version`, completions and man pages from the clap definitions.
//!
//! Without python3 or jsonschema the schema test skips with a notice, except under CI (`CI` set),
//! where that is a failure: `.ci/run` installs jsonschema.

use crate::common::PROBE;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use testkit::schema_errors;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("saved")).unwrap();
        Fixture { dir }
    }

    /// A stdio MCP client with a limit (`probe test-client`, saying it is limit-client 1.2.3):
    /// prints the text when it is at most LIMIT units, a spill message otherwise; it waits
    /// DELAY seconds first, so progress has something to show.
    fn client(&self, limit: u64, delay: f64) -> String {
        format!(
            "{PROBE} test-client --limit {limit} --mcp-config {{mcp_config}} --n {{n}} --delay {}ms \
             --saved-dir {} --client-name limit-client --client-version 1.2.3",
            (delay * 1000.0).round() as u64,
            self.dir.path().join("saved").display()
        )
    }

    fn out(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs probe with `args` and `--out OUT`; returns the exit code, stdout and stderr.
    fn probe(&self, args: &[&str], out: &Path) -> (i32, String, String) {
        let o = testkit::bin(PROBE)
            .args(args)
            .arg("--out")
            .arg(out)
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    fn results(&self, out: &Path) -> Value {
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    }
}

#[test]
fn results_json_of_bracket_bisect_and_check_validates_and_a_renamed_field_does_not() {
    let f = Fixture::new();
    let client = f.client(120, 0.0);
    let points = f.out("points");
    let (code, _, err) = f.probe(
        &["bracket", "--client", &client, "--points", "100,120,121"],
        &points,
    );
    assert_eq!(code, 0, "{err}");
    let bracket = f.results(&points);
    assert_eq!(bracket["version"], 1);
    let bisect = f.out("bisect");
    let (code, _, err) = f.probe(
        &["bracket", "--client", &client, "--bisect", "100..140"],
        &bisect,
    );
    assert_eq!(code, 0, "{err}");
    let check = f.out("check");
    let (code, _, err) = f.probe(&["check", "--client", &client, "--expect", "120"], &check);
    assert_eq!(code, 0, "{err}");
    let check = f.results(&check);
    assert_eq!(check["check"]["held"], true);
    // The unit's fields: a bisection with every fill, and a check that names a unit.
    let units = f.out("units");
    let (code, _, err) = f.probe(
        &[
            "bracket", "--client", &client, "--bisect", "100..140", "--units",
        ],
        &units,
    );
    assert_eq!(code, 0, "{err}");
    let units = f.results(&units);
    assert_eq!(units["units"]["inference"]["unit"], "utf16", "{units:#}");
    assert_eq!(units["units"]["inference"]["limit"], 120);
    let unit_check = f.out("unit-check");
    let (code, out, err) = f.probe(
        &["check", "--client", &client, "--expect", "120utf16"],
        &unit_check,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("suggested cap: 96 utf16 (120 less 20%)"),
        "{out}"
    );
    let unit_check = f.results(&unit_check);
    assert_eq!(unit_check["check"]["unit"], "utf16");
    assert_eq!(unit_check["check"]["unit_held"], true);
    for doc in [&bracket, &f.results(&bisect), &check, &units, &unit_check] {
        let Some(errors) = schema_errors("results.schema.json", doc) else {
            return;
        };
        assert_eq!(errors, Vec::<String>::new(), "{doc:#}");
    }
    let mut renamed = check.clone();
    let t = renamed
        .as_object_mut()
        .unwrap()
        .remove("threshold")
        .unwrap();
    renamed["thresholds"] = t;
    assert!(!schema_errors("results.schema.json", &renamed)
        .unwrap()
        .is_empty());
    let mut point = bracket.clone();
    let v = point["points"][0]
        .as_object_mut()
        .unwrap()
        .remove("verdict")
        .unwrap();
    point["points"][0]["result"] = v;
    assert!(!schema_errors("results.schema.json", &point)
        .unwrap()
        .is_empty());
    let mut verdict = bracket;
    verdict["points"][0]["verdict"] = "fine".into();
    assert!(!schema_errors("results.schema.json", &verdict)
        .unwrap()
        .is_empty());
}

#[test]
fn check_prints_markdown_with_its_verdict_facts_and_points_and_json_is_an_alias() {
    let f = Fixture::new();
    let client = f.client(120, 0.0);
    let out = f.out("md");
    let (code, md, err) = f.probe(
        &[
            "check", "--client", &client, "--expect", "120", "--format", "markdown",
        ],
        &out,
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "## probe check: held", "{md}");
    assert!(
        md.contains("| **version** | `limit-client 1.2.3` |"),
        "{md}"
    );
    assert!(
        md.contains("| **threshold** | inline up to 120, saved from 121 |"),
        "{md}"
    );
    assert!(
        md.contains("| **suggested cap** | 96 units (120 less 20%) |"),
        "{md}"
    );
    let header = lines
        .iter()
        .position(|l| l.starts_with("| n | verdict |"))
        .unwrap_or_else(|| panic!("no points table: {md}"));
    assert!(lines[header + 2].starts_with("| 120 | inline |"), "{md}");
    assert!(lines[header + 3].starts_with("| 121 | saved |"), "{md}");
    let text = fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(text.contains("check: held"), "the file stays text: {text}");

    let (moved, md, _) = f.probe(
        &[
            "check", "--client", &client, "--expect", "110", "--format", "markdown",
        ],
        &f.out("moved"),
    );
    assert_eq!(moved, 1);
    assert!(md.starts_with("## probe check: MOVED\n"), "{md}");

    let (_, json_flag, _) = f.probe(
        &["check", "--client", &client, "--expect", "120", "--json"],
        &out,
    );
    let (_, json_format, _) = f.probe(
        &[
            "check", "--client", &client, "--expect", "120", "--format", "json",
        ],
        &out,
    );
    let keys = |s: &str| -> Vec<String> {
        let v: Value = serde_json::from_str(s).unwrap();
        v.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(keys(&json_flag), keys(&json_format));
    let (both, _, _) = f.probe(
        &[
            "check", "--client", &client, "--expect", "120", "--json", "--format", "text",
        ],
        &out,
    );
    assert_eq!(both, 2);
}

#[test]
fn the_check_verdict_is_coloured_only_when_asked_and_never_in_the_files() {
    let f = Fixture::new();
    let client = f.client(120, 0.0);
    let out = f.out("c");
    let (_, plain, _) = f.probe(&["check", "--client", &client, "--expect", "120"], &out);
    assert!(!plain.contains('\x1b'), "a pipe gets no colour");
    let (_, painted, _) = f.probe(
        &[
            "--color", "always", "check", "--client", &client, "--expect", "120",
        ],
        &out,
    );
    assert!(
        painted.contains("check: \x1b[1;32mheld\x1b[0m, inline up to 120"),
        "{painted:?}"
    );
    let file = fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(!file.contains('\x1b'));
    assert_eq!(report::color::strip(&painted), file);
}

#[test]
fn each_point_ticks_its_seconds_on_a_terminal_and_gets_a_plain_line_elsewhere() {
    let f = Fixture::new();
    let client = f.client(120, 2.3);
    let out = f.out("slow");
    let (code, _, err) = f.probe(&["bracket", "--client", &client, "--points", "100"], &out);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("[1/1] n=100\n"), "{err}");
    assert!(!err.contains('\r'), "{err:?}");
    if Command::new("script").arg("--version").output().is_err() {
        testkit::skip(
            "script",
            "util-linux `script` is not installed, so no pty test",
        );
        return;
    }
    let line = format!(
        "{PROBE} bracket --client '{client}' --points 100 --out {}",
        out.display()
    );
    let mut cmd = Command::new("script");
    testkit::hermetic(&mut cmd);
    let tty = cmd
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(f.dir.path())
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&tty.stdout);
    for tick in ["n=100 (0s)", "n=100 (1s)", "n=100 (2s)"] {
        assert!(tty.contains(tick), "no {tick:?} in {tty:?}");
    }
}

#[test]
fn version_completions_and_man_pages_come_from_the_command_line_definitions() {
    let run = |args: &[&str]| {
        let o = testkit::bin(PROBE).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(
        run(&["--version"]),
        format!("probe {}\n", env!("CARGO_PKG_VERSION"))
    );
    let bash = run(&["completions", "bash"]);
    for sub in [
        "serve",
        "call",
        "model",
        "bracket",
        "check",
        "completions",
        "man",
    ] {
        assert!(bash.contains(sub), "bash completion lacks {sub}");
    }
    assert!(bash.contains("--expect") && bash.contains("markdown"));
    testkit::assert_bash_completion("probe", &bash);
    let dir = tempfile::tempdir().unwrap();
    assert!(run(&["completions", "zsh"]).contains("bracket"));
    assert!(run(&["completions", "fish"]).contains("bracket"));
    assert!(run(&["man"]).contains(".TH probe 1"));
    let pages = dir.path().join("man");
    run(&["man", "--out", pages.to_str().unwrap()]);
    let page = fs::read_to_string(pages.join("probe-check.1")).unwrap();
    assert!(page.contains(".TH probe-check") && page.contains("expect"));
    if Command::new("groff").arg("--version").output().is_ok() {
        let r = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
            .arg(pages.join("probe-check.1"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(
            text.contains("\nNAME\n") && text.contains("--expect"),
            "{text}"
        );
        assert!(
            r.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
}

/// Every workflow's `run:` scripts joined; exit 3 without PyYAML.
const WORKFLOW_RUNS: &str = r#"
import glob, json, os, sys
try:
    import yaml
except ImportError:
    sys.exit(3)
runs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.yml"))):
    for job in yaml.safe_load(open(path))["jobs"].values():
        runs += [step["run"] for step in job["steps"] if "run" in step]
print(json.dumps(runs))
"#;

#[test]
fn every_probe_command_in_the_workflows_exists_as_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(".github/workflows");
    let out = Command::new("python3")
        .arg("-c")
        .arg(WORKFLOW_RUNS)
        .arg(&dir)
        .output()
        .unwrap();
    if out.status.code() == Some(3) {
        testkit::skip(
            "pyyaml",
            "PyYAML is not installed, so the workflow was not parsed",
        );
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let call = regex::Regex::new(r"(?m)(?:^|[;|&]\s*)probe\s+([a-z]+)([^|;&>\n]*)").unwrap();
    let mut calls = 0;
    for run in &runs {
        for c in call.captures_iter(&run.replace("\\\n", " ")) {
            calls += 1;
            let sub = &c[1];
            let help = testkit::bin(PROBE).args([sub, "--help"]).output().unwrap();
            assert!(help.status.success(), "probe {sub} does not exist");
            let help = String::from_utf8_lossy(&help.stdout);
            for flag in c[2].split_whitespace().filter(|a| a.starts_with("--")) {
                let flag = flag.split('=').next().unwrap();
                assert!(help.contains(flag), "probe {sub} has no {flag}");
            }
            if sub == "clients" {
                assert!(
                    !c[2].contains("--only"),
                    "the weekly matrix runs every client"
                );
            }
            if sub == "check" {
                assert!(c[2].contains("--expect 50000") && c[2].contains("--client claude"));
            }
        }
    }
    assert_eq!(
        calls, 2,
        "the scheduled check runs probe check once, the weekly matrix probe clients once"
    );
}

#[test]
fn clients_json_validates_with_a_row_per_preset_even_when_none_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // An empty clients cache and a PATH with no client on it: every row is `not_installed`.
    let run = testkit::Output::of(
        testkit::bin(PROBE)
            .args(["clients", "--json", "--out"])
            .arg(&out)
            .env("GATEKIT_CLIENTS_CACHE", dir.path().join("cache"))
            .env("HOME", dir.path())
            .env("PATH", "/nonexistent")
            .current_dir(dir.path()),
    );
    run.assert_exit(4);
    // Why 4, on stderr whatever the format; stdout holds the JSON alone.
    assert!(
        run.stderr.contains(
            "probe: no client could be measured (scripts/install-clients.sh installs them)\n"
        ),
        "{run}"
    );
    let doc: Value =
        serde_json::from_str(&fs::read_to_string(out.join("clients.json")).unwrap()).unwrap();
    assert_eq!(doc, serde_json::from_str::<Value>(&run.stdout).unwrap());
    let rows = doc["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["client"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["claude", "codex", "gemini", "qwen", "opencode", "cline", "copilot", "continue"]
    );
    assert!(
        rows.iter().all(|r| r["status"] == "not_installed"),
        "{doc:#}"
    );
    assert!(fs::read_to_string(out.join("clients.txt"))
        .unwrap()
        .contains("not installed"));
    let Some(errors) = schema_errors("clients.schema.json", &doc) else {
        return;
    };
    assert_eq!(errors, Vec::<String>::new(), "{doc:#}");
    let mut extra = doc.clone();
    extra["rows"][0]["limits"] = 5.into();
    assert!(!schema_errors("clients.schema.json", &extra)
        .unwrap()
        .is_empty());
}

/// Every environment variable probe reads or hands a client is in the book's Environment table:
/// the names are taken from the sources (`env::var("NAME")`, `.env("NAME", ...)`), so a new one
/// without a line in the book fails here.
#[test]
fn every_environment_variable_probe_reads_is_in_the_book() {
    let root = testkit::workspace();
    let book = fs::read_to_string(root.join("docs/book/src/probe.md")).unwrap();
    let table = book
        .split("## Environment")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("probe.md has an Environment section");
    let named = regex::Regex::new(r#"(?:env::var(?:_os)?|\.env)\("([A-Z][A-Z0-9_]+)""#).unwrap();
    let mut names = std::collections::BTreeSet::new();
    let mut sources: Vec<std::path::PathBuf> = vec![root.join("report/src/color.rs")];
    let mut dirs = vec![root.join("probe/src")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(path);
            }
        }
    }
    for path in sources {
        let text = fs::read_to_string(&path).unwrap();
        // Tests' own variables are not the user's.
        let text = text.split("#[cfg(test)]").next().unwrap();
        for c in named.captures_iter(text) {
            names.insert(c[1].to_string());
        }
    }
    assert!(names.len() >= 8, "{names:?}");
    for name in &names {
        assert!(
            table.contains(&format!("`{name}`")),
            "{name} is read by probe but not in the book's Environment table"
        );
    }
}
