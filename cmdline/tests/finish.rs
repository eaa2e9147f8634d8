//! The one `finish` every tool's run ends through (`cmdline::Reporter::finish`): a stdout whose
//! reader went away, or a full disk behind it, never changes the exit code or stops the files
//! a run owes, and a report file that failed to land keeps a pass from standing.
//!
//! A binary of its own, with no test harness: the run under test needs a process whose stdout
//! is closed, and libtest would itself print to that stdout. The binary runs itself as that
//! process (`SEAM_RUN=CASE`) and checks what it did.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cmdline::{Exit, Render, Reporter, Shown};
use report::ColorChoice;

/// A tool's renderer in small: a note, and a step.
struct Lines;

impl Render<&str> for Lines {
    fn render(&self, note: &&str) -> Shown {
        Shown::Note(format!("demo: {note}"))
    }
}

/// A run as a tool's is: it says a note, shows its report on stdout (a megabyte: far past any
/// pipe's buffer), writes its report file after that, and ends with `verdict` through
/// `finish`; `failed` when a report file it owed could not be written.
fn a_run(dir: &Path, verdict: Exit, failed: bool) -> Exit {
    let mut out = Reporter::new(Lines, ColorChoice::Never, true);
    out.emit(&"started");
    out.show(&"finding\n".repeat(1 << 17));
    out.print("data\n")
        .expect("a closed stdout is not an error");
    std::fs::write(dir.join("report.json"), "{}").unwrap();
    if failed {
        out.failed(anyhow::anyhow!(
            "writing junit.xml: No space left on device"
        ));
    }
    // Outside text in a note (a file name, an error) cannot drive the terminal.
    out.emit(&"x\u{1b}[2J\rverdict PASS");
    out.emit(&"report in place");
    out.finish(verdict)
}

/// This binary run as `case` with `stdout` as its stdout: its exit code and its stderr.
fn run_as(case: &str, dir: &Path, stdout: Stdio) -> (i32, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("SEAM_RUN", case)
        .env("SEAM_DIR", dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

/// A pipe whose reading end is closed before the run writes: its writes meet `EPIPE`.
fn closed() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

/// `/dev/full`: every write fails with `ENOSPC`.
fn full() -> Stdio {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
        .into()
}

fn main() {
    if let Ok(case) = std::env::var("SEAM_RUN") {
        let dir = PathBuf::from(std::env::var_os("SEAM_DIR").unwrap());
        let exit = match case.as_str() {
            "findings" => a_run(&dir, Exit::Findings, false),
            "pass" => a_run(&dir, Exit::Ok, false),
            "pass-unwritten" => a_run(&dir, Exit::Ok, true),
            other => panic!("no case {other}"),
        };
        std::process::exit(exit.code().into());
    }
    for (case, verdict) in [("findings", 1), ("pass", 0)] {
        for (kind, stdout) in [("closed", closed as fn() -> Stdio), ("full", full)] {
            let dir = tempfile::tempdir().unwrap();
            let (code, stderr) = run_as(case, dir.path(), stdout());
            assert_eq!(
                code, verdict,
                "{case}, stdout {kind}: the exit code is the verdict's\n{stderr}"
            );
            assert!(
                dir.path().join("report.json").is_file(),
                "{case}, stdout {kind}: the report after stdout was not written\n{stderr}"
            );
            for bad in ["panicked", "failed printing", "Broken pipe"] {
                assert!(!stderr.contains(bad), "{case}, {kind}: {stderr}");
            }
            // A full disk is said, once; a reader that went away is not.
            assert_eq!(
                stderr.matches("No space left").count(),
                usize::from(kind == "full"),
                "{case}, {kind}: {stderr}"
            );
            assert!(
                stderr.starts_with("demo: started\n")
                    && stderr.ends_with("demo: report in place\n"),
                "{case}, {kind}: the notes go on whatever stdout met\n{stderr}"
            );
            assert!(
                stderr.contains("demo: x\\u{1b}[2J\\rverdict PASS\n") && !stderr.contains('\u{1b}'),
                "{case}, {kind}: a note's control characters are shown escaped\n{stderr:?}"
            );
        }
    }
    // A report file that did not land: a pass cannot stand (74, an I/O failure after work
    // began), whatever stdout is.
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run_as("pass-unwritten", dir.path(), closed());
    assert_eq!(code, 74, "{stderr}");
    // And an open stdout gets the whole report.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .env("SEAM_RUN", "findings")
        .env("SEAM_DIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stdout.len(),
        "finding\n".len() * (1 << 17) + "data\n".len()
    );
    println!("finish: every case held");
}
