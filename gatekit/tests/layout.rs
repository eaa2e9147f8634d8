//! The layout check itself (`scripts/check-layout.py`, which CI runs on the workspace): it must
//! find two files that import each other however the import is written, or a clean run of it
//! proves nothing. Each case is a small crate tree in a temp dir.

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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check-layout.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(root.path())
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
