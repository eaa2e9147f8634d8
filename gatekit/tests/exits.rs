//! One exit policy: the same kind of error ends gate, mutants and probe with the same code
//! (the exit codes of the README, `cmdline::exit::Stop`). Each kind is made happen in each tool, through
//! the umbrella binary, and the three codes must agree. (An interrupt's 130 is proved per tool
//! by their own suites: gate's faults, mutants' cut_short, probe's faults.)

use std::path::{Path, PathBuf};

use testkit::{Output, Repo};

/// A tool's command through the umbrella, in `dir`, with HOME and the XDG folders inside `home`.
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

/// A repository on `main` with a base commit, a candidate committed on `work` and packed into
/// `cand/` (patch, manifest, gate.toml with `worktree`), and a mutants.toml with `suite`.
struct World {
    home: tempfile::TempDir,
    repo: Repo,
}

const LIB: &str = "add() { echo $(($1 + $2)); }\n";
const TEST: &str = ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed'\n";

impl World {
    fn new() -> World {
        let home = tempfile::tempdir().unwrap();
        let repo = Repo::new();
        repo.write("lib.sh", LIB).write("test.sh", TEST);
        repo.commit_all("base");
        World { home, repo }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn cmd(&self, name: &str) -> assert_cmd::Command {
        tool(self.home(), self.repo.path(), name)
    }

    /// Packs a one-line candidate into `HOME/cand` and writes its gate.toml with `extra`.
    fn gate_toml(&self, extra: &str) -> PathBuf {
        let base = self.repo.head();
        self.repo.git(["checkout", "-q", "-b", "work"]);
        self.repo.write("notes.txt", "a note\n");
        self.repo.git(["add", "-A"]);
        let cand = self.home().join("cand");
        Output::of(
            self.cmd("gate")
                .args(["pack", "--base", &base, "--out"])
                .arg(&cand),
        )
        .assert_exit(0);
        self.repo.commit_all("candidate");
        self.repo.git(["checkout", "-q", "main"]);
        let config = cand.join("gate.toml");
        std::fs::write(
            &config,
            format!(
                "base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n{extra}"
            ),
        )
        .unwrap();
        config
    }

    /// Writes mutants.toml with the suite `run` (committed, so the tree is clean).
    fn mutants_toml(&self, run: &str, extra: &str) {
        self.repo.write(
            "mutants.toml",
            format!(
                "[suites.unit]\nrun = \"{run}\"\n\n[[mutant]]\nname = \"plus\"\nfile = \"lib.sh\"\nanchor = \"$1 + $2\"\nreplace = \"$1 - $2\"\nsuite = \"unit\"\n{extra}"
            ),
        );
        self.repo.commit_all("spec");
    }

    /// `probe check` of the test client (limit 500) with `--out out`.
    fn probe_check(&self, out: &Path) -> assert_cmd::Command {
        let exe = env!("CARGO_BIN_EXE_gatekit");
        let client = format!(
            "{exe} probe test-client --limit 500 --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
            self.home().display()
        );
        let mut cmd = self.cmd("probe");
        cmd.args(["check", "--expect", "500", "--client", &client, "--out"])
            .arg(out);
        cmd
    }
}

/// Runs each tool's case and asserts they all end with `code`, each with one line on stderr
/// naming the tool.
fn all_end_with(code: i32, cases: [(&str, Output); 3]) {
    for (name, out) in &cases {
        assert_eq!(out.exit(), code, "{name}: {out}");
        assert!(out.stderr.contains(name), "{name}: {out}");
    }
}

#[test]
fn bad_usage_is_2_in_every_tool() {
    let w = World::new();
    all_end_with(
        2,
        ["gate", "mutants", "probe"].map(|name| {
            (
                name,
                Output::of(w.cmd(name).args(["run", "--no-such-flag"])),
            )
        }),
    );
}

#[test]
fn a_bad_input_file_is_2_in_every_tool() {
    let w = World::new();
    let config = w.gate_toml("tmeout = \"1m\"\n");
    w.mutants_toml("sh test.sh", "colour = 1\n");
    let mcp = w.home().join("mcp.json");
    std::fs::write(&mcp, "{ not json").unwrap();
    all_end_with(
        2,
        [
            (
                "gate",
                Output::of(w.cmd("gate").args(["run", "--config"]).arg(&config)),
            ),
            (
                "mutants",
                Output::of(w.cmd("mutants").args(["run", "mutants.toml"])),
            ),
            (
                "probe",
                Output::of(
                    w.cmd("probe")
                        .args(["test-client", "--n", "10", "--mcp-config"])
                        .arg(&mcp),
                ),
            ),
        ],
    );
}

#[test]
fn an_out_that_cannot_be_written_is_2_in_every_tool() {
    let w = World::new();
    let config = w.gate_toml("");
    w.mutants_toml("sh test.sh", "");
    // A folder below a regular file: no tool can make it.
    let file = w.home().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = file.join("out");
    all_end_with(
        2,
        [
            (
                "gate",
                Output::of(
                    w.cmd("gate")
                        .args(["run", "--config"])
                        .arg(&config)
                        .arg("--out")
                        .arg(&out),
                ),
            ),
            (
                "mutants",
                Output::of(
                    w.cmd("mutants")
                        .args(["run", "mutants.toml", "--out"])
                        .arg(&out),
                ),
            ),
            ("probe", Output::of(&mut w.probe_check(&out))),
        ],
    );
}

#[test]
fn an_out_inside_a_gatekit_checkout_is_refused_with_2_in_every_tool() {
    let w = World::new();
    let config = w.gate_toml("");
    w.mutants_toml("sh test.sh", "");
    // A folder marked as a gatekit checkout (another run's): no output may land in one.
    let checkout = w.home().join("checkout");
    std::fs::create_dir_all(checkout.join(".git")).unwrap();
    std::fs::write(checkout.join(".git/gatekit-owner"), "run 1 1\n").unwrap();
    let out = checkout.join("out");
    all_end_with(
        2,
        [
            (
                "gate",
                Output::of(
                    w.cmd("gate")
                        .args(["run", "--config"])
                        .arg(&config)
                        .arg("--out")
                        .arg(&out),
                ),
            ),
            (
                "mutants",
                Output::of(
                    w.cmd("mutants")
                        .args(["run", "mutants.toml", "--out"])
                        .arg(&out),
                ),
            ),
            ("probe", Output::of(&mut w.probe_check(&out))),
        ],
    );
    assert!(!out.exists(), "an output landed in a checkout");
}

#[test]
fn a_failed_precondition_is_4_in_every_tool() {
    let w = World::new();
    // gate: the checkout's setup fails; mutants: the baseline is red; probe: the server named
    // cannot start.
    let config = w.gate_toml("\n[worktree]\nsetup = \"exit 3\"\n");
    w.mutants_toml("false", "");
    let out = w.home().join("out");
    all_end_with(
        4,
        [
            (
                "gate",
                Output::of(
                    w.cmd("gate")
                        .args(["run", "--config"])
                        .arg(&config)
                        .arg("--out")
                        .arg(out.join("gate")),
                ),
            ),
            (
                "mutants",
                Output::of(
                    w.cmd("mutants")
                        .args(["run", "mutants.toml", "--out"])
                        .arg(out.join("mutants")),
                ),
            ),
            (
                "probe",
                Output::of(w.cmd("probe").args(["call", "--", "/nonexistent/server"])),
            ),
        ],
    );
}

#[test]
fn an_error_of_no_named_kind_met_while_writing_is_2_in_every_tool() {
    let w = World::new();
    w.mutants_toml("sh test.sh", "");
    let file = w.home().join("a-file");
    std::fs::write(&file, "x").unwrap();
    // probe's test client saves a result over its limit into --saved-dir, with no output guard
    // in front: the failure is a plain I/O error met while writing, named by no kind.
    let mcp = w.home().join("mcp.json");
    let server = mcp_config(env!("CARGO_BIN_EXE_gatekit"));
    std::fs::write(&mcp, server).unwrap();
    let base = w.repo.head();
    all_end_with(
        2,
        [
            (
                "gate",
                Output::of(
                    w.cmd("gate")
                        .args(["pack", "--base", &base, "--out"])
                        .arg(file.join("cand")),
                ),
            ),
            (
                "mutants",
                Output::of(
                    w.cmd("mutants")
                        .args(["run", "mutants.toml", "--out"])
                        .arg(file.join("out")),
                ),
            ),
            (
                "probe",
                Output::of(
                    w.cmd("probe")
                        .args([
                            "test-client",
                            "--limit",
                            "500",
                            "--n",
                            "600",
                            "--mcp-config",
                        ])
                        .arg(&mcp)
                        .arg("--saved-dir")
                        .arg(file.join("saved")),
                ),
            ),
        ],
    );
}

/// An MCP config whose one server is `EXE probe serve`.
fn mcp_config(exe: &str) -> String {
    format!(r#"{{"mcpServers": {{"probe": {{"command": {exe:?}, "args": ["probe", "serve"]}}}}}}"#)
}

/// A tool's command as a plain process (for a stdout of the test's choosing), as [`tool`]
/// makes it.
fn std_tool(home: &Path, dir: &Path, name: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gatekit"));
    testkit::hermetic(&mut cmd)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .arg(name);
    cmd
}

#[test]
fn a_closed_or_full_stdout_never_changes_the_exit_code_or_the_files_a_run_owes_in_every_tool() {
    let w = World::new();
    // Findings in each tool: a failing suite, a mutant no suite notices, a moved threshold.
    let config = w.gate_toml("\n[[suite]]\nname = \"red\"\nrun = \"exit 1\"\n");
    w.mutants_toml("true", "");
    let exe = env!("CARGO_BIN_EXE_gatekit");
    let client = format!(
        "{exe} probe test-client --limit 500 --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
        w.home().display()
    );
    // Stdout a pipe whose reader is gone (EPIPE), or a full disk (ENOSPC, /dev/full).
    for (kind, full) in [("closed", false), ("full", true)] {
        let out = w.home().join(kind);
        let (gate_out, mutants_out, probe_out) =
            (out.join("gate"), out.join("mutants"), out.join("probe"));
        let mut gate = std_tool(w.home(), w.repo.path(), "gate");
        gate.args(["run", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(&gate_out)
            .arg("--junit")
            .arg(gate_out.join("junit.xml"))
            .arg("--attest")
            .arg(out.join("gate.intoto.json"));
        let mut mutants = std_tool(w.home(), w.repo.path(), "mutants");
        mutants
            .args(["run", "mutants.toml", "--no-canary", "--out"])
            .arg(&mutants_out)
            .arg("--attest")
            .arg(out.join("mutants.intoto.json"));
        let mut probe = std_tool(w.home(), w.repo.path(), "probe");
        probe
            .args(["check", "--expect", "400", "--client", &client, "--out"])
            .arg(&probe_out);
        for (name, cmd, owed) in [
            (
                "gate",
                &mut gate,
                vec![
                    gate_out.join("gate.json"),
                    gate_out.join("gate-summary.txt"),
                    gate_out.join("junit.xml"),
                    out.join("gate.intoto.json"),
                ],
            ),
            (
                "mutants",
                &mut mutants,
                vec![
                    mutants_out.join("mutants.json"),
                    mutants_out.join("mutants.txt"),
                    mutants_out.join("junit.xml"),
                    out.join("mutants.intoto.json"),
                ],
            ),
            (
                "probe",
                &mut probe,
                vec![
                    probe_out.join("results.json"),
                    probe_out.join("results.txt"),
                ],
            ),
        ] {
            let ran = if full {
                let dev_full = std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap();
                Output::from(
                    cmd.stdin(std::process::Stdio::null())
                        .stdout(dev_full)
                        .output()
                        .unwrap(),
                )
            } else {
                Output::with_closed_stdout(cmd)
            };
            assert_eq!(
                ran.exit(),
                1,
                "{name}, stdout {kind}: the verdict is 1\n{ran}"
            );
            for bad in ["panicked", "failed printing", "Broken pipe"] {
                assert!(!ran.stderr.contains(bad), "{name}: {ran}");
            }
            // A full disk is said; a reader that went away is not.
            assert_eq!(ran.stderr.contains("No space left"), full, "{name}: {ran}");
            for file in owed {
                assert!(
                    file.is_file(),
                    "{name}, stdout {kind}: {} not written\n{ran}",
                    file.display()
                );
            }
        }
        // The records say the same verdict the exit code does.
        let read = |p: PathBuf| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        assert_eq!(read(gate_out.join("gate.json"))["exit_code"], 1);
        assert_eq!(read(mutants_out.join("mutants.json"))["exit_code"], 1);
    }
}

#[test]
fn an_io_failure_after_the_run_began_to_write_is_74_in_every_tool() {
    let w = World::new();
    let disk = w.home().join("disk");
    let Some(_mounted) = testkit::Tmpfs::mount(&disk, "512k") else {
        return;
    };
    // Each tool's first child fills the disk its --out is on, after the tool took --out and
    // wrote its first files there; the next write fails with "No space left on device".
    let fill = |name: &str| {
        format!(
            "dd if=/dev/zero of='{}' bs=4k 2>/dev/null; true",
            disk.join(name).display()
        )
    };
    let config = w.gate_toml(&format!(
        "\n[[suite]]\nname = \"fills\"\nrun = \"{}\"\n",
        fill("gate-filler")
    ));
    w.mutants_toml(&format!("{}; sh test.sh", fill("mutants-filler")), "");
    let exe = env!("CARGO_BIN_EXE_gatekit");
    let client = format!(
        "{}; {exe} probe test-client --limit 500 --mcp-config {{mcp_config}} --n {{n}}",
        fill("probe-filler")
    );
    // One tool at a time on the disk, its filler removed before the next starts.
    let alone = |mut cmd: assert_cmd::Command, filler: &str| {
        let out = Output::of(&mut cmd);
        std::fs::remove_file(disk.join(filler)).unwrap();
        out
    };
    let mut gate = w.cmd("gate");
    gate.args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(disk.join("gate"));
    let mut mutants = w.cmd("mutants");
    mutants
        .args(["run", "mutants.toml", "--out"])
        .arg(disk.join("mutants"));
    let mut probe = w.cmd("probe");
    probe
        .args(["check", "--expect", "500", "--client", &client, "--out"])
        .arg(disk.join("probe"));
    let cases = [
        ("gate", alone(gate, "gate-filler")),
        ("mutants", alone(mutants, "mutants-filler")),
        ("probe", alone(probe, "probe-filler")),
    ];
    for (name, out) in &cases {
        assert!(
            out.stderr.contains("No space left on device"),
            "{name}: {}",
            out.stderr
        );
    }
    all_end_with(74, cases);
}
