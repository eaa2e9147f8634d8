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

/// A candidate that changes each of `changed` (path, body, executable), over a base that has
/// them and `test.sh`, gated with `gate_toml`.
fn candidate_of(
    changed: &[(&str, &str, bool)],
    test_sh: &str,
    gate_toml: &str,
) -> (Repo, tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::new();
    repo.write("test.sh", test_sh);
    let write = |repo: &Repo, tail: &str| {
        for (path, body, exec) in changed {
            repo.write(path, format!("{body}{tail}"));
            if *exec {
                let p = repo.path().join(path);
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
    };
    write(&repo, "");
    let base = repo.commit_all("base");
    write(&repo, "# changed\n");
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    let config = pack_with_config(&repo, &base, out.path(), gate_toml);
    (repo, out, config)
}

const ADD: &str = "#!/bin/sh\necho $(( $1 + $2 ))\n";
const RUNS_ADD: &str = "[ \"$(\"${ADD_BIN:-bin/add}\" 2 3)\" = 5 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n";
const UNIT: &str = "[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n";

#[test]
fn an_executable_script_without_an_ending_is_source_and_a_suite_running_the_users_copy_is_exit_4() {
    let (repo, out, config) = candidate_of(&[("bin/add", ADD, true)], RUNS_ADD, UNIT);
    let own = run(&repo, &config, &out.path().join("own"), None, true);
    own.assert_exit(0);
    assert!(
        own.stdout
            .contains("canary    1 source path(s) made unloadable, 1 suite run(s), 1 noticed"),
        "{own}"
    );
    // The suite runs the user's own bin/add by its absolute path.
    let mut cmd = gate();
    cmd.current_dir(repo.path())
        .env("ADD_BIN", repo.path().join("bin/add"))
        .args(["run", "--canary", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(out.path().join("users"));
    let users = Output::of(&mut cmd);
    users.assert_exit(4);
    assert!(
        users
            .stdout
            .contains("NOT NOTICED: unit with bin/add unloadable"),
        "{users}"
    );
}

#[test]
fn a_file_a_suites_command_names_is_source_whatever_its_name() {
    let (repo, out, config) = candidate_of(
        &[("check", "[ 1 = 1 ] && echo '1 passed, 0 failed'\n", false)],
        "unused\n",
        "[[suite]]\nname = \"unit\"\nrun = \"sh ./check\"\n",
    );
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(0);
    assert!(
        run.stdout
            .contains("canary    1 source path(s) made unloadable, 1 suite run(s), 1 noticed"),
        "{run}"
    );
}

#[test]
fn a_candidate_with_no_source_path_is_a_finding_not_a_pass() {
    let (repo, out, config) = candidate_of(
        &[("NOTES.md", "notes\n", false)],
        "echo '1 passed, 0 failed'\n",
        UNIT,
    );
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(4);
    assert!(run.stdout.starts_with("gate FAIL"), "{run}");
    assert!(
        run.stdout
            .contains("the candidate has no source path to make unloadable"),
        "{run}"
    );
}

#[test]
fn canary_skip_leaves_a_generated_file_out_and_the_report_says_which_and_why() {
    let toml = format!("{UNIT}\n[canary]\nskip = [\"dist/**\"]\n");
    // A generated bundle beside the script, changed in the same candidate.
    let (repo, out, config) = candidate_of(
        &[
            ("bin/add", ADD, true),
            ("dist/app/bundle.js", "console.log(1)\n", false),
        ],
        RUNS_ADD,
        &toml,
    );
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(0);
    assert!(
        run.stdout
            .contains("canary    left out: dist/app/bundle.js ([canary] skip \"dist/**\")"),
        "{run}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("gate-out/gate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["canary_left_out"][0]["path"], "dist/app/bundle.js");
    assert_eq!(json["canaries"].as_array().unwrap().len(), 1, "{json}");
}

#[test]
fn a_canary_skip_glob_that_cannot_be_read_is_bad_input_at_its_line() {
    let toml = format!("{UNIT}\n[canary]\nskip = [\"dist/[a\"]\n");
    let (repo, out, config) = candidate_of(&[("bin/add", ADD, true)], RUNS_ADD, &toml);
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(2);
    assert!(run.stderr.contains("gate.toml:"), "{run}");
    assert!(run.stderr.contains("canary.skip \"dist/[a\""), "{run}");
}

#[test]
fn each_canary_starts_from_the_tree_under_review_so_a_path_no_suite_reads_is_not_noticed() {
    // The suite reads `a.sh` only. Were `a.sh`'s canary left in place, the suite would fail
    // during `b.sh`'s canary too, and `b.sh` would pass for a path the suites read.
    let (repo, out, config) = candidate_of(
        &[
            ("a.sh", "add() { echo $(( $1 + $2 )); }\n", false),
            ("b.sh", "sub() { echo $(( $1 - $2 )); }\n", false),
        ],
        ". ./a.sh\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        UNIT,
    );
    let run = run(&repo, &config, &out.path().join("gate-out"), None, true);
    run.assert_exit(4);
    assert!(
        run.stdout
            .contains("NOT NOTICED: unit with b.sh unloadable"),
        "{run}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("gate-out/gate.json")).unwrap(),
    )
    .unwrap();
    let noticed: Vec<(&str, bool)> = json["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap(), c["noticed"].as_bool().unwrap()))
        .collect();
    assert_eq!(noticed, [("a.sh", true), ("b.sh", false)], "{json}");
}
