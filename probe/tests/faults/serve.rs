//! probe serve's JSON-RPC line reader under hostile lines: errors in bounded memory, and the
//! next line served.

use super::*;

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
    let mut child = crate::common::spawn_serve();
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
