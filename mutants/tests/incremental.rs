//! `--incremental` end to end, on real repositories with real suites: what a verdict is held to
//! beyond declared `inputs` (the lockfiles, the toolchain's version), where a reused row says
//! it came from through successive runs, the dry run CI uses (lists, never judges, never
//! writes), and a one-line change judging only the mutants it can affect.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use testkit::{Output, Repo};

use crate::common::{report_in, row};

/// Two small shell libraries, each with its own suite that reads only its own files: suite
/// `a` runs `test_a.sh` (on `a.sh`), suite `b` runs `test_b.sh` (on `b.sh`). Every suite run
/// appends its pid to `$MARKS/runs`, the proof of which suites ran.
struct Two {
    repo: Repo,
    out: tempfile::TempDir,
    marks: tempfile::TempDir,
    /// Prepended to PATH for every run (a stand-in toolchain goes here).
    bin: tempfile::TempDir,
}

const A: &str = "double() { echo $(( $1 * 2 )); }\nhalf() { echo $(( $1 / 2 )); }\n";
const B: &str = "inc() { echo $(( $1 + 1 )); }\n";
const TEST_A: &str = "echo $$ >> \"$MARKS/runs\"\n. ./a.sh\n[ \"$(double 3)\" = 6 ] && [ \"$(half 8)\" = 4 ] && echo '2 passed, 0 failed' && exit 0\necho '1 passed, 1 failed'; exit 1\n";
const TEST_B: &str = "echo $$ >> \"$MARKS/runs\"\n. ./b.sh\n[ \"$(inc 3)\" = 4 ] && echo '1 passed, 0 failed' && exit 0\necho '0 passed, 1 failed'; exit 1\n";

fn spec(suite_a_run: &str) -> String {
    format!(
        r#"[suites.a]
run = "{suite_a_run}"
inputs = ["a.sh", "test_a.sh"]

[suites.b]
run = "sh test_b.sh"
inputs = ["b.sh", "test_b.sh"]

[[mutant]]
name = "double adds"
file = "a.sh"
anchor = "$1 * 2"
replace = "$1 + 2"
suite = "a"

[[mutant]]
name = "half doubles"
file = "a.sh"
anchor = "$1 / 2"
replace = "$1 * 2"
suite = "a"

[[mutant]]
name = "inc decs"
file = "b.sh"
anchor = "$1 + 1"
replace = "$1 - 1"
suite = "b"
"#
    )
}

impl Two {
    fn new(suite_a_run: &str) -> Two {
        let repo = Repo::new();
        repo.write("a.sh", A)
            .write("b.sh", B)
            .write("test_a.sh", TEST_A)
            .write("test_b.sh", TEST_B)
            .write("README.md", "two libraries\n")
            .write("mutants.toml", spec(suite_a_run));
        repo.commit_all("fixture");
        Two {
            repo,
            out: tempfile::tempdir().unwrap(),
            marks: tempfile::tempdir().unwrap(),
            bin: tempfile::tempdir().unwrap(),
        }
    }

    fn out(&self) -> PathBuf {
        self.out.path().join("report")
    }

    /// `mutants run mutants.toml --out OUT --incremental EXTRA...`
    fn run(&self, extra: &[&str]) -> Output {
        let out = self.out();
        let mut args = vec![
            "run",
            "mutants.toml",
            "--out",
            out.to_str().unwrap(),
            "--incremental",
        ];
        args.extend_from_slice(extra);
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = testkit::bin(env!("CARGO_BIN_EXE_mutants"));
        cmd.current_dir(self.repo.path())
            .env("MARKS", self.marks.path())
            .env("PATH", path)
            .args(&args);
        Output::of(&mut cmd)
    }

    fn report(&self) -> Value {
        report_in(&self.out())
    }

    /// How many suite runs (baselines, canaries, mutants) have happened so far.
    fn suite_runs(&self) -> usize {
        std::fs::read_to_string(self.marks.path().join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// The names of the rows judged by the last run (not reused).
    fn judged(&self) -> Vec<String> {
        self.report()["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["reused"].is_null())
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Every file under `dir` with its bytes and modification time: what "unchanged" means.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut found = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let bytes = match meta.is_dir() {
            true => {
                todo.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                Vec::new()
            }
            false => std::fs::read(&path).unwrap(),
        };
        found.insert(path, (bytes, meta.modified().unwrap()));
    }
    found
}

#[test]
fn a_lockfile_change_judges_again_the_mutants_it_concerns_even_when_inputs_leave_it_out() {
    let two = Two::new("sh test_a.sh");
    two.repo
        .write("requirements.txt", "pytest==8.0.0\n")
        .write("docs/requirements.txt", "sphinx==7.0.0\n");
    two.repo.commit_all("lockfiles");
    two.run(&[]).assert_exit(0);
    let report = two.report();
    assert!(
        report["lockfiles"]["requirements.txt"].is_string(),
        "{report:#}"
    );
    // A lockfile in a folder no suite reads: every verdict kept.
    two.repo
        .write("docs/requirements.txt", "sphinx==7.1.0\n")
        .commit_all("docs deps");
    let out = two.run(&[]);
    out.assert_exit(0);
    assert!(out.stderr.contains("3 of 3 mutants keep"), "{out}");
    // The root's lockfile concerns every mutant, though no suite's `inputs` match it.
    two.repo
        .write("requirements.txt", "pytest==8.1.0\n")
        .commit_all("deps");
    let out = two.run(&[]);
    out.assert_exit(0);
    assert!(out.stderr.contains("0 of 3 mutants keep"), "{out}");
    assert!(
        out.stderr
            .contains("double adds: lockfile requirements.txt changed"),
        "{out}"
    );
    assert_eq!(two.judged().len(), 3);
}

#[test]
fn a_toolchain_that_answers_another_version_judges_again_the_mutants_it_runs() {
    // Suite `a` runs on `node` (a stand-in first on PATH: it answers --version from a file,
    // and runs the suite's script otherwise); suite `b` on `sh` alone.
    let two = Two::new("node test_a.sh");
    let version = two.bin.path().join("version");
    std::fs::write(&version, "v20.1.0\n").unwrap();
    let node = two.bin.path().join("node");
    std::fs::write(
        &node,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then cat '{}'; exit 0; fi\nexec sh \"$@\"\n",
            version.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();

    two.run(&[]).assert_exit(0);
    assert_eq!(two.report()["toolchains"]["node"], "v20.1.0");
    let out = two.run(&[]);
    assert!(out.stderr.contains("3 of 3 mutants keep"), "{out}");

    std::fs::write(&version, "v22.0.0\n").unwrap();
    let out = two.run(&[]);
    out.assert_exit(0);
    assert!(
        out.stderr
            .contains("double adds: toolchain node changed (v20.1.0 -> v22.0.0)"),
        "{out}"
    );
    // Only the mutants whose suite runs on it: `b` never names node.
    assert_eq!(two.judged(), ["double adds", "half doubles"]);
    assert_eq!(two.report()["toolchains"]["node"], "v22.0.0");
    let table = std::fs::read_to_string(two.out().join("mutants.txt")).unwrap();
    assert!(table.contains("toolchains: node v22.0.0\n"), "{table}");
}

#[test]
fn reused_rows_keep_the_tree_and_time_they_were_first_judged_through_two_runs() {
    let two = Two::new("sh test_a.sh");
    // A mutant whose anchor is not there: `skipped (0 matches)`, a row no suite ran (dated by
    // its report's start), a finding (exit 1).
    let skipped = "\n[[mutant]]\nname = \"gone anchor\"\nfile = \"b.sh\"\nanchor = \"dec()\"\nreplace = \"x\"\nsuite = \"b\"\n";
    two.repo
        .write("mutants.toml", spec("sh test_a.sh") + skipped)
        .commit_all("a skipped mutant");
    two.run(&[]).assert_exit(1);
    let first = two.report();
    let judged_at = row(&first, "inc decs")["run"]["start"].clone();
    assert!(judged_at.is_string());
    assert!(row(&first, "gone anchor")["run"].is_null());

    // Run 2: one mutant edited (a new tree, the spec being in it); the others reused.
    let edited = spec("sh test_a.sh").replace("$1 + 2", "$1 + 4") + skipped;
    two.repo.write("mutants.toml", &edited).commit_all("edit");
    two.run(&[]).assert_exit(1);
    let second = two.report();
    assert_ne!(second["tree"], first["tree"]);
    assert_ne!(second["start"], first["start"]);
    let reused = &row(&second, "inc decs")["reused"];
    assert_eq!(reused["tree"], first["tree"]);
    assert_eq!(reused["at"], judged_at);
    assert!(row(&second, "double adds")["reused"].is_null());

    // Run 3: another tree again; the rows still say run 1's tree and time, not run 2's.
    two.repo.write("README.md", "edited\n").commit_all("readme");
    two.run(&[]).assert_exit(1);
    let third = two.report();
    assert_ne!(third["tree"], second["tree"]);
    let reused = &row(&third, "inc decs")["reused"];
    assert_eq!(reused["tree"], first["tree"]);
    assert_eq!(reused["at"], judged_at);
    let reused = &row(&third, "gone anchor")["reused"];
    assert_eq!(reused["tree"], first["tree"]);
    assert_eq!(reused["at"], first["start"]);
    // `double adds`, judged by run 2, says run 2's tree.
    assert_eq!(row(&third, "double adds")["reused"]["tree"], second["tree"]);
    let table = std::fs::read_to_string(two.out().join("mutants.txt")).unwrap();
    let short: String = first["tree"].as_str().unwrap().chars().take(12).collect();
    assert!(
        table.contains(&format!(
            "(reused from {short}, judged {})",
            judged_at.as_str().unwrap()
        )),
        "{table}"
    );
    assert!(
        table.contains("incremental: 0 judged now, 4 reused"),
        "{table}"
    );
    let html = std::fs::read_to_string(two.out().join("mutants.html")).unwrap();
    assert!(
        html.contains(&format!(
            "<small>(reused from {short}, judged {})</small>",
            judged_at.as_str().unwrap()
        )),
        "the HTML report does not say where a reused verdict came from"
    );
}

#[test]
fn the_dry_run_lists_exactly_the_mutants_whose_inputs_changed_and_never_runs_or_writes() {
    let two = Two::new("sh test_a.sh");
    // No report to compare with: bad input, and no folder made.
    let out = two.run(&["--dry-run"]);
    out.assert_exit(2);
    assert!(out.stderr.contains("no report to compare with"), "{out}");
    assert!(!two.out().exists());
    // A report that is not one: bad input too, in one line naming it, and left as it was.
    std::fs::create_dir_all(two.out()).unwrap();
    std::fs::write(two.out().join("mutants.json"), "{\"version\": 1}").unwrap();
    let out = two.run(&["--dry-run"]);
    out.assert_exit(2);
    assert!(
        out.stderr
            .contains("mutants.json: cannot compare with this report"),
        "{out}"
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{out}");
    assert_eq!(
        std::fs::read_to_string(two.out().join("mutants.json")).unwrap(),
        "{\"version\": 1}"
    );
    std::fs::remove_dir_all(two.out()).unwrap();

    two.run(&[]).assert_exit(0);
    let runs = two.suite_runs();
    assert!(runs > 0);
    let before = snapshot(&two.out());

    // Nothing changed: every verdict current, exit 0.
    let out = two.run(&["--dry-run"]);
    out.assert_exit(0);
    assert!(out.stdout.contains("every verdict of 3 mutant(s)"), "{out}");

    // One line of b.sh changed, and a mutant added: exactly those two are listed, exit 1.
    let mut spec = spec("sh test_a.sh");
    spec.push_str("\n[[mutant]]\nname = \"half rounds\"\nfile = \"a.sh\"\nanchor = \"half()\"\nreplace = \"halve()\"\nsuite = \"a\"\n");
    two.repo
        .write("b.sh", "inc() { echo $(( $1 + 1 )) ; }\n")
        .write("mutants.toml", &spec)
        .commit_all("b edited, a mutant added");
    let out = two.run(&["--dry-run"]);
    out.assert_exit(1);
    let listed: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.contains("would be judged again"))
        .skip(1)
        .filter_map(|l| l.strip_prefix("  "))
        .collect();
    assert_eq!(
        listed,
        [
            "inc decs: b.sh changed",
            "half rounds: no verdict in the report (new, or never judged)"
        ],
        "{out}"
    );
    assert!(
        out.stdout
            .contains("2 of 4 mutant(s) would be judged again"),
        "{out}"
    );
    let json = two.run(&["--dry-run", "--json"]);
    json.assert_exit(1);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["stale"][0]["name"], "inc decs");
    assert_eq!(value["current"], false);

    // No suite ran (no baseline, no canary, no mutant) and not a byte of --out changed.
    assert_eq!(two.suite_runs(), runs, "a dry run ran a suite");
    assert_eq!(snapshot(&two.out()), before, "a dry run wrote into --out");

    // The incremental run it predicted judges exactly those, and the next dry run is clean.
    two.run(&[]).assert_exit(0);
    assert_eq!(two.judged(), ["inc decs", "half rounds"]);
    two.run(&["--dry-run"]).assert_exit(0);
}

#[test]
fn a_one_line_change_judges_again_only_the_mutants_it_can_affect() {
    let two = Two::new("sh test_a.sh");
    two.run(&[]).assert_exit(0);
    let runs = two.suite_runs();
    // One line of suite a's test changed: a's mutants can see it, b's cannot.
    two.repo
        .write("test_a.sh", TEST_A.replace("double 3", "double  3"))
        .commit_all("one line");
    let out = two.run(&[]);
    out.assert_exit(0);
    assert_eq!(two.judged(), ["double adds", "half doubles"]);
    assert!(
        out.stderr
            .contains("double adds: the inputs of suite a changed (test_a.sh)"),
        "{out}"
    );
    // Suite b did not even run its baseline: a's baseline, a's canary, a's two mutants.
    assert_eq!(two.suite_runs() - runs, 4);
    let table = std::fs::read_to_string(two.out().join("mutants.txt")).unwrap();
    assert!(
        table.contains("incremental: 2 judged now, 1 reused"),
        "{table}"
    );
}

#[test]
fn the_toolchains_a_tree_names_are_asked_and_recorded_as_they_answer() {
    if !testkit::needs::program("python3", "python3", &["--version"], "install CPython 3") {
        return;
    }
    if !testkit::needs::program(
        "pytest",
        "python3",
        &["-m", "pytest", "--version"],
        "pip install pytest",
    ) {
        return;
    }
    // No suite command names Python: the tree's manifests do.
    let two = Two::new("sh test_a.sh");
    two.repo
        .write("pyproject.toml", "[project]\nname = \"two\"\n")
        .write("conftest.py", "")
        .commit_all("python manifests");
    two.run(&[]).assert_exit(0);
    let report = two.report();
    let asked = |args: &[&str]| {
        let out = std::process::Command::new("python3")
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        text.lines().next().unwrap_or_default().trim().to_string()
    };
    assert_eq!(report["toolchains"]["python3"], asked(&["--version"]));
    let pytest = asked(&["-m", "pytest", "--version"]);
    let version = report["toolchains"]["pytest"].as_str().unwrap();
    assert!(
        version.starts_with("pytest ") && pytest.ends_with(&version["pytest ".len()..]),
        "{version} / {pytest}"
    );
    assert!(report["toolchains"]["node"].is_null(), "{report:#}");
}

#[test]
fn the_dry_run_holds_a_table_committed_inside_the_tree_and_leaves_the_repository_as_it_was() {
    let two = Two::new("sh test_a.sh");
    let table = two.repo.path().join("docs/mutants");
    let out = table.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "mutants.toml", "--incremental", "--out", out];
        args.extend_from_slice(extra);
        let mut cmd = testkit::bin(env!("CARGO_BIN_EXE_mutants"));
        cmd.current_dir(two.repo.path())
            .env("MARKS", two.marks.path())
            .args(&args);
        Output::of(&mut cmd)
    };
    run(&[]).assert_exit(0);
    two.repo.commit_all("the table");
    // The committed table changed the tree, not what any suite reads: current.
    let out = run(&["--dry-run"]);
    out.assert_exit(0);
    assert_eq!(
        two.repo.status(),
        "",
        "the dry run left the repository changed"
    );
    two.repo
        .write("a.sh", A.replace("$1 / 2", "$1 / 2 "))
        .commit_all("a edited");
    let out = run(&["--dry-run"]);
    out.assert_exit(1);
    assert!(out.stdout.contains("double adds: a.sh changed"), "{out}");
    assert!(out.stdout.contains("half doubles: a.sh changed"), "{out}");
    assert!(!out.stdout.contains("inc decs"), "{out}");
    assert_eq!(
        two.repo.status(),
        "",
        "the dry run left the repository changed"
    );
}
