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

/// Writes `files` (path from the root, text) under a fresh root and runs check-layout.py on it.
fn check_tree(files: &[(&str, &str)]) -> (bool, String) {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    run("check-layout.py", root.path())
}

const SESSION: &str = "mutants/src/session/mod.rs";

#[test]
fn a_print_in_run_or_session_code_fails_the_layout_check_whatever_its_form() {
    for print in [
        "cmdline::errln!(\"mutants: {x}\");",
        "println!(\"{x}\");",
        "eprint!(\"x\");",
        "dbg!(x);",
        "cmdline::outln!(\"{x}\")?;",
        "let _ = writeln!(std::io::stderr(), \"x\");",
        "let _ = io::stdout().write_all(b\"x\");",
        "cmdline::exit::show(&text);",
    ] {
        let text = format!("//! A session.\n\npub fn go(x: u32) {{\n    {print}\n}}\n");
        let (ok, out) = check_tree(&[("mutants/src/lib.rs", "mod session;\n"), (SESSION, &text)]);
        assert!(!ok, "`{print}` in session code went unseen:\n{out}");
        assert!(
            out.contains("mutants/src/session/mod.rs:4: `"),
            "`{print}`: the finding names no file and line:\n{out}"
        );
    }
    // Every folder and file of the list, not only the session's.
    for path in [
        "mutants/src/run/suite.rs",
        "probe/src/bracket/search.rs",
        "probe/src/clients/matrix.rs",
        "gate/src/suite.rs",
    ] {
        let (ok, out) = check_tree(&[(path, "fn f() { eprintln!(\"x\"); }\n")]);
        assert!(!ok, "a print in {path} went unseen:\n{out}");
    }
}

#[test]
fn a_print_named_in_a_comment_or_a_string_or_made_by_a_renderer_or_a_command_is_no_finding() {
    let session = concat!(
        "//! Never `println!` here: the reporter writes (`cmdline::errln!` is forbidden).\n",
        "/* eprintln!(\"x\") */\n",
        "pub fn go(x: u32) -> String {\n",
        "    let _c = '\"';\n",
        "    let _r = r#\"println!(\"x\")\"#;\n",
        "    format!(\"println!({x}) stdout() \\\" eprint!\")\n",
        "}\n",
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { println!(\"x\"); }\n}\n",
    );
    let (ok, out) = check_tree(&[
        (SESSION, session),
        // A render module inside a listed folder is where the words are.
        (
            "probe/src/bracket/render.rs",
            "fn f() { cmdline::exit::show(\"x\"); }\n",
        ),
        // A command's showing code is not run code.
        (
            "mutants/src/commands/check.rs",
            "fn f() { cmdline::errln!(\"x\"); }\n",
        ),
    ]);
    assert!(ok, "no print was there:\n{out}");
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
