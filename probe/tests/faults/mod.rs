//! probe under faults and hostile input: every outside byte and number is bounded before use,
//! a malformed request never stops a server from serving the next, a closed stdout ends a
//! command quietly, SIGINT and SIGTERM end every command with 130 and nothing left behind, one
//! run per --out, and outside text cannot forge a report line.
//!
//! One file per concern: `model` (the HTTP stand-in under hostile requests), `numbers` (every
//! bound on the command line), `serve` (the JSON-RPC line reader), `signals` (SIGINT and
//! SIGTERM), `outputs` (one run per --out, a closed stdout, outside text in the reports). The
//! helpers they share are here.

mod call;
mod model;
mod numbers;
mod outputs;
mod serve;
mod signals;

use crate::common::*;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Kills its child on drop, so a failing test leaves nothing running.
pub(super) struct Running(pub(super) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    pub(super) fn pid(&self) -> i32 {
        self.0.id() as i32
    }

    /// Waits at most `limit` for the exit code (None: killed by a signal).
    pub(super) fn wait_for(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "still running after {limit:?}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub(super) fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), sig).unwrap();
    }
}

/// `probe model --port 0`, and the port it printed.
pub(super) fn start_model() -> (Running, u16) {
    let (child, port) = spawn_model::<&str>(&[]);
    (Running(child), port)
}

/// Sends `prefix`, then `pattern` over and over until `limit` bytes went out (then ends its
/// side) or the server stopped taking them; returns the answer's status and how much was sent.
pub(super) fn hostile(
    port: u16,
    prefix: &[u8],
    pattern: &[u8],
    limit: usize,
) -> (Option<u16>, usize) {
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
pub(super) fn count_tokens(port: u16) -> u16 {
    let body = r#"{"messages":[{"role":"user","content":"abcdefgh"}]}"#;
    let request = format!(
        "POST /v1/messages/count_tokens HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, _) = hostile(port, request.as_bytes(), b"", 0);
    status.expect("an answer")
}

// ---- SIGINT and SIGTERM ----------------------------------------------------------------------

/// Live processes whose GATEKIT_RUN tag was made by the run `pid` (tags are `PID.START-SEQ-NANOS`,
/// nested ones joined with `:`).
pub(super) fn tagged_by(pid: i32) -> Vec<i32> {
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
pub(super) fn with_arg(needle: &str) -> Vec<i32> {
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

pub(super) fn live_pids() -> Vec<i32> {
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
pub(super) fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(25));
    }
}

/// A `sleep` argument no other process on the machine has.
pub(super) fn unique_sleep() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "600.{}{:03}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    )
}

pub(super) fn results(out: &Path) -> Value {
    std::fs::read_to_string(out.join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

pub(super) fn spawn_probe(args: &[&str], dir: &Path) -> Running {
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
pub(super) fn test_client(limit: u64, saved: &std::path::Path) -> String {
    format!(
        "{PROBE} test-client --limit {limit} --mcp-config {{mcp_config}} --n {{n}} --saved-dir '{}'",
        saved.display()
    )
}
