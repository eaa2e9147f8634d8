//! `gate demo`: the whole gate on a sample, with nothing to set up.
//!
//! A small shell library (compiled into the binary from `gate/demo/`) is committed to a new
//! repository in a temp dir; a later unrelated commit gives drift something to look through;
//! the candidate (made on a branch from the base: a fix, new test cases, a binary file, a deleted file whose name has a space)
//! is staged and packed with `gate pack`; then `gate run` applies it to a fresh worktree of the
//! base and runs a plain suite and a `glob` of scripts. The user's own checkout is not touched.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use report::Exit;

use crate::commands::{run_gate, RunSettings};
use candidate::git::Git;
use candidate::pack;

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
        "tests/cases.sh",
        include_bytes!("../demo/candidate/cases.sh"),
    ),
    (
        "assets/icon.bin",
        include_bytes!("../demo/candidate/icon.bin"),
    ),
];

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
pub fn run(keep: bool) -> Result<Exit> {
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

    println!("== gate pack --base base --out {}", out.display());
    let packed = pack::pack(&git, "base", &out, &[])?;
    println!(
        "wrote {} (sha256 {}) and {} ({} paths; {} deleted)\n",
        packed.patch.display(),
        packed.patch_sha256,
        packed.manifest.display(),
        packed.entries,
        packed.deleted
    );
    fs::write(out.join("gate.toml"), GATE_TOML)?;

    println!("== gate run --config {}", out.join("gate.toml").display());
    let settings = RunSettings {
        config: out.join("gate.toml"),
        out: out.join("gate-out"),
        only: Vec::new(),
        keep: false,
        echo: false,
        json: false,
    };
    let report = run_gate(&git, &settings)?;
    println!("{}", report.render());
    if keep {
        let kept = dir.keep();
        println!("sample kept in {}", kept.display());
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::from_held(report.passed())
    })
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
