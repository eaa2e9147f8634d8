//! vitest's and jest's maps, by test file. Both transform the sources before they run, so V8's
//! raw coverage of a module does not match the file's lines; each runner's own coverage maps
//! them back and writes istanbul's JSON (`coverage-final.json`). Neither says which test ran a
//! line, so the suite's `select` template runs once per test file with the runner's coverage
//! on, and the lines of every statement that run ran are reached by that file (lines run at
//! module level count for each file that imports the module, as they run for it).
//!
//! The test files are the runner's own list (`vitest list --filesOnly --json`, `jest
//! --listTests --json`), made from the template's own words (its runner and options, without
//! its placeholder). vitest needs a coverage provider installed (`@vitest/coverage-v8`, or the
//! istanbul one a project configures); without one no coverage comes back, and the suite's
//! mutants run whole, as they do with no map.

use std::path::Path;

use serde::Deserialize;
use std::collections::BTreeMap;

use super::{in_tree, Map};

/// A runner whose coverage is read from istanbul's JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runner {
    Vitest,
    Jest,
}

impl Runner {
    /// The runner a `select` template runs, and where its word stands among the template's
    /// words: the first word whose file name is `vitest` or `jest` (`npx vitest run {files}`,
    /// `node_modules/.bin/jest {files}`, `node node_modules/vitest/vitest.mjs run {files}`).
    pub(super) fn of(template: &str) -> Option<(Runner, usize)> {
        template.split_whitespace().enumerate().find_map(|(i, w)| {
            let name = w.rsplit('/').next().unwrap_or(w);
            let stem = name
                .strip_suffix(".mjs")
                .or_else(|| name.strip_suffix(".js"))
                .unwrap_or(name);
            match stem {
                "vitest" => Some((Runner::Vitest, i)),
                "jest" => Some((Runner::Jest, i)),
                _ => None,
            }
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Runner::Vitest => "vitest",
            Runner::Jest => "jest",
        }
    }

    /// The command that lists the runner's test files as JSON on stdout: the template's words
    /// up to the runner's, its list option, then the template's other words (its options),
    /// without the placeholder and without vitest's own subcommand (`run`).
    pub(super) fn list_command(self, template: &str, at: usize) -> String {
        let words: Vec<&str> = template.split_whitespace().collect();
        let mut rest: Vec<&str> = words[at + 1..]
            .iter()
            .copied()
            .filter(|w| *w != "{files}" && *w != "{tests}")
            .collect();
        if self == Runner::Vitest
            && rest
                .first()
                .is_some_and(|w| ["run", "watch", "dev", "related"].contains(w))
        {
            rest.remove(0);
        }
        let list = match self {
            Runner::Vitest => "list --filesOnly --json",
            Runner::Jest => "--listTests --json",
        };
        let mut command = words[..=at].join(" ");
        command.push(' ');
        command.push_str(list);
        for w in rest {
            command.push(' ');
            command.push_str(w);
        }
        command
    }

    /// The options that turn the runner's coverage on, with istanbul's JSON written into
    /// `dir` (thresholds off for jest: one file's run covers little, and a threshold would fail
    /// it after the report is written anyway).
    pub(super) fn coverage_options(self, dir: &Path) -> String {
        let dir = report::text::shell_quote(&dir.display().to_string());
        match self {
            Runner::Vitest => format!(
                "--coverage.enabled=true --coverage.reporter=json --coverage.reportsDirectory={dir}"
            ),
            Runner::Jest => format!(
                "--coverage --coverageReporters=json --coverageDirectory={dir} '--coverageThreshold={{}}'"
            ),
        }
    }
}

/// The test files the runner listed (`stdout`: vitest's `[{"file": PATH}]`, jest's `[PATH]`),
/// as the tree names them, in its order; paths outside the checkout at `roots` are left out.
/// Text the runner printed around the JSON (a warning) is skipped.
pub(super) fn listed(stdout: &[u8], roots: &[&Path]) -> Vec<String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Path(String),
        File { file: String },
    }
    let text = String::from_utf8_lossy(stdout);
    let (Some(start), Some(end)) = (text.find('['), text.rfind(']')) else {
        return Vec::new();
    };
    if end < start {
        return Vec::new();
    }
    let Ok(entries) = serde_json::from_str::<Vec<Entry>>(&text[start..=end]) else {
        return Vec::new();
    };
    let mut files: Vec<String> = Vec::new();
    for entry in entries {
        let path = match entry {
            Entry::Path(p) | Entry::File { file: p } => p,
        };
        let found = roots
            .iter()
            .find_map(|root| in_tree(Path::new(&path), root));
        if let Some(file) = found {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    files
}

#[derive(Deserialize)]
struct FileCoverage {
    #[serde(rename = "statementMap")]
    statement_map: BTreeMap<String, Location>,
    s: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct Location {
    start: Position,
    end: Position,
}

#[derive(Deserialize)]
struct Position {
    line: u32,
}

/// Adds to `map` the lines of every statement istanbul's `json` says ran, as reached by
/// `test`, for files in the checkout at `roots`. `false` when the JSON does not read.
pub(super) fn read(json: &[u8], roots: &[&Path], test: &str, map: &mut Map) -> bool {
    let Ok(files) = serde_json::from_slice::<BTreeMap<String, FileCoverage>>(json) else {
        return false;
    };
    for (path, cov) in files {
        let Some(file) = roots
            .iter()
            .find_map(|root| in_tree(Path::new(&path), root))
        else {
            continue;
        };
        for (id, count) in &cov.s {
            let Some(at) = cov.statement_map.get(id).filter(|_| *count > 0) else {
                continue;
            };
            // A statement over several lines reaches each of them; a map that says more than
            // ran only makes a run slower.
            let end = at.end.line.max(at.start.line).min(at.start.line + 10_000);
            for line in at.start.line.max(1)..=end {
                map.add(&file, line, Some(test));
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::Reach;
    use candidate::suite::Items;

    #[test]
    fn the_runner_is_the_templates_vitest_or_jest_word() {
        assert_eq!(
            Runner::of("npx vitest run {files}"),
            Some((Runner::Vitest, 1))
        );
        assert_eq!(
            Runner::of("node_modules/.bin/jest --runTestsByPath {files}"),
            Some((Runner::Jest, 0))
        );
        assert_eq!(
            Runner::of("node node_modules/vitest/vitest.mjs run {files}"),
            Some((Runner::Vitest, 1))
        );
        assert_eq!(Runner::of("node --test {files}"), None);
        assert_eq!(Runner::of("npx vitest-ish {files}"), None);
    }

    #[test]
    fn the_list_command_keeps_the_templates_runner_and_options() {
        let list = |t: &str| {
            let (runner, at) = Runner::of(t).unwrap();
            runner.list_command(t, at)
        };
        assert_eq!(
            list("npx vitest run --config vitest.unit.ts {files}"),
            "npx vitest list --filesOnly --json --config vitest.unit.ts"
        );
        assert_eq!(
            list("npx jest --runTestsByPath {files} --ci"),
            "npx jest --listTests --json --runTestsByPath --ci"
        );
    }

    #[test]
    fn listed_files_are_the_trees_in_the_runners_order() {
        let root = Path::new("/w/co");
        let vitest = br#"some warning
[{"file": "/w/co/test/b.test.ts"}, {"file": "/w/co/test/a b.test.ts"}, {"file": "/elsewhere/x.test.ts"}]"#;
        assert_eq!(
            listed(vitest, &[root]),
            ["test/b.test.ts", "test/a b.test.ts"]
        );
        let jest = br#"["/w/co/t/one.test.js", "/w/co/t/one.test.js"]"#;
        assert_eq!(listed(jest, &[root]), ["t/one.test.js"]);
        assert!(listed(b"no json here", &[root]).is_empty());
    }

    #[test]
    fn the_lines_of_statements_that_ran_are_reached_by_the_test_file() {
        let root = Path::new("/w/co");
        let json = br#"{
          "/w/co/src/add.js": {
            "path": "/w/co/src/add.js",
            "statementMap": {
              "0": {"start": {"line": 2, "column": 2}, "end": {"line": 4, "column": 3}},
              "1": {"start": {"line": 7, "column": 2}, "end": {"line": 7, "column": 12}}
            },
            "s": {"0": 3, "1": 0},
            "fnMap": {}, "f": {}, "branchMap": {}, "b": {}
          },
          "/outside/lib.js": {
            "statementMap": {"0": {"start": {"line": 1, "column": 0}, "end": {"line": 1, "column": 9}}},
            "s": {"0": 1}
          }
        }"#;
        let mut map = Map::new(Items::Files);
        assert!(read(json, &[root], "test/add.test.js", &mut map));
        let add = |lines| map.reach("src/add.js", lines);
        assert_eq!(add(3..=3), Reach::Tests(vec!["test/add.test.js".into()]));
        assert_eq!(add(7..=7), Reach::Tests(vec![]));
        assert_eq!(map.files(), 1);
        assert!(!read(b"{not json", &[root], "t", &mut map));
    }
}
