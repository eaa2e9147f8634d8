//! The README's three project shapes, run for real: a Node project whose checkout gets its
//! dependencies from `npm ci`, a Python project whose suites use the user's virtualenv through
//! a link, and a Rust workspace. Each gate.toml here is the one the README shows.

use std::process::Command;

use crate::common::{pack_with_config, run_config};
use testkit::Repo;

/// Packs the staged change of `repo` against `base` into a temp folder with `gate_toml` beside
/// it, runs `gate run` there, and returns the output.
fn gate_it(repo: &Repo, base: &str, gate_toml: &str) -> testkit::Output {
    let out = tempfile::tempdir().unwrap();
    let config = pack_with_config(repo, base, out.path(), gate_toml);
    run_config(repo, &config, &out.path().join("gate-out"), &[])
}

fn have(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The gate.toml of the README's Node example.
const NODE_GATE: &str = r#"[worktree]
setup = "npm ci --offline --no-audit --no-fund"

[[suite]]
name = "unit"
run = "npm test"
"#;

#[test]
fn a_node_project_gets_its_dependencies_from_npm_ci_in_the_checkout() {
    if !have("npm", "--version") {
        testkit::skip(
            "npm",
            "npm is not installed: the Node example is not checked",
        );
        return;
    }
    let repo = Repo::new();
    repo.write(".gitignore", "node_modules/\n")
        .write(
            "package.json",
            r#"{ "name": "example", "version": "1.0.0", "private": true, "scripts": { "test": "node --test" } }"#,
        )
        .write(
            "package-lock.json",
            r#"{ "name": "example", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": { "": { "name": "example", "version": "1.0.0" } } }"#,
        )
        .write("slug.mjs", "export const slug = (s) => s.toLowerCase();\n")
        .write(
            "test/slug.test.mjs",
            "import test from 'node:test';\nimport assert from 'node:assert';\nimport { slug } from '../slug.mjs';\ntest('lower case', () => assert.strictEqual(slug('AB'), 'ab'));\n",
        );
    let base = repo.commit_all("base");
    repo.write(
        "slug.mjs",
        "export const slug = (s) => s.toLowerCase().replace(/ /g, '-');\n",
    );
    repo.git(["add", "-A"]);
    let run = gate_it(&repo, &base, NODE_GATE);
    run.assert_exit(0);
    assert!(run.stdout.contains("setup     npm ci"), "{run}");
    assert!(run.stdout.contains("1 passed"), "{run}");
}

/// The gate.toml of the README's Python example.
const PYTHON_GATE: &str = r#"[worktree]
link = [".venv"]

[env]
PYTHONPATH = "src"

[[suite]]
name = "unit"
run = ".venv/bin/python -m unittest -v"
"#;

#[test]
fn a_python_project_uses_the_users_virtualenv_through_a_link() {
    if !testkit::needs::python_modules("python-venv", &["venv"]) {
        return;
    }
    let repo = Repo::new();
    repo.write(".gitignore", ".venv/\n__pycache__/\n")
        .write("slug.py", "def slug(s):\n    return s.lower()\n")
        .write(
            "test_slug.py",
            "import unittest\nfrom slug import slug\n\nclass T(unittest.TestCase):\n    def test_lower(self):\n        self.assertEqual(slug('AB'), 'ab')\n",
        );
    let base = repo.commit_all("base");
    let venv = Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(venv.success(), "python3 -m venv failed");
    repo.write(
        "slug.py",
        "def slug(s):\n    return s.lower().replace(' ', '-')\n",
    );
    repo.git(["add", "-A"]);
    let run = gate_it(&repo, &base, PYTHON_GATE);
    run.assert_exit(0);
    assert!(run.stdout.contains("setup     none, linked .venv"), "{run}");
    assert!(run.stdout.contains("1 passed"), "{run}");
}

/// The gate.toml of the README's Rust example.
const RUST_GATE: &str = r#"[env]
CARGO_TERM_COLOR = "never"

[[suite]]
name = "tests"
run = "cargo test --workspace --offline"
timeout = "10m"
"#;

#[test]
fn a_rust_workspace_is_gated_with_cargo_test() {
    let repo = Repo::new();
    repo.write(".gitignore", "target/\n")
        .write("Cargo.toml", "[workspace]\nmembers = [\"slug\"]\nresolver = \"2\"\n")
        .write(
            "slug/Cargo.toml",
            "[package]\nname = \"slug\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write(
            "slug/src/lib.rs",
            "pub fn slug(s: &str) -> String { s.to_lowercase() }\n#[test]\nfn lower() { assert_eq!(slug(\"AB\"), \"ab\"); }\n",
        );
    let base = repo.commit_all("base");
    repo.write(
        "slug/src/lib.rs",
        "pub fn slug(s: &str) -> String { s.to_lowercase().replace(' ', \"-\") }\n#[test]\nfn lower() { assert_eq!(slug(\"AB\"), \"ab\"); }\n#[test]\nfn spaces() { assert_eq!(slug(\"a b\"), \"a-b\"); }\n",
    );
    repo.git(["add", "-A"]);
    let run = gate_it(&repo, &base, RUST_GATE);
    run.assert_exit(0);
    assert!(run.stdout.contains("2 passed"), "{run}");
}

/// A src-layout Python project installed editable (`pip install -e .`, the way a README recipe
/// sets up a development virtualenv) into the `.venv` gate.toml links: the suites would import
/// the user's `src/`, not the checkout under review, so the link is refused before any work.
#[test]
fn a_linked_virtualenv_with_the_project_installed_editable_is_refused_naming_the_file() {
    // The editable wheel is built offline by the system's setuptools, which needs `wheel`.
    if !testkit::needs::python_modules("python-packaging", &["venv", "pip", "setuptools", "wheel"])
    {
        return;
    }
    let repo = Repo::new();
    repo.write(".gitignore", ".venv/\n__pycache__/\n*.egg-info/\nbuild/\n")
        .write(
            "pyproject.toml",
            "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"slug\"\nversion = \"0.1\"\n",
        )
        .write("src/slug/__init__.py", "def slug(s):\n    return s.lower()\n")
        .write(
            "tests/test_slug.py",
            "import unittest\nfrom slug import slug\n\nclass T(unittest.TestCase):\n    def test_lower(self):\n        self.assertEqual(slug('AB'), 'ab')\n",
        );
    let base = repo.commit_all("base");
    // The system's setuptools builds the editable wheel offline (no build isolation).
    let venv = Command::new("python3")
        .args(["-m", "venv", "--system-site-packages", ".venv"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(venv.success(), "python3 -m venv failed");
    let install = Command::new(".venv/bin/python")
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "-e",
            ".",
        ])
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "pip install -e . failed: {}",
        String::from_utf8_lossy(&install.stderr)
    );
    repo.write(
        "src/slug/__init__.py",
        "def slug(s):\n    return s.lower().replace(' ', '-')\n",
    );
    repo.git(["add", "-A"]);
    let gate = "[worktree]\nlink = [\".venv\"]\n\n[[suite]]\nname = \"unit\"\nrun = \".venv/bin/python -m unittest discover -s tests -v\"\n";
    let run = gate_it(&repo, &base, gate);
    run.assert_exit(2);
    assert!(run.stderr.contains("points into your checkout"), "{run}");
    assert!(
        run.stderr.contains("site-packages/__editable__")
            || run.stderr.contains("direct_url.json")
            || run.stderr.contains(".pth"),
        "the file that points back is named: {run}"
    );
}
