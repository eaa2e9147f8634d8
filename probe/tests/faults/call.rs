//! `probe call` against servers that never stop writing: a reply line without an end, a stderr
//! that floods. Each server is bounded by the test (it writes a fixed amount, then sleeps), and
//! probe itself runs under a memory limit, so a probe that held the line would abort rather
//! than take the machine's memory.

use super::*;
use std::os::unix::process::CommandExt;

/// `probe call ARGS` run from `dir` with at most 1 GiB of address space, stderr into `err`;
/// its exit code (None: a signal) and how long it took.
fn call_limited(args: &[&str], dir: &Path, err: &Path) -> (Option<i32>, Duration) {
    let mut cmd = Command::new(PROBE);
    cmd.arg("call")
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let gib = 1 << 30;
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, gib, gib)
                .map_err(std::io::Error::from)
        });
    }
    let started = Instant::now();
    let mut running = Running(cmd.spawn().unwrap());
    let code = running.wait_for(Duration::from_secs(120));
    (code, started.elapsed())
}

/// A server script written into `dir` (each bounded: it writes a fixed amount, then sleeps).
fn server(script: &str, dir: &Path) -> String {
    let path = dir.join("server.sh");
    std::fs::write(&path, script).unwrap();
    path.display().to_string()
}

#[test]
fn a_reply_line_past_64_mib_is_a_clear_error_and_probe_holds_no_more_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("stderr");
    let script = server(
        "read l; head -c 2000000000 /dev/zero | tr '\\0' x; exec sleep 600\n",
        dir.path(),
    );
    let (code, took) = call_limited(&["--timeout", "60s", "--", "sh", &script], dir.path(), &err);
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("the server's reply to initialize is a line over 64 MiB"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn a_server_that_floods_stderr_ends_at_the_timeout_with_its_log_capped() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("stderr");
    // 400 MB of 1000-character lines on stderr, and never an answer.
    let script = server(
        "head -c 400000000 /dev/zero | tr '\\0' x | fold -w 1000 >&2; exec sleep 600\n",
        dir.path(),
    );
    let (code, took) = call_limited(&["--timeout", "2s", "--", "sh", &script], dir.path(), &err);
    let len = std::fs::metadata(&err).unwrap().len();
    let tail = runner::read_tail(&err, 400).unwrap();
    assert_eq!(code, Some(4), "{tail}");
    assert!(
        tail.contains("no answer to initialize before the timeout"),
        "{tail}"
    );
    assert!(took < Duration::from_secs(6), "--timeout 2s took {took:?}");
    // What reached our stderr is the log's echo: the kept 16 MiB, the count, our own line.
    assert!(len <= runner::STDERR_KEPT + 4096, "{len} bytes echoed");
    assert!(
        tail.contains("more bytes of stderr not kept: the log keeps the first 16777216"),
        "{tail}"
    );
}

#[test]
fn sigterm_ends_a_call_whose_server_floods_stderr_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("stderr");
    let marker = unique_sleep();
    let script = server(
        &format!(
            "head -c 400000000 /dev/zero | tr '\\0' x | fold -w 1000 >&2; exec sleep {marker}\n"
        ),
        dir.path(),
    );
    let mut call = Running(
        Command::new(PROBE)
            .args(["call", "--timeout", "10m", "--", "sh", &script])
            .current_dir(dir.path())
            .env("TMPDIR", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap(),
    );
    // Well into the flood: past what the log keeps.
    wait_until(Duration::from_secs(30), "the flood", || {
        std::fs::metadata(&err).is_ok_and(|m| m.len() > 1 << 20)
    });
    thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    call.signal(nix::sys::signal::Signal::SIGTERM);
    let code = call.wait_for(Duration::from_secs(60));
    let took = sent.elapsed();
    assert_eq!(code, Some(130));
    assert!(
        took < Duration::from_secs(8),
        "SIGTERM took {took:?} to end the call"
    );
    assert!(with_arg(&marker).is_empty(), "the server outlived the call");
    let len = std::fs::metadata(&err).unwrap().len();
    assert!(len <= runner::STDERR_KEPT + 4096, "{len} bytes echoed");
}

#[test]
fn a_server_that_writes_lines_without_end_but_never_answers_ends_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("stderr");
    // Notifications as fast as the pipe takes them (for 20 seconds, then it sleeps): each is a
    // well-formed line that is no answer.
    let script = server(
        "timeout 20 yes '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}'; \
         exec sleep 600\n",
        dir.path(),
    );
    let (code, took) = call_limited(&["--timeout", "2s", "--", "sh", &script], dir.path(), &err);
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("no answer to initialize before the timeout"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(6), "--timeout 2s took {took:?}");
}
