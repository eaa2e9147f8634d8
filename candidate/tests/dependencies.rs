//! `candidate` runs setup steps and checks candidates out; it has no command line of its own,
//! so it must not pull one in: no clap, no indicatif, not through any crate it depends on. And
//! only `mutants` compiles the tree-sitter grammars: `gate` and `probe` never link `syntax`.
//! Asked of cargo itself (`cargo tree`), so a dependency added anywhere below shows up here.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `cargo tree -p candidate -e normal`, offline and from the lockfile, with an outer limit.
fn candidate_tree() -> String {
    tree("candidate")
}

/// `cargo tree -p PACKAGE -e normal`, offline and from the lockfile, with an outer limit.
fn tree(package: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("tree.txt");
    let err_path = dir.path().join("tree.err");
    let mut child = Command::new(cargo)
        .args([
            "tree",
            "-p",
            package,
            "-e",
            "normal",
            "--offline",
            "--locked",
        ])
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // Only the child this test started.
            let _ = child.kill();
            let _ = child.wait();
            panic!("cargo tree did not finish in 120s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(status.success(), "cargo tree failed: {err}");
    std::fs::read_to_string(&out_path).unwrap()
}

#[test]
fn candidate_depends_on_no_command_line_crate() {
    let tree = candidate_tree();
    // The tree is real: candidate's own libraries are in it.
    for wanted in [
        "candidate v",
        "runner v",
        "files v",
        "report v",
        "manifests v",
    ] {
        assert!(tree.contains(wanted), "{wanted:?} missing from\n{tree}");
    }
    let unwanted: Vec<&str> = tree
        .lines()
        .filter(|l| {
            ["clap", "indicatif", "cmdline"]
                .iter()
                .any(|c| l.contains(c))
        })
        .collect();
    assert!(
        unwanted.is_empty(),
        "candidate pulls in a command-line crate:\n{}",
        unwanted.join("\n")
    );
}

#[test]
fn only_mutants_links_the_grammars() {
    let mutants = tree("mutants");
    // The tree is real: mutants reaches the grammars through syntax.
    for wanted in ["── syntax v", "tree-sitter v", "tree-sitter-rust v"] {
        assert!(
            mutants.contains(wanted),
            "{wanted:?} missing from\n{mutants}"
        );
    }
    for tool in ["gate", "probe"] {
        let tree = tree(tool);
        assert!(tree.contains(&format!("{tool} v")), "{tree}");
        let grammars: Vec<&str> = tree
            .lines()
            .filter(|l| l.contains("tree-sitter") || l.split_whitespace().any(|w| w == "syntax"))
            .collect();
        assert!(
            grammars.is_empty(),
            "{tool} compiles the grammars:\n{}",
            grammars.join("\n")
        );
    }
}
