//! probe under faults and hostile input: every outside byte and number is bounded before use,
//! a malformed request never stops a server from serving the next, a closed stdout ends a
//! command quietly, SIGINT and SIGTERM end every command with 130 and nothing left behind, one
//! run per --out, and outside text cannot forge a report line.

use crate::common::*;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Kills its child on drop, so a failing test leaves nothing running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }

    /// Waits at most `limit` for the exit code (None: killed by a signal).
    fn wait_for(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "still running after {limit:?}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), sig).unwrap();
    }
}

// ---- probe model: the HTTP stand-in ---------------------------------------------------------

/// `probe model --port 0`, and the port it printed.
fn start_model() -> (Running, u16) {
    let (child, port) = spawn_model::<&str>(&[]);
    (Running(child), port)
}

/// Sends `prefix`, then `pattern` over and over until `limit` bytes went out (then ends its
/// side) or the server stopped taking them; returns the answer's status and how much was sent.
fn hostile(port: u16, prefix: &[u8], pattern: &[u8], limit: usize) -> (Option<u16>, usize) {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut w = s.try_clone().unwrap();
    let (prefix, pattern) = (prefix.to_vec(), pattern.to_vec());
    let writer = thread::spawn(move || {
        let mut sent = 0;
        if w.write_all(&prefix).is_err() {
            return sent;
        }
        sent += prefix.len();
        let block: Vec<u8> = if pattern.is_empty() {
            Vec::new()
        } else {
            pattern.iter().copied().cycle().take(64 * 1024).collect()
        };
        while !block.is_empty() && sent < limit {
            match w.write(&block) {
                Ok(k) => sent += k,
                Err(_) => return sent,
            }
        }
        let _ = w.shutdown(std::net::Shutdown::Write);
        sent
    });
    let mut answer = Vec::new();
    let mut r = s;
    let mut buf = [0u8; 4096];
    // Read until the server closes (or resets) the connection.
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => answer.extend_from_slice(&buf[..k]),
        }
    }
    let sent = writer.join().unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|t| t.get(..3))
        .and_then(|c| c.parse().ok());
    (status, sent)
}

/// One ordinary request on a fresh connection; its status.
fn count_tokens(port: u16) -> u16 {
    let body = r#"{"messages":[{"role":"user","content":"abcdefgh"}]}"#;
    let request = format!(
        "POST /v1/messages/count_tokens HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, _) = hostile(port, request.as_bytes(), b"", 0);
    status.expect("an answer")
}

const ENDLESS: usize = 64 * 1024 * 1024;

#[test]
fn model_refuses_endless_heads_after_a_bounded_read_and_keeps_serving() {
    let (_model, port) = start_model();
    let cases: [(&str, &[u8], &[u8]); 4] = [
        ("an endless request line", b"POST /", b"a"),
        (
            "an endless header line",
            b"POST / HTTP/1.1\r\nx-long: ",
            b"a",
        ),
        ("endless headers", b"POST / HTTP/1.1\r\n", b"x-h: v\r\n"),
        ("endless blank lines", b"", b"\r\n"),
    ];
    for (what, prefix, pattern) in cases {
        let (status, sent) = hostile(port, prefix, pattern, ENDLESS);
        assert_eq!(status, Some(431), "{what}");
        // The server stopped reading long before the client stopped sending.
        assert!(sent < ENDLESS / 2, "{what}: the server read {sent} bytes");
        assert_eq!(count_tokens(port), 200, "after {what}");
    }
}

#[test]
fn model_refuses_bad_bodies_and_keeps_serving() {
    let (_model, port) = start_model();
    let post = "POST /v1/messages HTTP/1.1\r\nhost: x\r\n";
    let cases: Vec<(String, &[u8], u16)> = vec![
        (
            format!("{post}content-length: 99999999999999999999999999\r\n\r\n{{}}"),
            b"",
            413,
        ),
        (
            format!("{post}content-length: 67108865\r\n\r\n{{}}"),
            b"",
            413,
        ),
        (
            format!("{post}content-length: 3\r\ncontent-length: 2\r\n\r\n{{}}"),
            b"",
            400,
        ),
        (format!("{post}content-length: 2x\r\n\r\n{{}}"), b"", 400),
        (format!("{post}content-length: -2\r\n\r\n{{}}"), b"", 400),
        (
            format!("{post}content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n"),
            b"",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\nfffffffffffffffffffffff\r\n"),
            b"",
            413,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n2\r\n{{}}X0\r\n\r\n"),
            b"",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n2;ext="),
            b"e",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n0\r\n"),
            b"x-t: v\r\n",
            431,
        ),
        (format!("{post}transfer-encoding: gzip\r\n\r\n"), b"", 501),
        ("\u{0}\u{ff}\u{1}garbage\r\n\r\n".to_string(), b"", 400),
    ];
    for (request, pattern, want) in cases {
        let limit = if pattern.is_empty() { 0 } else { ENDLESS };
        let (status, sent) = hostile(port, request.as_bytes(), pattern, limit);
        assert_eq!(status, Some(want), "{request:?}");
        assert!(
            sent < ENDLESS / 2,
            "{request:?}: the server read {sent} bytes"
        );
        assert_eq!(count_tokens(port), 200, "after {request:?}");
    }
}

#[test]
fn model_answers_503_over_its_connection_limit_and_recovers() {
    let (_model, port) = start_model();
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Let the server accept every one of them.
    thread::sleep(Duration::from_millis(300));
    assert_eq!(count_tokens(port), 503);
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count_tokens(port) != 200 {
        assert!(Instant::now() < deadline, "the server never recovered");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn model_logs_each_refusal_with_its_status() {
    let model = crate::standins::Model::start(&[]);
    let (port, log) = (model.port, model.log.clone());
    let post = "POST /v1/messages HTTP/1.1\r\nhost: x\r\n";
    for (request, want) in [
        (format!("{post}x-long: {}\r\n\r\n", "a".repeat(70_000)), 431),
        (format!("{post}content-length: 67108865\r\n\r\n"), 413),
        (format!("{post}transfer-encoding: gzip\r\n\r\n"), 501),
        ("GET / HTTP/9\r\n\r\n".to_string(), 400),
    ] {
        assert_eq!(hostile(port, request.as_bytes(), b"", 0).0, Some(want));
    }
    let statuses: Vec<u16> = probe::events::read_events::<probe::ModelEvent>(&log)
        .into_iter()
        .filter_map(|e| match e {
            probe::ModelEvent::BadRequest {
                status: Some(status),
                error: Some(_),
                ..
            } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [431, 413, 501, 400]);
}

// ---- numbers from the command line -------------------------------------------------------

#[test]
fn every_bad_number_is_refused_with_one_line_naming_it_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.display().to_string();
    let many: String = (1..=1001)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let b = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["bracket", "--client", "true", "--out", &out_s];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let c = |extra: &[&str]| -> Vec<String> {
        let mut v = vec![
            "check", "--client", "true", "--out", &out_s, "--expect", "100",
        ];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let o = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (o(&["call", "--n", "10000001", "--", "true"]), "10000001"),
        (
            o(&["call", "--n", "99999999999999999999999", "--", "true"]),
            "99999999999999999999999",
        ),
        (o(&["call", "--n", "1e3", "--", "true"]), "1e3"),
        (o(&["call", "--n=-5", "--", "true"]), "-5"),
        (
            o(&["call", "--cap", "18446744073709551616", "--", "true"]),
            "18446744073709551616",
        ),
        (o(&["call", "--timeout", "31d", "--", "true"]), "31d"),
        (
            o(&["call", "--timeout", "18446744073709551615s", "--", "true"]),
            "18446744073709551615s",
        ),
        (o(&["call", "--timeout", "0s", "--", "true"]), "0s"),
        (
            o(&["test-client", "--mcp-config", "x", "--n", "10000001"]),
            "10000001",
        ),
        (
            o(&["test-client", "--mcp-config", "x", "--n", "1", "--limit=-1"]),
            "-1",
        ),
        (o(&["model", "--port", "65536"]), "65536"),
        (
            o(&["model", "--count-tokens", "18446744073709551616"]),
            "18446744073709551616",
        ),
        (o(&["model", "--input-tokens=-1"]), "-1"),
        (
            o(&["model", "--output-tokens", "18446744073709551616"]),
            "18446744073709551616",
        ),
        (b(&["--around", "5", "--step", "0"]), "0"),
        (b(&["--around", "5", "--step", "10"]), "5-10"),
        (b(&["--around", "9999999", "--step", "10"]), "9999999+10"),
        (
            b(&["--around", "18446744073709551615", "--step", "1"]),
            "18446744073709551615",
        ),
        (b(&["--around=-5", "--step", "1"]), "-5"),
        (b(&["--points", "1,20000000"]), "20000000"),
        (b(&["--points", "1,,2"]), "1,,2"),
        (b(&["--points", &many]), "1001 points"),
        (b(&["--bisect", "9..3"]), "9..3"),
        (b(&["--bisect", "3..3"]), "3..3"),
        (
            b(&["--bisect", "0..18446744073709551616"]),
            "18446744073709551616",
        ),
        (b(&["--points", "1", "--timeout", "99999d"]), "99999d"),
        (
            b(&["--points", "1", "--count-tokens", "99999999999999999999"]),
            "99999999999999999999",
        ),
        (c(&["--margin", "100%"]), "100%"),
        (c(&["--margin", "150"]), "150"),
        (c(&["--margin=-5%"]), "-5%"),
        (c(&["--margin", "NaN"]), "NaN"),
        (c(&["--margin", "inf%"]), "inf%"),
        (c(&["--margin", "1e2%"]), "1e2%"),
        (
            o(&[
                "check", "--client", "true", "--out", &out_s, "--expect", "10000000",
            ]),
            "10000000",
        ),
    ];
    for (args, value) in cases {
        let output = testkit::bin(PROBE)
            .args(&args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.contains(value),
            "{args:?}: does not name {value}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote output");
    }
}

// ---- probe serve: the JSON-RPC line reader -------------------------------------------------

/// The peak resident memory of a process, in KiB (Linux's VmHWM).
fn peak_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[test]
fn serve_answers_hostile_lines_with_errors_in_bounded_memory_and_keeps_serving() {
    let mut child = Command::new(PROBE)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Running(child);
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let v = serde_json::from_str(&line).expect("only JSON on stdout");
            if tx.send(v).is_err() {
                return;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(60))
            .expect("an answer, not silence")
    };
    // An endless line: the error comes while the client is still sending.
    let block = vec![b'x'; 1024 * 1024];
    let mut sent = 0;
    let answer = loop {
        stdin.write_all(&block).unwrap();
        sent += block.len();
        if let Ok(v) = rx.try_recv() {
            break v;
        }
        assert!(sent < 256 * 1024 * 1024, "no answer to an endless line");
    };
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    // Keep sending the same line well past the bound: it is skipped, not stored.
    for _ in 0..64 {
        stdin.write_all(&block).unwrap();
    }
    stdin.write_all(b"\n").unwrap();
    let ping = |id: u64| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
    stdin.write_all(ping(1).as_bytes()).unwrap();
    assert_eq!(next(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let peak = peak_kib(server.pid());
    assert!(peak < 48 * 1024, "serve's memory peaked at {peak} KiB");

    let deep = format!("{}{}\n", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let wide = format!(
        "[{}]\n",
        vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#; 5000].join(",")
    );
    let hostile: Vec<(String, Value, i64)> = vec![
        (deep, Value::Null, -32700),
        (wide, Value::Null, -32600),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#.into(), Value::Null, -32600),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.into(), Value::Null, -32600),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.into(), Value::Null, -32600),
        (r#"{"jsonrpc":"2.0","id":3,"method":["ping"]}"#.into(), json!(3), -32600),
        (r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#.into(), json!(4), -32600),
        (r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#.into(), json!(5), -32602),
        (r#"{"jsonrpc":2,"id":6,"method":"ping"}"#.into(), json!(6), -32600),
        (r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":[]}}"#.into(), json!(7), -32602),
        (r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"emit","arguments":{"n":1e400}}}"#.into(), Value::Null, -32700),
        ("\u{feff}\u{0}\u{1b}[2J".into(), Value::Null, -32700),
    ];
    for (line, id, code) in hostile {
        let line = if line.ends_with('\n') {
            line
        } else {
            line + "\n"
        };
        stdin.write_all(line.as_bytes()).unwrap();
        let r = next();
        assert_eq!(
            r["error"]["code"],
            code,
            "{}: {r}",
            &line[..line.len().min(80)]
        );
        assert_eq!(r["id"], id, "{}", &line[..line.len().min(80)]);
    }
    // Numbers too large for emit are tool errors, answered under their id.
    for n in [
        "18446744073709551616",
        "-1",
        "1e300",
        "10000001",
        "\"5\"",
        "[]",
    ] {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"emit\",\"arguments\":{{\"n\":{n}}}}}}}\n"
        );
        stdin.write_all(line.as_bytes()).unwrap();
        let r = next();
        assert_eq!(r["id"], 9, "{n}: {r}");
        assert_eq!(r["result"]["isError"], true, "{n}: {r}");
    }
    stdin.write_all(ping(2).as_bytes()).unwrap();
    assert_eq!(next(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    drop(stdin);
    let mut server = server;
    assert_eq!(server.wait_for(Duration::from_secs(20)), Some(0));
}

// ---- SIGINT and SIGTERM ----------------------------------------------------------------------

/// Live processes whose GATEKIT_RUN tag was made by the run `pid` (tags are `PID.START-SEQ-NANOS`,
/// nested ones joined with `:`).
fn tagged_by(pid: i32) -> Vec<i32> {
    let prefix = format!("{pid}.");
    live_pids()
        .into_iter()
        .filter(|p| {
            let Ok(env) = std::fs::read(format!("/proc/{p}/environ")) else {
                return false;
            };
            env.split(|&b| b == 0).any(|var| {
                var.strip_prefix(b"GATEKIT_RUN=").is_some_and(|tag| {
                    tag.split(|&b| b == b':')
                        .any(|part| part.starts_with(prefix.as_bytes()))
                })
            })
        })
        .collect()
}

/// Live (not zombie) `sleep ARG` processes (not a probe that was merely given ARG).
fn with_arg(needle: &str) -> Vec<i32> {
    live_pids()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                let argv: Vec<&[u8]> = c.split(|&b| b == 0).filter(|a| !a.is_empty()).collect();
                argv.len() == 2
                    && argv[0].rsplit(|&b| b == b'/').next() == Some(b"sleep")
                    && argv[1] == needle.as_bytes()
            })
        })
        .collect()
}

fn live_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
            })
        })
        .collect()
}

/// Waits until `check` holds, failing after `limit`.
fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(25));
    }
}

/// A `sleep` argument no other process on the machine has.
fn unique_sleep() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "600.{}{:03}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    )
}

fn results(out: &Path) -> Value {
    std::fs::read_to_string(out.join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

fn spawn_probe(args: &[&str], dir: &Path) -> Running {
    Running(
        Command::new(PROBE)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// `probe test-client` with `limit`, saving what it does not show inline in `saved` (the test's
/// own temp dir, never the machine's).
fn test_client(limit: u64, saved: &std::path::Path) -> String {
    format!(
        "{PROBE} test-client --limit {limit} --mcp-config {{mcp_config}} --n {{n}} --saved-dir '{}'",
        saved.display()
    )
}

#[test]
fn bracket_on_sigterm_exits_130_marks_its_results_partial_and_leaves_no_process() {
    use nix::sys::signal::Signal;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let points: String = (1..=300)
        .map(|k| (k * 1000).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut bracket = spawn_probe(
        &[
            "bracket",
            "--client",
            &test_client(150_000, dir.path()),
            "--points",
            &points,
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    let pid = bracket.pid();
    wait_until(Duration::from_secs(60), "two points finished", || {
        results(&out)["points"]
            .as_array()
            .is_some_and(|p| p.len() >= 2)
    });
    // Its client is running (or about to): a process tagged by this bracket.
    wait_until(Duration::from_secs(30), "a running client", || {
        !tagged_by(pid).is_empty()
    });
    bracket.signal(Signal::SIGTERM);
    assert_eq!(bracket.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(tagged_by(pid), Vec::<i32>::new(), "processes left behind");
    let r = results(&out);
    assert_eq!(r["interrupted"], true, "{r}");
    assert_eq!(r["complete"], false, "{r}");
    let n = r["points"].as_array().unwrap().len();
    assert!((2..300).contains(&n), "{n} points");
    let text = std::fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(
        text.contains("interrupted: the results above are partial"),
        "{text}"
    );
}

#[test]
fn a_results_file_written_mid_run_says_it_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let marker = unique_sleep();
    // The second point hangs until the test is done looking at the first one's results.
    let client = format!(
        "if [ {{n}} = 2000 ]; then exec sleep {marker}; fi; {}",
        test_client(150_000, dir.path())
    );
    let mut bracket = spawn_probe(
        &[
            "bracket",
            "--client",
            &client,
            "--points",
            "1000,2000",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    // results.json is written first, then results.txt.
    wait_until(Duration::from_secs(60), "the first point", || {
        results(&out)["points"]
            .as_array()
            .is_some_and(|p| p.len() == 1)
            && out.join("results.txt").exists()
    });
    let r = results(&out);
    assert_eq!(r["complete"], false, "{r}");
    assert_eq!(r["interrupted"], false, "{r}");
    let text = std::fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(
        text.contains("partial: written while the run was going"),
        "{text}"
    );
    bracket.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(bracket.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(
        with_arg(&marker),
        Vec::<i32>::new(),
        "the client was left running"
    );
}

#[test]
fn check_on_sigint_exits_130_and_kills_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let marker = unique_sleep();
    let mut check = spawn_probe(
        &[
            "check",
            "--expect",
            "1000",
            "--client",
            &format!("sleep {marker}"),
            "--timeout",
            "10m",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the client", || {
        !with_arg(&marker).is_empty()
    });
    check.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(check.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(
        with_arg(&marker),
        Vec::<i32>::new(),
        "the client was left running"
    );
    let r = results(&out);
    assert_eq!(r["interrupted"], true, "{r}");
    assert_eq!(r["complete"], false, "{r}");
}

#[test]
fn call_on_sigterm_exits_130_and_ends_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep();
    // A server that never answers: the call waits for `initialize`.
    let mut call = spawn_probe(
        &["call", "--timeout", "10m", "--", "sleep", &marker],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the server", || {
        !with_arg(&marker).is_empty()
    });
    call.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(call.wait_for(Duration::from_secs(30)), Some(130));
    wait_until(Duration::from_secs(5), "the server to be gone", || {
        with_arg(&marker).is_empty()
    });
}

#[test]
fn call_on_sigterm_exits_130_though_an_untagged_stray_holds_the_servers_output() {
    let dir = tempfile::tempdir().unwrap();
    let (marker, stray) = (unique_sleep(), unique_sleep());
    // The server leaves a process outside its group and without the run tag (env -i), holding
    // the server's stdout open: killing what can be found does not end the wait for an answer,
    // so the call itself must notice the signal.
    let server = format!("setsid env -i sleep {stray} & exec sleep {marker}");
    let mut call = spawn_probe(
        &["call", "--timeout", "10m", "--", "sh", "-c", &server],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the server", || {
        !with_arg(&marker).is_empty() && !with_arg(&stray).is_empty()
    });
    call.signal(nix::sys::signal::Signal::SIGTERM);
    let code = call.wait_for(Duration::from_secs(30));
    // The stray is this test's own (started by the server it ran): end it whatever happened.
    for pid in with_arg(&stray) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert_eq!(code, Some(130));
}

#[test]
fn call_runs_its_server_tagged_and_kills_what_escaped_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep();
    let tagfile = dir.path().join("tag");
    // A server that leaves a helper behind outside its process group, as a daemon would.
    let gitfile = dir.path().join("git");
    let server = format!(
        "echo \"$GATEKIT_RUN\" > {}; echo \"${{GIT_DIR-unset}}\" > {}; setsid sleep {marker} & exec {PROBE} serve",
        tagfile.display(),
        gitfile.display()
    );
    let out = testkit::bin(PROBE)
        .args(["call", "--n", "10", "--", "sh", "-c", &server])
        // As when probe runs inside a git hook: the server must not inherit the redirection.
        .env("GIT_DIR", dir.path().join("elsewhere"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tag = std::fs::read_to_string(&tagfile).unwrap();
    assert!(!tag.trim().is_empty(), "the server carried no run tag");
    assert_eq!(std::fs::read_to_string(&gitfile).unwrap(), "unset\n");
    wait_until(
        Duration::from_secs(5),
        "the escaped helper to be gone",
        || with_arg(&marker).is_empty(),
    );
}

#[test]
fn model_on_sigterm_exits_130_and_frees_its_port() {
    let (mut model, port) = start_model();
    assert_eq!(count_tokens(port), 200);
    // An open connection does not keep it alive.
    let _idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    model.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(model.wait_for(Duration::from_secs(20)), Some(130));
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
}

#[test]
fn serve_on_sigint_or_sigterm_exits_130() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let mut child = Command::new(PROBE)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut serve = Running(child);
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("\"result\""), "{line}");
        // Waiting on its input, with the client still there.
        serve.signal(sig);
        assert_eq!(serve.wait_for(Duration::from_secs(20)), Some(130), "{sig}");
        drop(stdin);
    }
}

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
