//! Every text report and what the run commands print keep within 120 columns, however long
//! the paths and names they quote: gate's summary (its `patch` line, checkout, logs, findings)
//! and mutants.txt (its `candidate:` line, the table, the canary and baseline lines).

use std::path::Path;

use testkit::{Output, Repo};

const WIDTH: usize = 120;

/// Panics naming each line of `text` (from `what`) wider than 120 columns.
fn assert_within(what: &str, text: &str) {
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > WIDTH).collect();
    assert!(
        wide.is_empty(),
        "{what}: lines over {WIDTH} columns:\n{wide:#?}\n{text}"
    );
}

fn tool(home: &Path, dir: &Path, name: &str) -> assert_cmd::Command {
    let mut cmd = crate::gatekit();
    cmd.current_dir(dir)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .arg(name);
    cmd
}

#[test]
fn long_paths_and_names_keep_the_summaries_within_120_columns() {
    let home = tempfile::tempdir().unwrap();
    let repo = Repo::new();
    let long = "a-file-name-long-enough-to-push-any-line-past-the-width-of-a-review";
    repo.write("lib.sh", "add() { echo $(($1 + $2)); }\n")
        .write(
            "test.sh",
            ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        )
        .write(format!("{long}.txt"), "v1\n");
    let base = repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "work"]);
    repo.write(format!("{long}.txt"), "v2\n")
        .write(format!("gone-{long}.txt"), "new\n");
    repo.git(["add", "-A"]);
    // The candidate's files deep below folders with long names.
    let deep = home.path().join(format!("{long}-1/{long}-2/{long}-3"));
    Output::of(
        tool(home.path(), repo.path(), "gate")
            .args(["pack", "--base", &base, "--out"])
            .arg(&deep),
    )
    .assert_exit(0);
    repo.commit_all("candidate");
    repo.git(["checkout", "-q", "main"]);
    let config = deep.join("gate.toml");
    std::fs::write(
        &config,
        format!(
            "base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n\
             [[suite]]\nname = \"unit-{long}\"\nrun = \"sh test.sh\"\n\n\
             [[suite]]\nname = \"red-{long}\"\nrun = \"echo 'FAILED tests/test_{long}.py::test_{long} - assert {long}'; exit 1\"\n"
        ),
    )
    .unwrap();
    let gate_out = deep.join(format!("out-{long}"));
    let gate = Output::of(
        tool(home.path(), repo.path(), "gate")
            .args(["run", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(&gate_out),
    );
    gate.assert_exit(1);
    assert_within("gate run's stdout", &gate.stdout);
    let summary = std::fs::read_to_string(gate_out.join("gate-summary.txt")).unwrap();
    assert_within("gate-summary.txt", &summary);
    assert!(summary.contains("build.patch"), "{summary}");
    // gate apply prints the same header lines.
    let apply = Output::of(
        tool(home.path(), repo.path(), "gate")
            .env("TMPDIR", home.path())
            .args(["apply", "--base", &base, "--patch"])
            .arg(deep.join("build.patch"))
            .arg("--manifest")
            .arg(deep.join("candidate-manifest.sha256")),
    );
    assert_within("gate apply's stdout", &apply.stdout);

    // mutants on the same candidate: a long mutant name and claim, a suite that misses it.
    repo.write(
        "mutants.toml",
        format!(
            "[suites.unit-{long}]\nrun = \"sh test.sh\"\n\n[suites.blind]\nrun = \"true\"\n\n\
             [[mutant]]\nname = \"plus to minus {long}\"\nfile = \"lib.sh\"\nanchor = \"$1 + $2\"\n\
             replace = \"$1 - $2\"\nsuite = \"unit-{long}\"\nundoes = \"adding {long}\"\n\n\
             [[mutant]]\nname = \"unseen {long}\"\nfile = \"lib.sh\"\nanchor = \"add()\"\n\
             replace = \"add ()\"\nsuite = \"blind\"\n"
        ),
    );
    repo.commit_all("spec");
    let mutants_out = deep.join(format!("mutants-{long}"));
    let mutants = Output::of(
        tool(home.path(), repo.path(), "mutants")
            .args(["run", "mutants.toml", "--no-canary", "--candidate"])
            .arg(&config)
            .arg("--out")
            .arg(&mutants_out),
    );
    assert!(mutants.exit() == 1, "{mutants}");
    assert_within("mutants run's stdout", &mutants.stdout);
    let text = std::fs::read_to_string(mutants_out.join("mutants.txt")).unwrap();
    assert_within("mutants.txt", &text);
    assert!(text.contains("candidate: "), "{text}");
}
