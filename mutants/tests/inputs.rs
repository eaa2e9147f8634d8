//! Inputs that are not regular files: a spec or a gate.toml given as a FIFO nobody writes to
//! ends at Ctrl-C with 130, one with a writer is read, and a folder, a socket or a device is
//! refused with exit 2 and one line naming it.

use std::process::Command;
use std::time::Duration;

use testkit::inputs::{fifo, interrupt_while_waiting, not_files};

use crate::common::{mutant, Fixture, SUITE};

fn spec() -> String {
    format!("{SUITE}{}", mutant("m1", "$1 + $2", "$1 - $2", ""))
}

fn mutants_cmd(fx: &Fixture) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    cmd.current_dir(fx.repo.path()).env("PIDS", fx.pids.path());
    cmd
}

#[test]
fn a_spec_or_gate_toml_nobody_writes_to_ends_at_ctrl_c_with_130() {
    let fx = Fixture::new(&spec());
    let silent = fifo(&fx.out.path().join("silent.fifo"));
    let out = fx.out();
    let runs: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("check SPEC", vec!["check".into(), silent.clone().into()]),
        ("list SPEC", vec!["list".into(), silent.clone().into()]),
        (
            "run SPEC",
            vec![
                "run".into(),
                silent.clone().into(),
                "--out".into(),
                out.clone().into(),
            ],
        ),
        (
            "run --candidate",
            vec![
                "run".into(),
                "mutants.toml".into(),
                "--candidate".into(),
                silent.clone().into(),
                "--out".into(),
                out.clone().into(),
            ],
        ),
    ];
    for (what, args) in runs {
        let ended =
            interrupt_while_waiting(mutants_cmd(&fx).args(args), Duration::from_millis(800));
        assert_eq!(ended.code, Some(130), "{what}: {ended:?}");
        assert!(ended.took < Duration::from_secs(5), "{what}: {ended:?}");
        assert!(ended.stderr.contains("interrupted"), "{what}: {ended:?}");
    }
    assert!(!out.exists(), "an interrupted read left {}", out.display());
}

#[test]
fn a_spec_given_as_a_fifo_with_a_writer_is_read() {
    let fx = Fixture::new(&spec());
    let piped = fifo(&fx.out.path().join("spec.fifo"));
    let body = spec();
    let writer = {
        let piped = piped.clone();
        std::thread::spawn(move || std::fs::write(piped, body).unwrap())
    };
    let out = testkit::Output::of(fx.cmd().arg("check").arg(&piped));
    writer.join().unwrap();
    out.assert_exit(0);
}

#[test]
fn a_folder_a_socket_or_a_device_as_spec_or_gate_toml_is_refused_with_exit_2() {
    let fx = Fixture::new(&spec());
    for (odd, words) in not_files(fx.out.path()) {
        let name = odd.display().to_string();
        for (what, args) in [
            ("check", vec!["check".into(), odd.clone().into_os_string()]),
            (
                "run",
                vec![
                    "run".into(),
                    odd.clone().into_os_string(),
                    "--out".into(),
                    fx.out().into_os_string(),
                ],
            ),
            (
                "run --candidate",
                vec![
                    "run".into(),
                    "mutants.toml".into(),
                    "--candidate".into(),
                    odd.clone().into_os_string(),
                    "--out".into(),
                    fx.out().into_os_string(),
                ],
            ),
        ] as [(&str, Vec<std::ffi::OsString>); 3]
        {
            let out = testkit::Output::of(fx.cmd().args(args));
            assert_eq!(out.code, Some(2), "{what} {name}: {out}");
            assert!(
                out.stderr.contains(&name) && out.stderr.contains(words),
                "{what} {name}: {out}"
            );
            assert_eq!(out.stderr.lines().count(), 1, "{what} {name}: {out}");
        }
    }
}
