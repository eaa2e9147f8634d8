//! Every example of the README and the book runs as its page shows it: `scripts/check-examples.py`
//! runs each page's commands in a sandbox with the built tools and compares what they print with
//! the page; each gate.toml example is then read by gate's own config reader. And the checker
//! itself: a page that shows other output fails it, a marked example is listed as skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use candidate::config::{Config, Overrides};
use serde_json::Value;
use testkit::{needs, workspace};

/// The folder of the built `gatekit`; the checker links `gate`, `mutants` and `probe` to it.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_gatekit"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs the checker on `pages` (none: the README and the book): whether it passed, and what it
/// printed.
fn check(pages: &[&Path], toml_list: Option<&Path>) -> (bool, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(workspace().join("scripts/check-examples.py"))
        .arg("--bin")
        .arg(bin_dir());
    if let Some(list) = toml_list {
        cmd.arg("--list-toml").arg(list);
    }
    cmd.args(pages);
    let out = cmd.output().expect("python3 runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// What the examples need besides the tools: python3 for the checker, node and npm for the
/// example projects, ssh-keygen for the approvals, PyYAML for the CI recipes.
fn machine_has_what_the_examples_need() -> bool {
    needs::program(
        "python3",
        "python3",
        &["--version"],
        "install CPython 3 (Debian's python3)",
    ) && needs::program("node", "node", &["--version"], "install Node.js 20")
        && needs::program("npm", "npm", &["--version"], "install npm with Node.js 20")
        && needs::program(
            "ssh-keygen",
            "sh",
            &["-c", "command -v ssh-keygen"],
            "install Debian's openssh-client",
        )
        && needs::python_modules("pyyaml", &["yaml"])
}

#[test]
fn every_example_of_the_readme_and_the_book_runs_as_its_page_shows() {
    if !machine_has_what_the_examples_need() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("toml.json");
    let (ok, out) = check(&[], Some(&list));
    assert!(ok, "a page and the tools differ:\n{out}");
    assert!(out.contains(" 0 differ\n"), "{out}");

    let (read, refused) = gate_toml_examples(&list);
    assert!(read >= 10, "only {read} gate.toml examples");
    assert!(
        refused.is_empty(),
        "gate.toml examples the reader refuses:\n{}",
        refused.join("\n")
    );
}

/// Reads each gate.toml example the checker listed (specs were read by `mutants check`
/// already) with the reader `gate run` uses, the candidate's three fields given as the command
/// line would: how many were read, and each refusal as `PAGE:LINE: error`.
fn gate_toml_examples(list: &Path) -> (usize, Vec<String>) {
    let examples: Value = serde_json::from_slice(&std::fs::read(list).unwrap()).unwrap();
    let examples = examples.as_array().unwrap();
    let overrides = Overrides {
        base: Some("HEAD".into()),
        patch: Some("build.patch".into()),
        manifest: Some("candidate-manifest.sha256".into()),
    };
    let refused = examples
        .iter()
        .filter_map(|e| {
            let text = e["text"].as_str().unwrap();
            Config::parse_with(text, Path::new("gate.toml"), &overrides)
                .err()
                .map(|err| format!("{}:{}: {err}", e["page"].as_str().unwrap_or("?"), e["line"]))
        })
        .collect();
    (examples.len(), refused)
}

#[test]
fn a_gate_toml_example_with_a_key_gate_does_not_know_is_refused_at_its_page_and_line() {
    if !needs::program("python3", "python3", &["--version"], "install CPython 3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# Suites\n\n```toml\n[[suite]]\nname = \"unit\"\nrun = \"true\"\ntmeout = \"1m\"\n```\n",
    )
    .unwrap();
    let list = dir.path().join("toml.json");
    let (ok, out) = check(&[&page], Some(&list));
    assert!(ok, "TOML syntax alone holds: {out}");
    let (read, refused) = gate_toml_examples(&list);
    assert_eq!(read, 1);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains(":3: "), "{refused:?}");
    assert!(refused[0].contains("tmeout"), "{refused:?}");
}

/// Writes `text` as a page in a temp dir and checks it.
fn check_fixture(text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(&page, text).unwrap();
    check(&[&page], None)
}

const HASH_PAGE: &str = r#"# A page

<!-- check: setup
printf 'hello' > a.txt
-->
```sh
gate hash a.txt
```
```
2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  a.txt
```
"#;

#[test]
fn a_page_whose_shown_output_differs_from_the_tool_fails_the_check() {
    if !needs::program("python3", "python3", &["--version"], "install CPython 3") {
        return;
    }
    let (ok, out) = check_fixture(HASH_PAGE);
    assert!(ok, "the page as the tool prints it: {out}");
    assert!(
        out.contains("1 run, 1 matched, 0 skipped, 0 differ"),
        "{out}"
    );

    let (ok, out) = check_fixture(&HASH_PAGE.replace("  a.txt\n```\n", "  b.txt\n```\n"));
    assert!(!ok, "a wrong file name passed: {out}");
    assert!(
        out.contains("page.md:9: the output differs from the page"),
        "{out}"
    );
    assert!(out.contains("shown `[ID] b.txt`"), "{out}");

    let (ok, out) = check_fixture(&HASH_PAGE.replace("gate hash a.txt", "gate hash c.txt"));
    assert!(!ok, "a command that fails passed: {out}");
    assert!(
        out.contains("page.md:6: exit 2, the page expects 0"),
        "{out}"
    );
}

#[test]
fn a_marked_example_is_listed_as_skipped_with_its_reason_and_not_run() {
    if !needs::program("python3", "python3", &["--version"], "install CPython 3") {
        return;
    }
    let page = "<!-- check: skip needs a remote to push to -->\n\
                ```sh\ngit push origin main\n```\n\
                ```\nEverything up-to-date\n```\n";
    let (ok, out) = check_fixture(page);
    assert!(ok, "{out}");
    assert!(
        out.contains("0 run, 0 matched, 1 skipped, 0 differ"),
        "{out}"
    );
    assert!(
        out.contains("page.md:2: needs a remote to push to"),
        "{out}"
    );
}

#[test]
fn a_flag_a_synopsis_or_a_ci_recipe_names_must_exist() {
    if !needs::program("python3", "python3", &["--version"], "install CPython 3") {
        return;
    }
    let (ok, out) = check_fixture("```\ngate check FILE [--quiet] [--quieter]\n```\n");
    assert!(!ok, "{out}");
    assert!(
        out.contains("`gate check --quieter`: no such flag in `gate check --help`"),
        "{out}"
    );
    // A command in the prose, wrapped over two lines, is checked the same way.
    let (ok, out) = check_fixture("Then run `gate run --config\ngate.toml --fresh-start`.\n");
    assert!(!ok, "{out}");
    assert!(
        out.contains("page.md:1: `gate run --fresh-start`: no such flag"),
        "{out}"
    );
    let (ok, out) = check_fixture("Then run `gate run --config\ngate.toml --fresh`.\n");
    assert!(ok, "{out}");
    if !needs::python_modules("pyyaml", &["yaml"]) {
        return;
    }
    let recipe =
        "```yaml\njobs:\n  a:\n    steps:\n      - run: cargo install --locked --path gate\n```\n";
    let (ok, out) = check_fixture(recipe);
    assert!(!ok, "{out}");
    assert!(out.contains("job `a` has no `runs-on`"), "{out}");
    assert!(out.contains("not from gatekit's repository"), "{out}");
}
