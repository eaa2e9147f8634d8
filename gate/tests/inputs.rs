//! Inputs that are not regular files: a patch, a manifest or a gate.toml given as a FIFO
//! (`<(...)` included) is read, and one nobody writes to ends at Ctrl-C with 130; a folder, a
//! socket or a device is refused with exit 2 and one line naming it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::inputs::{fifo, interrupt_while_waiting, not_files};

use crate::common::*;

const SETTLE: Duration = Duration::from_millis(800);

fn gate_cmd(fx: &Fixture) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.current_dir(fx.repo.path()).env("TMPDIR", fx.out.path());
    cmd
}

/// `gate apply` of the fixture's candidate with `patch` and `manifest` in place of its files.
fn apply_args(fx: &Fixture, patch: &Path, manifest: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> =
        vec!["apply".into(), "--base".into(), (&fx.base).into()];
    args.extend(["--patch".into(), patch.as_os_str().to_owned()]);
    args.extend(["--manifest".into(), manifest.as_os_str().to_owned()]);
    args
}

fn packed() -> Fixture {
    let fx = Fixture::new();
    fx.pack();
    fx.settle();
    fx
}

#[test]
fn a_patch_and_a_manifest_given_as_fifos_with_a_writer_apply() {
    let fx = packed();
    let patch = fifo(&fx.out.path().join("patch.fifo"));
    let manifest = fifo(&fx.out.path().join("manifest.fifo"));
    let feed = |from: PathBuf, to: PathBuf| {
        std::thread::spawn(move || {
            let bytes = std::fs::read(from).unwrap();
            // Opening a FIFO for writing waits for its reader.
            std::fs::write(to, bytes).unwrap();
        })
    };
    let writers = [
        feed(fx.patch(), patch.clone()),
        feed(fx.manifest(), manifest.clone()),
    ];
    let out = gate_cmd(&fx)
        .args(apply_args(&fx, &patch, &manifest))
        .output()
        .unwrap();
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("applies cleanly"), "{}", stdout(&out));
}

#[test]
fn a_patch_given_by_process_substitution_applies() {
    let fx = packed();
    let script = format!(
        "exec \"$GATE\" apply --json --base {} --patch <(cat \"$PATCH\") --manifest <(cat \"$MANIFEST\")",
        fx.base
    );
    let mut bash = Command::new("bash");
    bash.current_dir(fx.repo.path())
        .env("TMPDIR", fx.out.path())
        .env("GATE", env!("CARGO_BIN_EXE_gate"))
        .env("PATCH", fx.patch())
        .env("MANIFEST", fx.manifest())
        .args(["--norc", "--noprofile", "-c", &script]);
    testkit::hermetic(&mut bash);
    let out = testkit::Output::of(&mut assert_cmd::Command::from_std(bash));
    out.assert_exit(0);
    // Each was read once: the record's sha256s are of their bytes, not of an empty second read.
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let c = &json["candidate"];
    assert_eq!(
        c["manifest_sha256"],
        sha256_hex(&std::fs::read(fx.manifest()).unwrap())
    );
    assert_eq!(
        c["patch_sha256"],
        sha256_hex(&std::fs::read(fx.patch()).unwrap())
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn assert_interrupted(ended: &testkit::inputs::Ended, what: &str) {
    assert_eq!(ended.code, Some(130), "{what}: {ended:?}");
    assert!(ended.took < Duration::from_secs(5), "{what}: {ended:?}");
    assert!(ended.stderr.contains("interrupted"), "{what}: {ended:?}");
}

#[test]
fn every_input_nobody_writes_to_ends_at_ctrl_c_with_130() {
    let fx = packed();
    let silent = fifo(&fx.out.path().join("silent.fifo"));
    let cases: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("apply --patch", apply_args(&fx, &silent, &fx.manifest())),
        ("apply --manifest", apply_args(&fx, &fx.patch(), &silent)),
        (
            "check FILE",
            vec!["check".into(), silent.clone().into_os_string()],
        ),
        ("check -", vec!["check".into(), "-".into()]),
        (
            "cites FILE",
            vec![
                "cites".into(),
                "--head".into(),
                "HEAD".into(),
                silent.clone().into_os_string(),
            ],
        ),
        (
            "cites stdin",
            vec!["cites".into(), "--head".into(), "HEAD".into()],
        ),
    ];
    for (what, args) in cases {
        let ended = interrupt_while_waiting(gate_cmd(&fx).args(args), SETTLE);
        assert_interrupted(&ended, what);
    }
    // gate run: its gate.toml a FIFO, and a gate.toml whose patch is one.
    let run = |config: &Path| {
        let mut cmd = gate_cmd(&fx);
        cmd.arg("run")
            .arg("--config")
            .arg(config)
            .arg("--out")
            .arg(fx.out.path().join("run-out"));
        cmd
    };
    let ended = interrupt_while_waiting(&mut run(&silent), SETTLE);
    assert_interrupted(&ended, "run --config FIFO");
    let dir = tempfile::tempdir().unwrap();
    fifo(&dir.path().join("build.patch"));
    std::fs::copy(fx.manifest(), dir.path().join("candidate-manifest.sha256")).unwrap();
    let config = write_config(
        dir.path(),
        &fx.base,
        "[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
    );
    let ended = interrupt_while_waiting(&mut run(&config), SETTLE);
    assert_interrupted(&ended, "run with a FIFO patch");
    assert!(!fx.out.path().join("run-out").exists());
}

#[test]
fn a_folder_a_socket_or_a_device_as_input_is_refused_with_exit_2_naming_it() {
    let fx = packed();
    for (odd, words) in not_files(fx.out.path()) {
        let name = odd.display().to_string();
        let mut cases: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
            ("apply --patch", apply_args(&fx, &odd, &fx.manifest())),
            ("apply --manifest", apply_args(&fx, &fx.patch(), &odd)),
            (
                "check FILE",
                vec!["check".into(), odd.clone().into_os_string()],
            ),
            (
                "cites FILE",
                vec![
                    "cites".into(),
                    "--head".into(),
                    "HEAD".into(),
                    odd.clone().into_os_string(),
                ],
            ),
        ];
        cases.push((
            "run --config",
            vec![
                "run".into(),
                "--config".into(),
                odd.clone().into_os_string(),
                "--out".into(),
                fx.out.path().join("run-out").into_os_string(),
            ],
        ));
        for (what, args) in cases {
            let out = testkit::bin(env!("CARGO_BIN_EXE_gate"))
                .current_dir(fx.repo.path())
                .env("TMPDIR", fx.out.path())
                .args(args)
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{what} {name}: {err}");
            assert!(
                err.contains(&name) && err.contains(words),
                "{what} {name}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{what} {name}: {err}");
        }
    }
    // Standard input that is a device other than /dev/null is refused as well.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let mut cmd = gate_cmd(&fx);
    testkit::hermetic(&mut cmd);
    let mut child = cmd
        .args(["check", "-"])
        .stdin(zero)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // /dev/zero never ends, so the test keeps its own outer limit: a refusal is at once.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gate check - read /dev/zero for 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("standard input"), "{}", stderr(&out));
}

/// A name of a megabyte, in a manifest or a patch, gets a short error: the name's ends and how
/// much was left out, never the name whole.
#[test]
fn a_megabyte_name_gets_a_short_error_not_the_name_echoed() {
    let fx = packed();
    let hex = "0".repeat(64);
    let huge = "n".repeat(1 << 20);
    let dir = fx.out.path();
    let cases = [
        ("long", format!("{hex}  {huge}\n")),
        ("long with ..", format!("{hex}  ../{huge}\n")),
        ("escaped", format!("\\{hex}  {huge}\\n\n")),
        ("tagged", format!("SHA256 ({huge}) = {hex}\n")),
        // Under PATH_MAX, so the `..` is what is refused, the name quoted by its ends.
        (
            "3000 bytes with ..",
            format!("{hex}  ../{}\n", "m".repeat(3000)),
        ),
    ];
    for (what, text) in cases {
        let manifest = dir.join("huge.sha256");
        std::fs::write(&manifest, &text).unwrap();
        let check = testkit::Output::of(
            testkit::bin(env!("CARGO_BIN_EXE_gate"))
                .current_dir(fx.repo.path())
                .arg("check")
                .arg(&manifest),
        );
        let apply = testkit::Output::of(
            testkit::bin(env!("CARGO_BIN_EXE_gate"))
                .current_dir(fx.repo.path())
                .env("TMPDIR", dir)
                .args(apply_args(&fx, &fx.patch(), &manifest)),
        );
        for out in [check, apply] {
            out.assert_exit(2);
            let limit = 200 + manifest.display().to_string().len();
            assert!(
                out.stderr.len() < limit && out.stderr.lines().count() == 1,
                "{what}: {} bytes: {}",
                out.stderr.len(),
                testkit_clip(&out.stderr)
            );
            assert!(
                out.stderr.contains(":1: "),
                "{what}: {}",
                testkit_clip(&out.stderr)
            );
        }
    }
    // A patch whose path is a megabyte: git refuses it, and its words are cut too.
    let patch = dir.join("huge.patch");
    std::fs::write(
        &patch,
        format!("diff --git a/{huge} b/{huge}\nnew file mode 100644\n--- /dev/null\n+++ b/{huge}\n@@ -0,0 +1 @@\n+x\n"),
    )
    .unwrap();
    let out = testkit::Output::of(
        testkit::bin(env!("CARGO_BIN_EXE_gate"))
            .current_dir(fx.repo.path())
            .env("TMPDIR", dir)
            .args(apply_args(&fx, &patch, &fx.manifest())),
    );
    out.assert_exit(2);
    assert!(
        out.stderr.len() < 600 && out.stderr.lines().count() == 1,
        "{} bytes: {}",
        out.stderr.len(),
        testkit_clip(&out.stderr)
    );
}

fn testkit_clip(s: &str) -> String {
    s.chars().take(600).collect()
}
