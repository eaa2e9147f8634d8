//! probe under faults and hostile input: every outside byte and number is bounded before use,
//! a malformed request never stops a server from serving the next, a closed stdout ends a
//! command quietly, SIGINT and SIGTERM end every command with 130 and nothing left behind, one
//! run per --out, and outside text cannot forge a report line.

mod common;

use common::*;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

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

#[allow(dead_code)] // used by the signal tests below
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
    let mut child = Command::new(PROBE)
        .args(["model", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the port on stdout");
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
            format!("{post}content-length: 2\r\ncontent-length: 3\r\n\r\n{{}}"),
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
            format!("{post}transfer-encoding: chunked\r\n\r\n2\r\n{{}}XX0\r\n\r\n"),
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
