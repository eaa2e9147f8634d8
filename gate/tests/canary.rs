//! `gate run --canary`: each source path of the candidate made unloadable, the suites rerun
//! until one notices. A suite that reads another checkout passes without the file: PASS turns
//! into exit 4, naming the path and the suite.

use crate::common::{gate, pack_with_config};
use testkit::{Output, Repo};

/// A candidate that changes `lib.sh` (source) and `NOTES.md` (not source); its suite loads
/// `lib.sh` from `$LIB_DIR` when set, as an editable install resolves to the user's checkout.
fn candidate() -> (Repo, tempfile::TempDir, std::path::PathBuf) {
    let repo = Repo::new();
    repo.write("lib.sh", "add() { echo $(( $1 + $2 )); }\n")
        .write("NOTES.md", "notes\n")
        .write(
            "test.sh",
            ". \"${LIB_DIR:-.}/lib.sh\"\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        );
    let base = repo.commit_all("base");
    repo.write("lib.sh", "add() { echo $(( $2 + $1 )); }\n")
        .write("NOTES.md", "more notes\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    let config = pack_with_config(
        &repo,
        &base,
        out.path(),
        "[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n",
    );
    (repo, out, config)
}

fn run(
    repo: &Repo,
    config: &std::path::Path,
    out: &std::path::Path,
    lib_dir: Option<&std::path::Path>,
    canary: bool,
) -> Output {
    let mut cmd = gate();
    cmd.current_dir(repo.path()).arg("run");
    if canary {
        cmd.arg("--canary");
    }
    if let Some(d) = lib_dir {
        cmd.env("LIB_DIR", d);
    }
    Output::of(cmd.arg("--config").arg(config).arg("--out").arg(out))
}

#[test]
fn a_suite_that_reads_the_checkout_notices_each_source_path_and_the_gate_passes() {
    let (repo, out, config) = candidate();
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(0);
    assert!(
        run.stdout
            .contains("canary    1 source path(s) made unloadable, 1 suite run(s), 1 noticed"),
        "NOTES.md is not source, lib.sh is: {run}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("gate-out/gate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["canaries"][0]["path"], "lib.sh");
    assert_eq!(json["canaries"][0]["noticed"], true);
    assert_eq!(repo.read("lib.sh"), b"add() { echo $(( $2 + $1 )); }\n");
}

#[test]
fn a_suite_that_reads_the_users_checkout_passes_without_canary_and_is_exit_4_with_it() {
    let (repo, out, config) = candidate();
    // The false PASS the canary exists for: the suite tested the user's files.
    let plain = run(
        &repo,
        &config,
        &out.path().join("plain"),
        Some(repo.path()),
        false,
    );
    plain.assert_exit(0);
    let run = run(
        &repo,
        &config,
        &out.path().join("gate-out"),
        Some(repo.path()),
        true,
    );
    run.assert_exit(4);
    assert!(
        run.stdout
            .contains("NOT NOTICED: unit with lib.sh unloadable"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("every suite passed with lib.sh made unloadable"),
        "{run}"
    );
    assert!(run.stdout.starts_with("gate FAIL"), "{run}");
}
