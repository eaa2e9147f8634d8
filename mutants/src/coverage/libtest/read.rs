//! What the libtest map reads: cargo's build messages, a test binary's list of its tests,
//! `llvm-profdata`'s text profile and `llvm-cov export`'s JSON, the toolchain's tool paths, and
//! the template's cargo part.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::coverage::{in_tree, Map};
use candidate::suite::Items;

/// A test's run alone.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::coverage) struct TestRun {
    pub name: String,
    /// The functions its profiles ran.
    pub functions: BTreeSet<String>,
    /// Its time in seconds.
    pub secs: f64,
    /// Whether it passed.
    pub passed: bool,
}

/// A test binary (or a binary the tests run) the instrumented build made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::coverage) struct Artifact {
    pub exe: PathBuf,
    /// Its package's folder: where `cargo test` runs it.
    pub dir: PathBuf,
    /// A test harness (its tests are listed and run), not a binary the tests start.
    pub test: bool,
}

#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    profile: Option<Profile>,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
}

/// The executables in `cargo build --message-format=json`'s output, each once, in its order.
pub(in crate::coverage) fn artifacts(json: &[u8]) -> Vec<Artifact> {
    let mut seen = BTreeSet::new();
    String::from_utf8_lossy(json)
        .lines()
        .filter_map(|line| serde_json::from_str::<Message>(line).ok())
        .filter(|m| m.reason == "compiler-artifact")
        .filter_map(|m| {
            let exe = m.executable?;
            let dir = m.manifest_path?.parent()?.to_path_buf();
            let test = m.profile.is_some_and(|p| p.test);
            seen.insert(exe.clone())
                .then_some(Artifact { exe, dir, test })
        })
        .collect()
}

/// The tests a libtest binary's `--list --format terse` names (`NAME: test`; benchmarks are
/// not run by `cargo test`).
pub(in crate::coverage) fn listed(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

/// The functions a profile ran, from `llvm-profdata merge -sparse -text`: a sparse profile
/// holds only functions with a counter above zero. Records are apart by blank lines, each a
/// name line, then `#` comment lines and numbers; the file starts with `#` and `:` header
/// lines.
pub(in crate::coverage) fn functions_run(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut at_start = true;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with(':') {
            at_start = true;
        } else if !line.starts_with('#') {
            if at_start {
                found.insert(line.to_string());
            }
            at_start = false;
        }
    }
    found
}

#[derive(Deserialize)]
struct Export {
    data: Vec<ExportData>,
}

#[derive(Deserialize)]
struct ExportData {
    #[serde(default)]
    functions: Vec<ExportFunction>,
}

#[derive(Deserialize)]
struct ExportFunction {
    name: String,
    filenames: Vec<String>,
    /// `[line_start, col_start, line_end, col_end, count, file_id, expanded_file_id, kind]`.
    regions: Vec<Vec<i64>>,
}

/// Which lines of which file of the tree each function spans, from `llvm-cov export`'s JSON.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::coverage) struct Extents {
    /// Function name -> (file, first line, last line) for each file of the tree it has code in.
    by_function: BTreeMap<String, Vec<(String, u32, u32)>>,
}

impl Extents {
    /// The extents in `json` for the files under one of `roots` (the checkout's path as the
    /// build saw it); `None` when it does not read.
    pub fn read(json: &[u8], roots: &[&Path]) -> Option<Extents> {
        let export: Export = serde_json::from_slice(json).ok()?;
        let mut by_function: BTreeMap<String, Vec<(String, u32, u32)>> = BTreeMap::new();
        for f in export.data.into_iter().flat_map(|d| d.functions) {
            let mut spans: BTreeMap<usize, (u32, u32)> = BTreeMap::new();
            for r in &f.regions {
                let (Some(&start), Some(&end), Some(&file)) = (r.first(), r.get(2), r.get(5))
                else {
                    continue;
                };
                let (Ok(start), Ok(end), Ok(file)) = (
                    u32::try_from(start),
                    u32::try_from(end),
                    usize::try_from(file),
                ) else {
                    continue;
                };
                if start == 0 || end < start {
                    continue;
                }
                let span = spans.entry(file).or_insert((start, end));
                span.0 = span.0.min(start);
                span.1 = span.1.max(end);
            }
            for (file, (start, end)) in spans {
                let Some(name) = f.filenames.get(file) else {
                    continue;
                };
                let Some(rel) = roots.iter().find_map(|r| in_tree(Path::new(name), r)) else {
                    continue;
                };
                let list = by_function.entry(f.name.clone()).or_default();
                if !list.contains(&(rel.clone(), start, end)) {
                    list.push((rel, start, end));
                }
            }
        }
        Some(Extents { by_function })
    }

    /// The map: each test reaches every line of each function it ran (`runs`: each test's
    /// name, the functions its profiles ran, and how long it took alone); a line of a function
    /// no test ran is known and reached by none.
    pub fn map(&self, runs: &[TestRun]) -> Map {
        let mut map = Map::new(Items::Tests);
        map.libtest = true;
        let mut by_function: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        for run in runs {
            map.timed(&run.name, run.secs);
            map.ran_alone(&run.name, run.passed, seen.insert(&run.name));
            for f in &run.functions {
                by_function.entry(f).or_default().push(&run.name);
            }
        }
        for (function, spans) in &self.by_function {
            let tests = by_function.get(function.as_str());
            for (file, start, end) in spans {
                for line in *start..=*end {
                    map.known(file, line);
                    for test in tests.into_iter().flatten() {
                        map.add(file, line, Some(test));
                    }
                }
            }
        }
        map
    }
}

/// Where the toolchain keeps `llvm-profdata` and `llvm-cov`: its sysroot (`rustc --print
/// sysroot`) and host (`rustc -vV`), as rustup's `llvm-tools` installs them.
pub(in crate::coverage) fn tools(sysroot: &str, version: &str) -> Option<(PathBuf, PathBuf)> {
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))?
        .trim();
    let bin = Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host)
        .join("bin");
    let (profdata, cov) = (bin.join("llvm-profdata"), bin.join("llvm-cov"));
    (profdata.is_file() && cov.is_file()).then_some((profdata, cov))
}

/// A `select` template that hands libtest its test names (`{tests}` after a `--` word), in
/// its two parts: what builds and runs the tests (`cargo test -p app --tests`), and the test
/// binaries' own options besides the names (`--exact --skip slow`), which a listing of their
/// tests honours too.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::coverage) struct CargoParts {
    pub cargo: String,
    pub options: String,
}

/// The template's [`CargoParts`]; `None` for any other template (`cargo test {tests}` selects
/// packages: see `cargo`).
pub(in crate::coverage) fn cargo_part(template: &str) -> Option<CargoParts> {
    let words: Vec<&str> = template.split_whitespace().collect();
    let cargo = words.iter().position(|w| *w == "cargo")?;
    let dashes = cargo + words[cargo..].iter().position(|w| *w == "--")?;
    let tests = words.iter().position(|w| *w == "{tests}")?;
    (words.get(cargo + 1) == Some(&"test") && tests > dashes).then(|| CargoParts {
        cargo: words[..dashes].join(" "),
        options: words[dashes + 1..]
            .iter()
            .filter(|w| **w != "{tests}")
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::Reach;

    #[test]
    fn a_template_hands_libtest_names_only_after_its_double_dash() {
        let parts = |cargo: &str, options: &str| {
            Some(CargoParts {
                cargo: cargo.into(),
                options: options.into(),
            })
        };
        assert_eq!(
            cargo_part("cargo test -q --tests -- --exact {tests}"),
            parts("cargo test -q --tests", "--exact")
        );
        assert_eq!(
            cargo_part("RUST_LOG=x cargo test -p a -- --skip slow {tests} --test-threads=1"),
            parts("RUST_LOG=x cargo test -p a", "--skip slow --test-threads=1")
        );
        // Packages, not names; not cargo's tests; no list at all.
        assert_eq!(cargo_part("cargo test {tests}"), None);
        assert_eq!(cargo_part("cargo test {tests} -- --exact"), None);
        assert_eq!(cargo_part("cargo nextest run -- {tests}"), None);
        assert_eq!(cargo_part("pytest -- {tests}"), None);
    }

    #[test]
    fn artifacts_are_the_executables_with_their_packages_folders() {
        let json = [
            r#"{"reason":"compiler-artifact","manifest_path":"/w/a/Cargo.toml","profile":{"test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/w/a/Cargo.toml","profile":{"test":true},"executable":"/t/deps/a-1"}"#,
            r#"{"reason":"compiler-message","message":{}}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/w/b/Cargo.toml","profile":{"test":false},"executable":"/t/b"}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/w/a/Cargo.toml","profile":{"test":true},"executable":"/t/deps/a-1"}"#,
            "not json",
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(
            artifacts(json.as_bytes()),
            [
                Artifact {
                    exe: "/t/deps/a-1".into(),
                    dir: "/w/a".into(),
                    test: true
                },
                Artifact {
                    exe: "/t/b".into(),
                    dir: "/w/b".into(),
                    test: false
                },
            ]
        );
    }

    #[test]
    fn a_list_names_tests_and_not_benchmarks() {
        let text =
            "tests::adds: test\nit works: test\nbench_it: benchmark\n\n2 tests, 1 benchmark\n";
        assert_eq!(listed(text), ["tests::adds", "it works"]);
    }

    #[test]
    fn a_sparse_profile_names_the_functions_it_ran() {
        let text = "# IR level Instrumentation Flag\n:ir\n_RNvCs1_1w3sub\n# Func Hash:\n98\n# Num Counters:\n1\n# Counter Values:\n1\n\n_RNvCs1_1w3add\n# Func Hash:\n7\n# Num Counters:\n2\n# Counter Values:\n1\n0\n\nsrc/lib.rs:_RNvCs1_1w5local\n# Func Hash:\n1\n# Num Counters:\n1\n# Counter Values:\n3\n";
        let names: Vec<String> = functions_run(text).into_iter().collect();
        assert_eq!(
            names,
            [
                "_RNvCs1_1w3add",
                "_RNvCs1_1w3sub",
                "src/lib.rs:_RNvCs1_1w5local"
            ]
        );
    }

    #[test]
    fn a_test_reaches_every_line_of_each_function_it_ran_and_nothing_else() {
        let json = serde_json::json!({"data": [{"functions": [
            {"name": "add", "filenames": ["/w/src/lib.rs"], "regions": [[3, 1, 3, 34, 0, 0, 0, 0], [4, 5, 5, 2, 0, 0, 0, 0]]},
            {"name": "never", "filenames": ["/w/src/lib.rs"], "regions": [[12, 1, 17, 2, 0, 0, 0, 0]]},
            {"name": "dep", "filenames": ["/home/u/.cargo/registry/x.rs"], "regions": [[1, 1, 9, 1, 5, 0, 0, 0]]},
            {"name": "macro", "filenames": ["/w/src/lib.rs", "/w/src/m.rs"], "regions": [[20, 1, 20, 9, 1, 0, 0, 0], [2, 1, 4, 1, 1, 1, 0, 0]]},
        ]}]});
        let ext = Extents::read(json.to_string().as_bytes(), &[Path::new("/w")]).unwrap();
        let run = |name: &str, functions: &[&str], passed: bool| TestRun {
            name: name.into(),
            functions: functions.iter().map(|f| f.to_string()).collect(),
            secs: 0.25,
            passed,
        };
        let runs = vec![
            run("tests::adds", &["add"], true),
            run("it_macro", &["macro", "dep"], true),
            // A name in two binaries: it failed alone in one of them.
            run("tests::shared", &[], true),
            run("tests::shared", &[], false),
            run("it_fails", &[], false),
        ];
        let map = ext.map(&runs);
        let tests = |n: &[&str]| Reach::Tests(n.iter().map(|s| s.to_string()).collect());
        assert_eq!(map.reach("src/lib.rs", 4..=4), tests(&["tests::adds"]));
        assert_eq!(map.reach("src/lib.rs", 3..=5), tests(&["tests::adds"]));
        // A function no test ran: known, reached by none.
        assert_eq!(map.reach("src/lib.rs", 13..=13), tests(&[]));
        // A line in no function (a `const`), and a file the build never saw: every test.
        assert_eq!(map.reach("src/lib.rs", 1..=1), Reach::Every);
        assert_eq!(map.reach("src/lib.rs", 5..=6), Reach::Every);
        assert_eq!(map.reach("src/other.rs", 1..=1), Reach::Every);
        // A macro's lines are its caller's.
        assert_eq!(map.reach("src/m.rs", 3..=3), tests(&["it_macro"]));
        assert_eq!(map.tests(), 4);
        assert!(map.runs_tests_alone());
        let alone: Vec<bool> = ["tests::adds", "tests::shared", "it_fails", "unknown"]
            .iter()
            .map(|t| map.passed_alone(t))
            .collect();
        assert_eq!(alone, [true, false, false, false]);
        assert_eq!(map.usable(), Ok(()));
        // Names are no files, and the map holds no verdict to files.
        assert_eq!(map.as_items(vec!["it_macro".into()], Items::Files), None);
        assert_eq!(map.held_to("src/lib.rs", 4..=4, &[], true), None);
    }

    #[test]
    fn the_tools_are_the_toolchains_own() {
        let sysroot = tempfile::tempdir().unwrap();
        let bin = sysroot
            .path()
            .join("lib/rustlib/x86_64-unknown-linux-gnu/bin");
        let version = "rustc 1.95.0\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\n";
        let root = format!("{}\n", sysroot.path().display());
        assert_eq!(tools(&root, version), None);
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("llvm-profdata"), "").unwrap();
        assert_eq!(tools(&root, version), None);
        std::fs::write(bin.join("llvm-cov"), "").unwrap();
        assert_eq!(
            tools(&root, version),
            Some((bin.join("llvm-profdata"), bin.join("llvm-cov")))
        );
        assert_eq!(tools(&root, "rustc 1.95.0\n"), None);
    }
}
