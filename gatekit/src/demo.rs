//! `gatekit demo`: a tour of the whole workflow on a sample, with nothing to set up.
//!
//! A small shell library (compiled into the binary from `gatekit/demo/`) is committed to a new
//! repository in a temp dir; a later unrelated commit gives drift something to look through;
//! the candidate (made on a branch from the base: a fix, a new test file, a binary file, a
//! deleted file whose name has a space) is staged and packed with `gate pack`. Then the tour:
//! `gate run` applies it to a fresh worktree of the base and runs its suites; `mutants run
//! --candidate` runs the sample's mutants on the candidate with a comparison suite (the cases
//! the base already had); `probe check` finds the inline limit of probe's built-in test client.
//!
//! The umbrella binary carries the three tools (it links their libraries and answers to their
//! names, see `cli.rs`), so `cargo run --bin gatekit -- demo` needs nothing else built. The
//! gate steps call gate's library; mutants and probe each run as their own process through
//! the report runner, as a user would run them. The user's own checkout is never touched.

use std::fs;
use std::path::Path;

use std::time::Duration;

use anyhow::{Context, Result};
use cmdline::Exit;
use report::{Outcome, RunRecord};
use runner::Job;

use candidate::git::Git;
use candidate::pack;
use gate::run::{run_gate, RunSettings};

/// (path in the sample repository, content) of the base commit.
const BASE: &[(&str, &[u8])] = &[
    ("README.md", include_bytes!("../demo/base/README.md")),
    ("lib/slug.sh", include_bytes!("../demo/base/lib/slug.sh")),
    ("tests/run.sh", include_bytes!("../demo/base/tests/run.sh")),
    (
        "tests/cases.sh",
        include_bytes!("../demo/base/tests/cases.sh"),
    ),
    (
        "scripts/test-shell.sh",
        include_bytes!("../demo/base/scripts/test-shell.sh"),
    ),
    (
        "scripts/test-tmpdir.sh",
        include_bytes!("../demo/base/scripts/test-tmpdir.sh"),
    ),
    (
        "docs/old notes.md",
        include_bytes!("../demo/base/docs/old notes.md"),
    ),
];

/// What the candidate writes on top of the base.
const CANDIDATE: &[(&str, &[u8])] = &[
    ("lib/slug.sh", include_bytes!("../demo/candidate/slug.sh")),
    (
        "tests/cases-punctuation.sh",
        include_bytes!("../demo/candidate/cases-punctuation.sh"),
    ),
    (
        "assets/icon.bin",
        include_bytes!("../demo/candidate/icon.bin"),
    ),
];

/// The sample's mutants, run on the candidate.
const MUTANTS_TOML: &str = include_str!("../demo/mutants.toml");

/// What the candidate deletes.
const DELETED: &[&str] = &["docs/old notes.md"];

const GATE_TOML: &str = r#"# The sample candidate: a fix to slug(), new cases, a binary asset, a deleted doc.
base = "base"
patch = "build.patch"
manifest = "candidate-manifest.sha256"
head = "main"

[env]
DOCKER_HOST = "unix:///nonexistent"

[[suite]]
name = "slug"
run = "sh tests/run.sh"
timeout = "1m"

[[suite]]
glob = "scripts/test-*.sh"
timeout = "1m"
"#;

/// Builds the sample and gates it; `keep` leaves the sample in place and says where.
pub(crate) fn run(keep: bool) -> Result<Exit> {
    let dir = tempfile::Builder::new()
        .prefix("gatekit-demo-")
        .tempdir()
        .context("creating the demo folder")?;
    let root = dir.path().join("sample");
    let out = dir.path().join("candidate");
    fs::create_dir_all(&root)?;
    fs::create_dir_all(&out)?;

    let git = Git::at(&root);
    let identity = [
        "-c",
        "user.name=gatekit demo",
        "-c",
        "user.email=demo@gatekit.invalid",
        "-c",
        "commit.gpgsign=false",
    ];
    let commit = |message: &str| -> Result<()> {
        let mut args: Vec<&str> = identity.to_vec();
        args.extend(["commit", "-q", "-m", message]);
        git.bytes(args)?;
        Ok(())
    };
    git.bytes(["init", "-q", "-b", "main"])?;
    write_files(&root, BASE)?;
    make_executable(&root.join("scripts/test-shell.sh"))?;
    make_executable(&root.join("scripts/test-tmpdir.sh"))?;
    git.bytes(["add", "-A"])?;
    commit("slug: lower-case and dash-join words")?;
    git.bytes(["tag", "base"])?;
    // A later commit on main that touches no candidate path: drift must not list it.
    fs::write(
        root.join("README.md"),
        b"# slug\nA tiny shell library for URL slugs.\n",
    )?;
    git.bytes(["add", "README.md"])?;
    commit("README: say what slugs are for")?;

    // The candidate's author worked on the base, not on main's tip.
    git.bytes(["checkout", "-q", "-b", "work", "base"])?;
    write_files(&root, CANDIDATE)?;
    for path in DELETED {
        git.bytes(["rm", "-q", "--", path])?;
    }
    git.bytes(["add", "-A"])?;

    cmdline::outln!("== gate pack --base base --out {}", out.display())?;
    let packed = pack::pack(&git, "base", &out, &[])?;
    cmdline::outln!(
        "wrote {} (sha256 {}) and {} ({}; {} deleted)\n",
        packed.patch.display(),
        packed.patch_sha256,
        packed.manifest.display(),
        report::text::plural(packed.entries, "path"),
        packed.deleted
    )?;
    fs::write(out.join("gate.toml"), GATE_TOML)?;

    cmdline::outln!("== gate run --config {}", out.join("gate.toml").display())?;
    let settings = RunSettings {
        config: out.join("gate.toml"),
        overrides: Default::default(),
        out: out.join("gate-out"),
        only: Vec::new(),
        fresh: false,
        keep: false,
        echo: false,
        json: false,
        canary: false,
        attest: None,
    };
    let gated = run_gate(&git, &settings, None)?;
    if let Some(e) = gated.write_error {
        return Err(e);
    }
    let report = gated.report;
    cmdline::outln!("{}", report.render())?;
    let gate_held = report.passed();
    let gate_verdict = report.verdict;
    if report.interrupted {
        return Ok(Exit::Interrupted);
    }

    // The tools answer to their names when this binary is linked as them (see `cli.rs`).
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin)?;
    let me = std::env::current_exe().context("finding the gatekit binary")?;
    for tool in ["mutants", "probe"] {
        std::os::unix::fs::symlink(&me, bin.join(tool))
            .with_context(|| format!("linking {tool}"))?;
    }

    fs::write(out.join("mutants.toml"), MUTANTS_TOML)?;
    let mutants_cmd = format!(
        "{} run {} --candidate {} --out {}",
        bin.join("mutants").display(),
        out.join("mutants.toml").display(),
        out.join("gate.toml").display(),
        out.join("mutants-out").display()
    );
    let mutants = step(&root, &out, "mutants", &mutants_cmd)?;

    let client = format!(
        "{} test-client --limit 50000 --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
        bin.join("probe").display(),
        out.display()
    );
    let probe_cmd = format!(
        "{} check --expect 50000 --client '{client}' --out {}",
        bin.join("probe").display(),
        out.join("probe-out").display()
    );
    let probe = step(&root, &out, "probe", &probe_cmd)?;

    let held = |r: &RunRecord| r.outcome() == Outcome::Passed;
    cmdline::outln!(
        "== tour: gate {}, mutants {}, probe {}",
        gate_verdict,
        if held(&mutants) {
            "held (exit 0)"
        } else {
            "FAILED"
        },
        if held(&probe) {
            "held (exit 0)"
        } else {
            "FAILED"
        },
    )?;
    if keep {
        let kept = dir.keep();
        cmdline::outln!("sample kept in {}", kept.display())?;
    }
    Ok(
        if [&mutants, &probe]
            .iter()
            .any(|r| r.run.ended.is_interrupted())
        {
            Exit::Interrupted
        } else {
            Exit::from_held(gate_held && held(&mutants) && held(&probe))
        },
    )
}

/// Runs one step of the tour as a child process in `dir`, then shows what it printed.
fn step(dir: &Path, out: &Path, name: &str, command: &str) -> Result<RunRecord> {
    let shown = command.replace(&format!("{}/", out.parent().unwrap_or(out).display()), "");
    cmdline::outln!("== {shown}")?;
    let log = out.join(format!("{name}.log"));
    let job = Job::shell(command, dir, &log).timeout(Duration::from_secs(300));
    let record = report::record::run(&job).with_context(|| format!("running the {name} step"))?;
    // The step's own output, its controls made visible (a tool's colour is off here anyway).
    let shown = fs::read_to_string(&log).unwrap_or_default();
    for line in shown.lines() {
        cmdline::outln!("{}", cmdline::progress::safe(line))?;
    }
    cmdline::outln!()?;
    Ok(record)
}

fn write_files(root: &Path, files: &[(&str, &[u8])]) -> Result<()> {
    for (path, content) in files {
        let full = root.join(path);
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&full, content).with_context(|| format!("writing {}", full.display()))?;
    }
    Ok(())
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    Ok(())
}
