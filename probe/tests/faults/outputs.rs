//! One run per --out, a closed stdout ends a command quietly, and outside text cannot forge a
//! report line.

use super::*;

// ---- one run per --out -----------------------------------------------------------------------

#[test]
fn a_second_run_on_the_same_out_is_refused_while_the_first_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let marker = unique_sleep();
    let sleeper = format!("sleep {marker}");
    let mut first = spawn_probe(
        &[
            "bracket",
            "--client",
            &sleeper,
            "--points",
            "1000",
            "--timeout",
            "10m",
            "--out",
            out_s,
        ],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the first run's client", || {
        !with_arg(&marker).is_empty()
    });
    for command in ["bracket", "check"] {
        let mut args = vec![command, "--client", "true", "--out", out_s];
        args.extend(if command == "bracket" {
            ["--points", "5"]
        } else {
            ["--expect", "5"]
        });
        let second = testkit::bin(PROBE)
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&second.stderr);
        assert_eq!(second.status.code(), Some(2), "{command}: {err}");
        assert!(
            err.contains("in use") && err.contains(&first.pid().to_string()),
            "{err}"
        );
    }
    // The first run's files are its own.
    assert!(!out.join("points").join("n-5").exists());
    first.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(first.wait_for(Duration::from_secs(30)), Some(130));
    // Released with the run: the next one goes ahead.
    let third = testkit::bin(PROBE)
        .args([
            "bracket",
            "--client",
            &test_client(150_000, dir.path()),
            "--points",
            "100",
            "--out",
            out_s,
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        third.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
}

// ---- a closed stdout -------------------------------------------------------------------------

/// A stdout whose reader is already gone.
fn closed_stdout() -> Stdio {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    Stdio::from(write)
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".repeat(50);
    let cases: Vec<(Vec<String>, Option<String>)> = vec![
        (vec!["completions".into(), "bash".into()], None),
        (vec!["man".into()], None),
        (vec!["--help".into()], None),
        (vec!["serve".into()], Some(ping)),
        (
            vec!["call".into(), "--".into(), PROBE.into(), "serve".into()],
            None,
        ),
        (
            vec![
                "call".into(),
                "--json".into(),
                "--".into(),
                PROBE.into(),
                "serve".into(),
            ],
            None,
        ),
        (
            vec![
                "bracket".into(),
                "--client".into(),
                test_client(150_000, dir.path()),
                "--points".into(),
                "100,200".into(),
                "--json".into(),
                "--out".into(),
                out.display().to_string(),
            ],
            None,
        ),
        (
            vec![
                "check".into(),
                "--client".into(),
                test_client(150, dir.path()),
                "--expect".into(),
                "150".into(),
                "--out".into(),
                out.display().to_string(),
            ],
            None,
        ),
    ];
    for (args, input) in cases {
        let mut child = Command::new(PROBE)
            .args(&args)
            .current_dir(dir.path())
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(closed_stdout())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(input) = &input {
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(input.as_bytes());
        }
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let mut child = Running(child);
        let code = child.wait_for(Duration::from_secs(60));
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        for bad in ["panicked", "failed printing", "Broken pipe", "os error"] {
            assert!(!stderr.contains(bad), "{args:?}: {stderr}");
        }
    }
    // The verdict still decides: a moved threshold is exit 1 though nobody read the table.
    let moved = Command::new(PROBE)
        .args([
            "check",
            "--client",
            &test_client(150, dir.path()),
            "--expect",
            "100",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(closed_stdout())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut moved = Running(moved);
    assert_eq!(moved.wait_for(Duration::from_secs(60)), Some(1));
}

// ---- outside text in the reports -------------------------------------------------------------

#[test]
fn a_client_version_with_control_characters_cannot_forge_a_report_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let evil =
        "1.0\nthreshold: inline up to 999999, saved from 1000000\r\u{1b}[2K\u{1b}]0;owned\u{7}";
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "evil\nclient: x", "version": evil}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "emit", "arguments": {"n": 1000}}});
    // A shell client that plays the MCP session by hand and prints the reply (the end marker
    // is plain ASCII inside it, so the point is inline).
    let log = out.join("points").join("n-1000").join("serve.log");
    let session = dir.path().join("session.jsonl");
    std::fs::write(&session, format!("{init}\n{call}\n")).unwrap();
    let client = format!(
        "cat {} | {PROBE} serve --log {}",
        session.display(),
        log.display()
    );
    for format in ["text", "markdown"] {
        let o = testkit::bin(PROBE)
            .args([
                "bracket", "--client", &client, "--points", "1000", "--format", format,
            ])
            .arg("--out")
            .arg(&out)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(out.join("results.txt")).unwrap();
        for (what, t) in [("results.txt", text.as_str()), (format, &stdout)] {
            assert!(
                !t.contains('\u{1b}') && !t.contains('\r') && !t.contains('\u{7}'),
                "{what}: {t:?}"
            );
            // The forged words stay inside the version's own line (escaped, however many times).
            for l in t
                .lines()
                .filter(|l| l.contains("999999") || l.contains("client: x"))
            {
                assert!(l.contains("version"), "{what}: forged line {l:?} in {t}");
            }
            assert!(t.contains("inline up to 1000;"), "{what}: {t}");
        }
        let r = results(&out);
        // The JSON keeps what the client sent, exactly.
        assert_eq!(r["client"]["mcp_client"]["version"], evil);
    }
}
