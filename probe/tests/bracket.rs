//! `probe bracket` and `probe check` against small test clients with known limits (the modes of
//! `probe test-client`): one that spills to a file over its limit, one that cuts, one that never
//! calls the tool, one that hangs.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("saved")).unwrap();
        Fixture { dir }
    }

    /// `probe test-client` in `mode` with `limit`, saying it is test-client 9.9.9; `custom` is
    /// the spill mode with a message the default spill patterns do not know.
    fn client(&self, mode: &str, limit: u64) -> String {
        let (mode, message) = match mode {
            "spill" => ("spill", "Output has been saved to /tmp/tool-result-{n}.txt"),
            "custom" => ("spill", "RESULT TOO BIG, parked in a file"),
            other => (other, ""),
        };
        let message = if message.is_empty() {
            String::new()
        } else {
            format!(" --spill-message '{message}'")
        };
        format!(
            "{PROBE} test-client --mode {mode} --limit {limit} --mcp-config {{mcp_config}} --n {{n}} \
             --saved-dir {} --client-name test-client --client-version 9.9.9{message}",
            self.dir.path().join("saved").display()
        )
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn probe(&self, args: &[&str]) -> (i32, String, Value) {
        let out = testkit::bin(PROBE)
            .args(args)
            .arg("--out")
            .arg(self.out())
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        let results = std::fs::read_to_string(self.out().join("results.json"))
            .unwrap_or_else(|_| "null".into());
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            serde_json::from_str(&results).unwrap(),
        )
    }
}

fn verdicts(results: &Value) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = results["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["n"].as_u64().unwrap(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn pairs(list: &[(u64, &str)]) -> Vec<(u64, String)> {
    list.iter().map(|(n, v)| (*n, v.to_string())).collect()
}

#[test]
fn bracket_finds_a_client_that_spills_over_its_limit() {
    let f = Fixture::new();
    let (code, text, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("spill", 100),
        "--points",
        "90,100,101,150",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        verdicts(&r),
        pairs(&[
            (90, "inline"),
            (100, "inline"),
            (101, "saved"),
            (150, "saved")
        ])
    );
    assert_eq!(r["threshold"]["text"], "inline up to 100, saved from 101");
    assert_eq!(r["threshold"]["exact"], true);
    let saved = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["n"] == 101)
        .unwrap();
    assert_eq!(
        saved["message"],
        "Output has been saved to /tmp/tool-result-101.txt"
    );
    // The client's version comes from what it said in MCP initialize.
    assert_eq!(r["client"]["mcp_client"]["version"], "9.9.9");
    let txt = std::fs::read_to_string(f.out().join("results.txt")).unwrap();
    assert!(
        txt.contains("threshold: inline up to 100, saved from 101"),
        "{txt}"
    );
    assert!(txt.contains("test-client 9.9.9"), "{txt}");
    assert!(r["started"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn bracket_calls_a_cut_truncated() {
    let f = Fixture::new();
    let (code, _, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("cut", 100),
        "--around",
        "100",
        "--step",
        "20",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&r),
        pairs(&[(80, "inline"), (100, "inline"), (120, "truncated")])
    );
    assert_eq!(
        r["threshold"]["text"],
        "inline up to 100, truncated from 120"
    );
    assert_eq!(r["threshold"]["exact"], false);
}

#[test]
fn bracket_reports_a_client_that_never_calls_the_tool() {
    let f = Fixture::new();
    let (code, _, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("never", 100),
        "--points",
        "100,200",
    ]);
    assert_eq!(code, 1, "not called is a finding");
    assert_eq!(
        verdicts(&r),
        pairs(&[(100, "not called"), (200, "not called")])
    );
}

#[test]
fn bisect_pins_the_exact_threshold_in_about_log2_runs() {
    let f = Fixture::new();
    let (code, text, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("spill", 1337),
        "--bisect",
        "100..5000",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["threshold"]["text"], "inline up to 1337, saved from 1338");
    let runs = r["points"].as_array().unwrap().len();
    // 2 ends + ceil(log2(4900)) = 2 + 13.
    assert!(runs <= 15, "{runs} runs");
}

/// Each way a client can change a result over its limit, at a limit the test does not tell
/// probe: `--bisect` finds the limit to the unit and the point above it names the shape. The
/// substitution and the repeat keep the length exact, so only a comparison can find them.
#[test]
fn bisect_finds_each_hidden_limit_and_names_the_shape() {
    let cases = [
        ("cut-middle", 2345, "cut", "middle", "removed"),
        ("cut", 1789, "truncated", "end", "removed"),
        ("substitute", 3001, "cut", "middle", "substituted"),
        ("repeat", 2222, "cut", "middle", "repeated"),
        ("spill", 1234, "saved", "whole", "removed"),
    ];
    for (mode, limit, verdict, place, change) in cases {
        let f = Fixture::new();
        let (code, text, r) = f.probe(&[
            "bracket",
            "--client",
            &f.client(mode, limit),
            "--bisect",
            "1000..4000",
        ]);
        assert_eq!(code, 0, "{mode}: {text}");
        assert_eq!(
            r["threshold"]["text"],
            format!("inline up to {limit}, {verdict} from {}", limit + 1),
            "{mode}"
        );
        let points = r["points"].as_array().unwrap();
        let over = points.iter().find(|p| p["n"] == limit + 1).unwrap();
        let shape = &over["shape"];
        assert_eq!(shape["where"], place, "{mode}: {over}");
        assert_eq!(shape["change"], change, "{mode}: {over}");
        for p in points {
            let inline = p["verdict"] == "inline";
            assert_eq!(inline, p["n"].as_u64().unwrap() <= limit, "{mode}: {p}");
            assert_eq!(inline, p["shape"].is_null(), "{mode}: {p}");
        }
        if mode == "cut-middle" {
            // The client's own note, quoted, and where the middle went.
            assert_eq!(shape["note"], "\"... 1 tokens truncated ...\"", "{over}");
            assert_eq!(shape["head_units"], limit / 2);
            assert_eq!(shape["tail_units"], limit / 2);
            let message = over["message"].as_str().unwrap();
            assert!(message.contains("cut in the middle"), "{message}");
        }
        // Where it first differs: the substitution at LIMIT/2, the repeat 100 units on (a run
        // of `x`s between stamps may match a little further).
        let changed_at = match mode {
            "substitute" => Some(limit / 2),
            "repeat" => Some(limit / 2 + 100),
            _ => None,
        };
        if let Some(at) = changed_at {
            let first = shape["first_difference"].as_u64().unwrap();
            assert!(
                (at..at + 64).contains(&first),
                "{mode}: {first} not at {at}"
            );
        }
    }
}

#[test]
fn bisect_says_when_the_threshold_is_outside_the_range() {
    let f = Fixture::new();
    let (code, text, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("spill", 100),
        "--bisect",
        "200..300",
    ]);
    assert_eq!(code, 1);
    assert_eq!(r["bisect"]["held"], false);
    assert!(text.contains("not in 200..300"), "{text}");
    assert_eq!(verdicts(&r).len(), 2);
}

#[test]
fn spill_patterns_are_settable() {
    let f = Fixture::new();
    let client = f.client("custom", 100);
    let (_, _, r) = f.probe(&["bracket", "--client", &client, "--points", "100,101"]);
    assert_eq!(verdicts(&r), pairs(&[(100, "inline"), (101, "truncated")]));
    let (_, _, r) = f.probe(&[
        "bracket",
        "--client",
        &client,
        "--points",
        "100,101",
        "--spill-pattern",
        "parked in a file",
    ]);
    assert_eq!(verdicts(&r), pairs(&[(100, "inline"), (101, "saved")]));
}

#[test]
fn a_hanging_client_is_an_error_never_a_verdict() {
    let f = Fixture::new();
    let (code, _, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("hang", 100),
        "--points",
        "100",
        "--timeout",
        "1s",
    ]);
    assert_eq!(code, 4, "no point could be judged");
    assert_eq!(verdicts(&r), pairs(&[(100, "error")]));
    assert!(r["points"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("hang"));
}

#[test]
fn check_holds_at_the_known_limit_and_suggests_a_cap() {
    let f = Fixture::new();
    let (code, text, r) = f.probe(&[
        "check",
        "--expect",
        "500",
        "--client",
        &f.client("spill", 500),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("suggested cap: 400 units"), "{text}");
    assert_eq!(r["check"]["held"], true);
    assert_eq!(r["check"]["suggested_cap"], 400);
}

/// A limit in tokens or in lines is checked in its unit: `--expect 500tokens` runs the n whose
/// text is 500 estimated tokens (one per four units) and the n one token over.
#[test]
fn check_takes_a_limit_in_tokens_or_lines() {
    let f = Fixture::new();
    let tokens = format!("{} --limit-unit tokens", f.client("spill", 500));
    let (code, text, r) = f.probe(&["check", "--expect", "500tokens", "--client", &tokens]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["check"]["unit"], "tokens");
    assert_eq!(r["check"]["measured"], 500);
    assert!(text.contains("suggested cap: 400 tokens"), "{text}");
    let ns: Vec<u64> = verdicts(&r).iter().map(|(n, _)| *n).collect();
    assert_eq!(ns, [2000, 2001], "500 tokens are 2000 units");
    // Expected one token lower, the client's limit is found where it moved to.
    let (code, text, r) = f.probe(&["check", "--expect", "499tokens", "--client", &tokens]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(r["check"]["measured"], 500, "{text}");

    let lines = format!("{} --limit-unit lines", f.client("spill", 30));
    let (code, text, r) = f.probe(&["check", "--expect", "30lines", "--client", &lines]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["check"]["measured"], 30);
    assert!(r["points"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["fill"] == "lines"));
    let (code, _, _) = f.probe(&["check", "--expect", "31lines", "--client", &lines]);
    assert_eq!(code, 1);
}

#[test]
fn check_exits_1_when_the_threshold_moved_and_finds_where() {
    let f = Fixture::new();
    let (code, text, r) = f.probe(&[
        "check",
        "--expect",
        "500",
        "--client",
        &f.client("spill", 700),
        "--margin",
        "10%",
    ]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(r["check"]["held"], false);
    assert_eq!(r["threshold"]["text"], "inline up to 700, saved from 701");
    assert_eq!(r["check"]["suggested_cap"], 630);
    let (code, _, r) = f.probe(&[
        "check",
        "--expect",
        "500",
        "--client",
        &f.client("spill", 321),
    ]);
    assert_eq!(code, 1);
    assert_eq!(r["threshold"]["text"], "inline up to 321, saved from 322");
}

#[test]
fn bad_usage_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for args in [
        vec!["bracket", "--client", "true", "--bisect", "5..5"],
        vec!["bracket", "--client", "true", "--points", "1,x"],
        vec!["bracket", "--client", "true"],
        vec![
            "check", "--expect", "5", "--client", "true", "--margin", "150%",
        ],
        vec![
            "bracket",
            "--client",
            "true",
            "--points",
            "1",
            "--spill-pattern",
            "(",
        ],
    ] {
        let o = testkit::bin(PROBE)
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.trim().is_empty() && !err.contains("panicked"), "{err}");
        assert!(!Path::new(&out).exists(), "{args:?} wrote output");
    }
}

#[test]
fn a_preset_client_runs_with_a_scratch_home_and_temp_dir_that_go_with_the_run() {
    let f = Fixture::new();
    // A stand-in for the real claude: it records what it was given and leaves a file in its
    // temp dir, as real clients do (opencode makes `$TMPDIR/opencode`), for `--version` and
    // for the point alike, a line each.
    let seen = f.dir.path().join("seen");
    let bin = f.dir.path().join("fake-claude");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\n[ -d \"$TMPDIR\" ] && echo made > \"$TMPDIR/left-by-the-client\"\n\
             echo \"$HOME $TMPDIR\" >> '{}'\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (_, out, _) = f.probe(&[
        "bracket",
        "--client",
        "claude",
        "--bin",
        bin.to_str().unwrap(),
        "--points",
        "10",
    ]);
    let seen = std::fs::read_to_string(&seen).unwrap_or_else(|_| panic!("not run: {out}"));
    let runs: Vec<&str> = seen.lines().collect();
    assert_eq!(runs.len(), 2, "--version and one point: {seen}");
    for run in runs {
        let (home, tmp) = run
            .split_once(' ')
            .unwrap_or_else(|| panic!("no TMPDIR given: {run:?}"));
        assert!(home.contains("probe-home-"), "not a scratch HOME: {run}");
        assert_eq!(Path::new(tmp), Path::new(home).join("tmp"), "{run}");
        assert!(
            !Path::new(home).exists(),
            "the scratch HOME, and what the client left in its temp dir, outlived the run"
        );
    }
}

#[test]
fn a_bad_out_or_log_is_exit_2_before_any_client_and_a_fresh_run_keeps_the_users_files() {
    let f = Fixture::new();
    let marker = f.dir.path().join("client-ran");
    let touching = format!("touch '{}'", marker.display());
    let file = f.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let checkout = f.dir.path().join("checkout");
    std::fs::create_dir_all(checkout.join(".git")).unwrap();
    std::fs::write(checkout.join(".git/gatekit-owner"), "kept 0123\n").unwrap();
    std::os::unix::fs::symlink(&file, f.dir.path().join("link.log")).unwrap();
    let run = |args: &[&str]| {
        testkit::bin(PROBE)
            .args(args)
            .current_dir(f.dir.path())
            .output()
            .unwrap()
    };
    let file_s = file.display().to_string();
    let inside = checkout.join("out").display().to_string();
    let link = f.dir.path().join("link.log").display().to_string();
    for (args, why) in [
        (
            vec![
                "bracket", "--client", &touching, "--points", "10", "--out", &file_s,
            ],
            "is not a folder",
        ),
        (
            vec![
                "bracket", "--client", &touching, "--points", "10", "--out", &inside,
            ],
            "inside a gatekit checkout",
        ),
        (vec!["clients", "--out", &file_s], "is not a folder"),
        (vec!["serve", "--log", &link], "is a link"),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!marker.exists(), "a client ran before --out was checked");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert!(!checkout.join("out").exists());

    // The user's files in --out, named like points' own, outlive fresh runs; a point of the
    // first run that the second does not measure goes.
    let out = f.out();
    std::fs::create_dir_all(out.join("points/n-90")).unwrap();
    std::fs::write(out.join("points/n-90/notes.txt"), "the user's\n").unwrap();
    std::fs::create_dir_all(out.join("points/n-7")).unwrap();
    std::fs::write(out.join("points/n-7/serve.log"), "the user's\n").unwrap();
    let (code, text, _) = f.probe(&[
        "bracket",
        "--client",
        &f.client("spill", 100),
        "--points",
        "90,150",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(out.join("points/n-150/serve.log").exists());
    let (code, text, r) = f.probe(&[
        "bracket",
        "--client",
        &f.client("spill", 100),
        "--points",
        "90",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(verdicts(&r), pairs(&[(90, "inline")]));
    assert!(
        !out.join("points/n-150/serve.log").exists(),
        "the first run's point stayed"
    );
    assert!(out.join("points/n-90/serve.log").exists());
    for name in ["points/n-90/notes.txt", "points/n-7/serve.log"] {
        assert_eq!(
            std::fs::read_to_string(out.join(name)).unwrap(),
            "the user's\n",
            "{name}"
        );
    }
}
