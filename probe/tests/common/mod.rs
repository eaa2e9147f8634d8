//! Helpers shared by probe's integration tests.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

pub const PROBE: &str = env!("CARGO_BIN_EXE_probe");

/// Feeds `lines` to `probe serve` (then EOF) and returns its stdout as parsed JSON lines,
/// asserting it exits 0 and writes nothing but JSON to stdout.
pub fn serve_lines(lines: &[&str]) -> Vec<Value> {
    let mut input = lines.join("\n");
    input.push('\n');
    let out = testkit::bin(PROBE)
        .arg("serve")
        .write_stdin(input)
        .output()
        .expect("run probe serve");
    assert_eq!(
        out.status.code(),
        Some(0),
        "serve exit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("stdout is UTF-8")
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
        })
        .collect()
}

/// The length JavaScript reports, counted here independently of the crate's own helper.
pub fn js_length(s: &str) -> usize {
    s.encode_utf16().count()
}

pub fn initialize(id: u64, version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"test","version":"0"}}}}}}"#
    )
}

pub fn call(id: u64, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"emit","arguments":{arguments}}}}}"#
    )
}

/// The text blocks of a tools/call result.
pub fn texts(reply: &Value) -> Vec<String> {
    reply["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .map(|b| b["text"].as_str().expect("text block").to_string())
        .collect()
}

/// A python3 on PATH, or None (tests that need it skip with a notice).
pub fn python() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .ok()?;
    out.status.success().then(|| PathBuf::from("python3"))
}

/// Where the install scripts put their packages ($HOME/.cache/gatekit/...).
pub fn cache_dir() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cache/gatekit")
}

/// Starts `probe model --port 0 ARGS` (stderr dropped) and reads the port it prints first.
/// `probe serve` with piped stdin and stdout (stderr discarded), for a test that speaks to it
/// line by line.
pub fn spawn_serve() -> std::process::Child {
    std::process::Command::new(PROBE)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

pub fn spawn_model<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (std::process::Child, u16) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(PROBE)
        .args(["model", "--port", "0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the port on stdout");
    (child, port)
}
