//! `mutants run` on a terminal (a real pty through `script`) and in pipes and files: colour
//! only where asked, the live line only on a terminal; completions and man pages from the
//! command-line definitions.

use std::fs;
use std::process::Command;

use crate::common::*;
use testkit::Output;

/// Runs `mutants ARGS` under a pseudo-terminal (util-linux `script`), so stdout and stderr are
/// a terminal; everything it wrote there. `None` when `script` is missing.
fn on_a_terminal(fx: &Fixture, args: &str, env: &[(&str, &str)]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        testkit::skip(
            "script",
            "util-linux `script` is not installed, so no pty test",
        );
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_mutants");
    let mut cmd = Command::new("script");
    testkit::hermetic(&mut cmd);
    cmd.current_dir(fx.repo.path())
        .args(["-q", "-e", "-c", &format!("{bin} {args}"), "/dev/null"])
        .env("TERM", "xterm")
        .env("PIDS", fx.pids.path())
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map(Output::from).unwrap();
    Some(out.stdout.clone())
}

#[test]
fn verdicts_are_coloured_on_a_terminal_or_when_asked_and_never_in_files_or_pipes() {
    let spec = format!(
        "{SUITE}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("spawn true", "spawn() { :; }", "spawn() { true; }", "")
    );
    let fx = Fixture::new(&spec);
    let red = "\x1b[1;31mSURVIVED\x1b[0m";
    let green = "\x1b[1;32mkilled\x1b[0m";

    let piped = fx.run(&[]);
    assert!(!piped.stdout.contains('\x1b'));
    assert!(!piped.stderr.contains('\x1b'));
    let always = fx.run(&["--color", "always"]);
    let painted = always.stdout.clone();
    assert!(
        painted.contains(red) && painted.contains(green),
        "{painted:?}"
    );
    // Painted after alignment: the columns line up as in the plain table.
    let file = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(!file.contains('\x1b'), "files are never coloured: {file:?}");
    assert_eq!(report::color::strip(&painted), file);
    let err = always.stderr.as_str();
    // (Which finishes first depends on the order mutants are taken in: longest first once a
    // report in --out timed them.)
    assert!(err.contains(&format!("/2] {red}")), "{err:?}");

    let out = fx.out();
    let args = format!("run mutants.toml --out {}", out.display());
    let Some(tty) = on_a_terminal(&fx, &args, &[]) else {
        return;
    };
    assert!(tty.contains(red), "auto colours a terminal: {tty:?}");
    let no_color = on_a_terminal(&fx, &args, &[("NO_COLOR", "1")]).unwrap();
    assert!(
        no_color.contains("SURVIVED") && !no_color.contains(red),
        "{no_color:?}"
    );
    let never = on_a_terminal(&fx, &format!("{args} --color never"), &[]).unwrap();
    assert!(!never.contains(red), "{never:?}");
}

#[test]
fn a_running_mutant_ticks_its_seconds_on_a_terminal_and_gets_plain_lines_elsewhere() {
    let spec = format!(
        "{}{}",
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n",
        mutant("slow", "spin() { :; }", "spin() { sleep 2.6; }", "")
    );
    let fx = Fixture::new(&spec);
    let plain = fx.run(&[]);
    let err = plain.stderr.as_str();
    assert!(err.contains("[1/1] SURVIVED"), "{err}");
    assert!(!err.contains('\r'), "no redraws off a terminal: {err:?}");

    let args = format!("run mutants.toml --out {}", fx.out().display());
    let Some(tty) = on_a_terminal(&fx, &args, &[]) else {
        return;
    };
    for tick in ["running slow (1s)", "running slow (2s)"] {
        assert!(tty.contains(tick), "no {tick:?} in {tty:?}");
    }
    assert!(tty.contains("0 killed, 0 survived"), "{tty:?}");
    // Back to the line's start and erase it (indicatif erases the whole line, `ESC [ 2 K`).
    assert!(
        tty.contains("\r\x1b[K") || tty.contains("\r\x1b[2K"),
        "the live line is redrawn in place: {tty:?}"
    );
}

#[test]
fn version_completions_and_man_pages_come_from_the_command_line_definitions() {
    let mutants = || testkit::bin(env!("CARGO_BIN_EXE_mutants"));
    let version = mutants()
        .arg("--version")
        .output()
        .map(Output::from)
        .unwrap();
    assert_eq!(
        version.stdout.as_str(),
        format!("mutants {}\n", env!("CARGO_PKG_VERSION"))
    );
    let bash = mutants()
        .args(["completions", "bash"])
        .output()
        .map(Output::from)
        .unwrap();
    assert!((bash.code == Some(0)));
    let script = bash.stdout.clone();
    for word in [
        "run",
        "check",
        "list",
        "merge",
        "completions",
        "man",
        "--shard",
        "--format",
        "markdown",
    ] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    testkit::assert_bash_completion("mutants", &script);
    let dir = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish"] {
        let out = mutants()
            .args(["completions", shell])
            .output()
            .map(Output::from)
            .unwrap();
        assert!(
            (out.code == Some(0)) && out.stdout.contains("shard"),
            "{shell}"
        );
    }

    let man = mutants().arg("man").output().map(Output::from).unwrap();
    assert!(man.stdout.contains(".TH mutants 1"));
    let pages = dir.path().join("man");
    mutants()
        .args(["man", "--out"])
        .arg(&pages)
        .assert()
        .success();
    for page in [
        "mutants.1",
        "mutants-run.1",
        "mutants-check.1",
        "mutants-list.1",
        "mutants-merge.1",
    ] {
        assert!(pages.join(page).is_file(), "{page}");
    }
    if Command::new("groff").arg("--version").output().is_err() {
        testkit::skip(
            "groff",
            "groff is not installed, so the man page was not rendered",
        );
        return;
    }
    let rendered = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(pages.join("mutants-run.1"))
        .output()
        .map(Output::from)
        .unwrap();
    assert!((rendered.code == Some(0)));
    let text = rendered.stdout.as_str();
    assert!(
        text.contains("mutants-run") && text.contains("--shard"),
        "{text}"
    );
    assert!(
        rendered.stderr.is_empty(),
        "groff warned: {}",
        rendered.stderr.as_str()
    );
}
