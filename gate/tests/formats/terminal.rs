//! `gate` on a terminal (a real pty from `script`) and in pipes and files: colour only where
//! asked, a running suite's ticking line only on a terminal; completions and man pages from the
//! command-line definitions.

use std::fs;
use std::process::Command;

use crate::common::{gate, stderr, stdout, Fixture};

/// Runs `gate` under a pseudo-terminal (util-linux `script`), so stdout and stderr are a
/// terminal; returns everything it wrote there. `None` when `script` is missing.
fn on_a_terminal(f: &Fixture, args: &str, env: &[(&str, &str)]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        testkit::skip(
            "script",
            "util-linux `script` is not installed, so no pty test",
        );
        return None;
    }
    let gate_bin = env!("CARGO_BIN_EXE_gate");
    let mut cmd = Command::new("script");
    testkit::hermetic(&mut cmd);
    cmd.current_dir(f.repo.path())
        .args(["-q", "-e", "-c", &format!("{gate_bin} {args}"), "/dev/null"])
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn verdicts_are_coloured_on_a_terminal_or_when_asked_and_never_in_files_or_pipes() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config("[[suite]]\nname = \"good\"\nrun = \"true\"\n");
    let out_dir = f.out.path().join("gate-out");
    let green = "\x1b[1;32mPASS\x1b[0m";

    let piped = f.run(&config, &out_dir).output().unwrap();
    assert!(!stdout(&piped).contains('\x1b'), "a pipe gets no colour");
    let always = f
        .run(&config, &out_dir)
        .args(["--color", "always"])
        .output()
        .unwrap();
    let text = stdout(&always);
    assert!(text.starts_with(&format!("gate {green}  ")), "{text:?}");
    assert!(text.contains(&format!("verdict   {green}: every check held")));
    let file = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    assert!(!file.contains('\x1b'), "files are never coloured: {file:?}");
    assert_eq!(report::color::strip(&text), file);

    let args = format!(
        "run --config {} --out {}",
        config.display(),
        out_dir.display()
    );
    let Some(tty) = on_a_terminal(&f, &args, &[]) else {
        return;
    };
    assert!(tty.contains(green), "auto colours a terminal: {tty:?}");
    let no_color = on_a_terminal(&f, &args, &[("NO_COLOR", "1")]).unwrap();
    assert!(no_color.contains("verdict   PASS"), "{no_color:?}");
    assert!(
        !no_color.contains(green),
        "NO_COLOR is honoured: {no_color:?}"
    );
    let never = on_a_terminal(&f, &format!("{args} --color never"), &[]).unwrap();
    assert!(!never.contains(green), "{never:?}");
}

#[test]
fn a_running_suite_ticks_its_seconds_on_a_terminal_and_gets_plain_lines_elsewhere() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config("[[suite]]\nname = \"slow\"\nrun = \"sleep 2.6\"\n");
    let out_dir = f.out.path().join("gate-out");
    let plain = f.run(&config, &out_dir).output().unwrap();
    let err = stderr(&plain);
    assert!(err.contains("[1/1] suite slow running"), "{err}");
    assert!(!err.contains('\r'), "no redraws off a terminal: {err:?}");

    let args = format!(
        "run --config {} --out {}",
        config.display(),
        out_dir.display()
    );
    let Some(tty) = on_a_terminal(&f, &args, &[]) else {
        return;
    };
    for tick in [
        "suite slow running (0s)",
        "suite slow running (1s)",
        "suite slow running (2s)",
    ] {
        assert!(tty.contains(tick), "no {tick:?} in {tty:?}");
    }
    // Back to the line's start and erase it (indicatif erases the whole line, `ESC [ 2 K`).
    assert!(
        tty.contains("\r\x1b[K") || tty.contains("\r\x1b[2K"),
        "the live line is redrawn in place: {tty:?}"
    );
}

#[test]
fn version_completions_and_man_pages_come_from_the_command_line_definitions() {
    let version = gate().arg("--version").output().unwrap();
    assert_eq!(
        stdout(&version),
        format!("gate {}\n", env!("CARGO_PKG_VERSION"))
    );

    let bash = gate().args(["completions", "bash"]).output().unwrap();
    assert!(bash.status.success());
    let script = stdout(&bash);
    for sub in [
        "pack",
        "apply",
        "run",
        "check",
        "cites",
        "completions",
        "man",
    ] {
        assert!(script.contains(sub), "bash completion lacks {sub}");
    }
    assert!(script.contains("--junit") && script.contains("markdown"));
    testkit::assert_bash_completion("gate", &script);
    let dir = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish"] {
        let out = gate().args(["completions", shell]).output().unwrap();
        assert!(
            out.status.success() && stdout(&out).contains("junit"),
            "{shell}"
        );
    }

    let man = gate().arg("man").output().unwrap();
    let roff = stdout(&man);
    assert!(roff.contains(".TH gate 1"), "{roff}");
    let pages = dir.path().join("man");
    gate().args(["man", "--out"]).arg(&pages).assert().success();
    let run_page = fs::read_to_string(pages.join("gate-run.1")).unwrap();
    assert!(run_page.contains(".TH gate-run") && run_page.contains("junit"));
    if Command::new("groff").arg("--version").output().is_err() {
        testkit::skip(
            "groff",
            "groff is not installed, so the man page was not rendered",
        );
        return;
    }
    let rendered = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(pages.join("gate-run.1"))
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(
        text.contains("\nNAME\n") && text.contains("gate-run"),
        "{text}"
    );
    assert!(text.contains("--junit"), "{text}");
    assert!(
        stderr(&rendered).is_empty(),
        "groff warned: {}",
        stderr(&rendered)
    );
}
