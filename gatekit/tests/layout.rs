//! The layout checks themselves (`scripts/check-layout.py` and `scripts/check-design.py`,
//! which CI runs on the workspace): each must find what it looks for however it is written (an
//! import circle, a path DESIGN.md names that is gone, a source file it does not name), or a
//! clean run of it proves nothing. Each case is a small tree in a temp dir.

use std::path::Path;
use std::process::Command;

/// Writes `files` (path, text) under a fresh root's `demo/src` and runs the check on the root.
fn check(files: &[(&str, &str)]) -> (bool, String) {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join("demo/src").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    run("check-layout.py", root.path())
}

/// Runs `scripts/SCRIPT` on `root`: whether it passed, and what it printed.
fn run(script: &str, root: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(script);
    let out = Command::new("python3")
        .arg(script)
        .arg(root)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const LIB: &str = "mod a;\n";
const A_MOD: &str = "mod b;\nmod c;\n";

#[test]
fn super_in_a_file_that_is_not_a_mod_rs_is_its_parent_module() {
    // In a/b.rs, `super::c` is a::c: one level up from a::b, not two.
    let (ok, out) = check(&[
        ("lib.rs", LIB),
        ("a/mod.rs", A_MOD),
        ("a/b.rs", "use super::c::C;\npub struct B;\n"),
        ("a/c.rs", "use super::b::B;\npub struct C;\n"),
    ]);
    assert!(!ok, "the pair went unseen:\n{out}");
    assert!(
        out.contains("demo/src/a/b.rs and demo/src/a/c.rs import each other"),
        "{out}"
    );
}

#[test]
fn a_braced_use_names_every_module_inside_its_braces() {
    let (ok, out) = check(&[
        ("lib.rs", LIB),
        ("a/mod.rs", A_MOD),
        (
            "a/b.rs",
            "use super::{c::C, b2};\npub struct B;\nmod b2 {}\n",
        ),
        (
            "a/c.rs",
            "use crate::a::{\n    self,\n    b::{B as Bee},\n};\npub struct C;\n",
        ),
    ]);
    assert!(!ok, "the pair went unseen:\n{out}");
    assert!(
        out.contains("demo/src/a/b.rs and demo/src/a/c.rs import each other"),
        "{out}"
    );
}

#[test]
fn imports_one_way_and_a_doc_text_without_a_link_are_no_finding() {
    let (ok, out) = check(&[
        ("lib.rs", LIB),
        ("a/mod.rs", A_MOD),
        ("a/b.rs", "use super::c::C;\npub struct B(C);\n"),
        ("a/c.rs", "//! Read by the `b` module.\npub struct C;\n"),
    ]);
    assert!(ok, "a one-way import was called a circle:\n{out}");
}

/// Runs `scripts/check-design.py` on a root holding `design` as DESIGN.md and `files`.
fn check_design(design: &str, files: &[&str]) -> (bool, String) {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("DESIGN.md"), design).unwrap();
    for path in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "//! A module.\n").unwrap();
    }
    run("check-design.py", root.path())
}

const MAP: &str = "# design\n\nSee `demo/src/a.rs`.\n\n## Where each piece lives\n\n```\ndemo/    a crate\n  src/lib.rs        its map\n  src/{a,b}.rs      two modules\n```\n";

#[test]
fn design_names_every_source_file_and_only_files_that_exist() {
    let (ok, out) = check_design(MAP, &["demo/src/lib.rs", "demo/src/a.rs", "demo/src/b.rs"]);
    assert!(ok, "a true map was refused:\n{out}");

    // A file the map does not name.
    let (ok, out) = check_design(
        MAP,
        &[
            "demo/src/lib.rs",
            "demo/src/a.rs",
            "demo/src/b.rs",
            "demo/src/c.rs",
        ],
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains("demo/src/c.rs is in no line of the file map"),
        "{out}"
    );

    // A file the map names (through its braces) that is gone, and one the prose names.
    let (ok, out) = check_design(MAP, &["demo/src/lib.rs"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("the file map names demo/src/b.rs, which does not exist"),
        "{out}"
    );
    assert!(
        out.contains("`demo/src/a.rs` names demo/src/a.rs, which does not exist"),
        "{out}"
    );
}
