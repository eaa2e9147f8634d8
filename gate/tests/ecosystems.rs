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
    // A setup that installs the project again, into the checkout's copy, from the checkout
    // under review: that copy no longer points back, and the run goes on.
    let install =
        ".venv/bin/python -m pip install -q --no-index --no-deps --no-build-isolation -e .";
    let gate = format!("[worktree]\nlink = [\".venv\"]\nsetup = \"{install}\"\n\n[[suite]]\nname = \"unit\"\nrun = \".venv/bin/python -m unittest discover -s tests -v\"\n");
    let run = gate_it(&repo, &base, &gate);
    run.assert_exit(0);
    // A setup that leaves the user's editable install in the copy is refused after it ran.
    let gate = "[worktree]\nlink = [\".venv\"]\nsetup = \"true\"\n\n[[suite]]\nname = \"unit\"\nrun = \".venv/bin/python -m unittest discover -s tests -v\"\n";
    let run = gate_it(&repo, &base, gate);
    assert_ne!(run.code, Some(0), "{run}");
    assert!(
        run.stderr.contains("after worktree.setup ran")
            && run.stderr.contains("points into your checkout"),
        "{run}"
    );
}

/// A src-layout package that reads its own version with `importlib.metadata`, as most
/// packaged projects do: the suites fail in a checkout whose virtualenv holds only the
/// dependencies (`PackageNotFoundError`), and pass once the project's metadata is installed
/// into the user's virtualenv as the book's Python recipe says (`pip install --no-deps
/// --no-build-isolation .`, not editable), with the checkout's own `src` imported first: the
/// canary proves the suite reads the checkout's file, not the installed copy.
#[test]
fn the_python_recipe_works_for_a_package_that_reads_its_version_with_importlib_metadata() {
    // The project is built offline by the system's setuptools; the editable install needs `wheel`.
    if !testkit::needs::python_modules("python-packaging", &["venv", "pip", "setuptools", "wheel"])
    {
        return;
    }
    let repo = Repo::new();
    repo.write(
        ".gitignore",
        ".venv/\n__pycache__/\n*.egg-info/\nbuild/\ndist/\n",
    )
    .write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"slugkit\"\nversion = \"1.2.3\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
    )
    .write(
        "src/slugkit/__init__.py",
        "from importlib.metadata import version\n__version__ = version(\"slugkit\")\n\ndef slug(s):\n    return s.lower()\n",
    )
    .write(
        "tests/test_slug.py",
        "import unittest\nimport slugkit\n\nclass T(unittest.TestCase):\n    def test_lower(self):\n        self.assertEqual(slugkit.slug('AB'), 'ab')\n    def test_version(self):\n        self.assertEqual(slugkit.__version__, '1.2.3')\n",
    );
    let base = repo.commit_all("base");
    // The user's virtualenv; the system's setuptools builds the project offline.
    let venv = Command::new("python3")
        .args(["-m", "venv", "--system-site-packages", ".venv"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(venv.success(), "python3 -m venv failed");
    repo.write(
        "src/slugkit/__init__.py",
        "from importlib.metadata import version\n__version__ = version(\"slugkit\")\n\ndef slug(s):\n    return s.lower().replace(' ', '-')\n",
    );
    repo.git(["add", "-A"]);
    let gate = "[worktree]\nlink = [\".venv\"]\n\n[env]\nPYTHONPATH = \"src\"\n\n[[suite]]\nname = \"unit\"\nrun = \".venv/bin/python -m unittest discover -s tests -v\"\n";

    // Dependencies only: the package's metadata is nowhere, so importing it fails.
    let out = tempfile::tempdir().unwrap();
    let config = pack_with_config(&repo, &base, out.path(), gate);
    let bare = run_config(&repo, &config, &out.path().join("bare"), &[]);
    bare.assert_exit(1);
    let log = std::fs::read_to_string(out.path().join("bare/logs/01-unit.log")).unwrap();
    assert!(log.contains("PackageNotFoundError"), "{log}");

    // The recipe's one step in the user's checkout: the project itself (metadata and a copy),
    // never editable.
    let install = Command::new(".venv/bin/python")
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            ".",
        ])
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "pip install . failed: {}",
        String::from_utf8_lossy(&install.stderr)
    );
    let run = run_config(&repo, &config, &out.path().join("gate-out"), &["--canary"]);
    run.assert_exit(0);
    assert!(run.stdout.contains("2 passed"), "{run}");
    assert!(
        run.stdout
            .contains("canary    1 source path(s) made unloadable, 1 suite run(s), 1 noticed"),
        "the checkout's src is what the suite imports: {run}"
    );

    // The recipe's other way: the checkout's own copy of the virtualenv gets the checkout
    // installed editable by `setup`; the user's `.venv` is not touched.
    let site = |repo: &Repo| {
        let mut names: Vec<String> = walk_names(&repo.path().join(".venv"));
        names.sort();
        names
    };
    let before = site(&repo);
    let gate = "[worktree]\nlink = [\".venv\"]\nsetup = \".venv/bin/pip install -q --no-index --no-deps --no-build-isolation -e .\"\n\n[env]\nPIP_DISABLE_PIP_VERSION_CHECK = \"1\"\n\n[[suite]]\nname = \"unit\"\nrun = \".venv/bin/python -m unittest discover -s tests -v\"\n";
    let out = tempfile::tempdir().unwrap();
    let config = pack_with_config(&repo, &base, out.path(), gate);
    let run = run_config(&repo, &config, &out.path().join("gate-out"), &["--canary"]);
    run.assert_exit(0);
    assert!(run.stdout.contains("2 passed"), "{run}");
    assert!(run.stdout.contains("1 noticed"), "{run}");
    assert_eq!(before, site(&repo), "the user's .venv is as it was");
}

/// Every path under `root`, links not followed.
fn walk_names(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(at) = stack.pop() {
        out.push(at.to_string_lossy().into_owned());
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            for e in std::fs::read_dir(&at).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out
}

/// The book's npm recipe for a project without a lockfile: `npm install` without writing one,
/// its dependency a vendored tarball, so nothing reaches the registry.
#[test]
fn the_npm_recipe_without_a_lockfile_installs_in_the_checkout() {
    if !have("npm", "--version") {
        testkit::skip(
            "npm",
            "npm is not installed: the Node example is not checked",
        );
        return;
    }
    let repo = Repo::new();
    // A dependency of our own, packed by the real npm.
    let dep = tempfile::tempdir().unwrap();
    std::fs::write(
        dep.path().join("package.json"),
        r#"{ "name": "lower", "version": "1.0.0", "main": "index.js" }"#,
    )
    .unwrap();
    std::fs::write(
        dep.path().join("index.js"),
        "module.exports = (s) => s.toLowerCase();\n",
    )
    .unwrap();
    let packed = Command::new("npm")
        .args(["pack", "--pack-destination"])
        .arg(repo.path())
        .current_dir(dep.path())
        .env("npm_config_cache", dep.path().join("cache"))
        .output()
        .unwrap();
    assert!(packed.status.success(), "npm pack failed");
    std::fs::create_dir_all(repo.path().join("vendor")).unwrap();
    std::fs::rename(
        repo.path().join("lower-1.0.0.tgz"),
        repo.path().join("vendor/lower-1.0.0.tgz"),
    )
    .unwrap();
    repo.write(".gitignore", "node_modules/\n")
        .write(
            "package.json",
            r#"{ "name": "example", "version": "1.0.0", "private": true, "scripts": { "test": "node --test" }, "dependencies": { "lower": "file:vendor/lower-1.0.0.tgz" } }"#,
        )
        .write("slug.js", "const lower = require('lower');\nexports.slug = (s) => lower(s);\n")
        .write(
            "test/slug.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { slug } = require('../slug.js');\ntest('lower case', () => assert.strictEqual(slug('AB'), 'ab'));\n",
        );
    let base = repo.commit_all("base");
    repo.write(
        "slug.js",
        "const lower = require('lower');\nexports.slug = (s) => lower(s).replace(/ /g, '-');\n",
    );
    repo.git(["add", "-A"]);
    let run = gate_it(&repo, &base, NODE_NO_LOCKFILE_GATE);
    run.assert_exit(0);
    assert!(run.stdout.contains("setup     npm install"), "{run}");
    assert!(run.stdout.contains("1 passed"), "{run}");
}

/// The book's npm recipe for a project with no package-lock.json.
const NODE_NO_LOCKFILE_GATE: &str = r#"[worktree]
setup = "npm install --no-package-lock --no-audit --no-fund"

[[suite]]
name = "unit"
run = "npm test"
"#;
