//! Helpers shared by the integration tests: the real `sha256sum`, run with an outer timeout,
//! and a tree of awkwardly named files.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub const SHA256SUM: &str = "/usr/bin/sha256sum";

/// Runs a command in `dir` with stdin closed, killing it if it outlives `limit`, so a
/// regression (sha256sum waiting on stdin, a FIFO) fails the test instead of hanging it.
pub fn run_in(dir: &Path, program: &str, args: &[&OsStr], limit: Duration) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} still running after {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// `sha256sum ARGS...` in `dir`, with a 60 s limit.
pub fn sha256sum(dir: &Path, args: &[&[u8]]) -> Output {
    let args: Vec<&OsStr> = args.iter().map(|a| OsStr::from_bytes(a)).collect();
    run_in(dir, SHA256SUM, &args, Duration::from_secs(60))
}

/// File names that each need care somewhere: blanks, escapes, non-UTF-8, leading dash,
/// star, parentheses, a nested directory.
pub fn awkward_names() -> Vec<Vec<u8>> {
    [
        &b"plain.txt"[..],
        b"sp ace",
        b" leading space",
        b"trailing space ",
        b"back\\slash",
        b"new\nline",
        b"carriage\rreturn",
        b"ends in cr\r",
        b"all\\three\n\r",
        "caf\u{e9} \u{65e5}\u{672c}".as_bytes(),
        b"not utf8 \xff\xfe",
        b"-leading-dash",
        b"*star",
        b"p)q = (r)",
        b"#hash",
        b"dir/nested file",
        b"dir/sub/deep\\er",
        b"tab\there",
    ]
    .iter()
    .map(|n| n.to_vec())
    .collect()
}

/// Writes each name under `root` with content that differs per file.
pub fn make_tree(root: &Path, names: &[Vec<u8>]) {
    for (i, name) in names.iter().enumerate() {
        let path = root.join(OsStr::from_bytes(name));
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, format!("content {i}\n").repeat(i + 1)).unwrap();
    }
}
