//! Coverage maps: which tests run which lines of which files, read from each ecosystem's own
//! coverage, so a mutant can run only the tests that can see it first (a suite's `select`).
//!
//! A [`Map`] names its tests as the runner's test files (`node --test`: each test file runs in
//! a process of its own, so its V8 coverage is the file's) or as its test ids (pytest, through
//! coverage.py's dynamic contexts, one per test). Lines run outside any test (a module's body
//! run when it is imported for collection, the runner's own process) count as run by every test:
//! a mutant there sees every test, and the whole suite runs at once.
//!
//! A map only ever decides which tests run *first*: every survivor, and every `not covered`,
//! is confirmed by the whole suite (see `run::select`), so a map that is wrong, stale or partial
//! makes a run slower, never a verdict wrong. That is why the readers here may be approximate
//! (a line counts as run when the innermost V8 range around its first character ran).
//!
//! Collection ([`collect()`]) runs the suite's own `run` once, unmutated, with the ecosystems'
//! switches in its environment (`NODE_V8_COVERAGE` and a preload that records each process's
//! test file; a pytest plugin given by `-p` through `PYTEST_ADDOPTS` and `PYTHONPATH`), all of
//! them writing into a scratch folder of the session: never the user's tree, never a linked
//! folder, never the checkout. For `cargo test` the map is by package, read from `cargo
//! metadata` with no test run (`cargo`), or, for a template that hands libtest its test
//! names, by test, each run alone in an instrumented build (`libtest`). A map is kept in gatekit's cache per code tree and
//! suite (`store`), so the next run of the same code reads it instead of mapping again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use candidate::suite::Items;

mod cargo;
mod istanbul;
mod libtest;
mod node;
mod own;
mod pytest;
mod store;

pub(crate) use store::{load, save};

pub(crate) use collect::{collect, Collected, Places};

mod collect;

/// Which tests run which lines, per file of the tree (paths relative to its root, with `/`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Map {
    /// What the tests' names are: test files or test ids.
    items: Option<Items>,
    /// Every test seen, by name; lines name them by their index here.
    tests: Vec<String>,
    index: BTreeMap<String, usize>,
    files: BTreeMap<String, Lines>,
    /// Folders whose every line the tests run, for a runner whose unit is a package, not a
    /// line (cargo: a crate's folder and the tests of the crates that depend on it). A file
    /// with lines of its own is read by them instead.
    dirs: BTreeMap<String, BTreeSet<usize>>,
    /// The tests are packages (`--package=NAME`): no file names them.
    packages: bool,
    /// The tests are libtest's names (`module::test`), mapped by function (see `libtest`): a
    /// line no function spans, and a file the map does not know, are reached by every test;
    /// a name says no file.
    libtest: bool,
    /// The tests that passed when each ran alone, by index (a libtest map runs every test so;
    /// a name in two test binaries passed in both). See [`Map::passed_alone`].
    alone: BTreeSet<usize>,
    /// How long each test took in the coverage run, by index, where the runner said
    /// (seconds; a test run by several processes adds up).
    secs: BTreeMap<usize, f64>,
    /// What the coverage run spent outside its tests' own times (start-up, collection):
    /// what a run of any selection pays too.
    overhead: Option<f64>,
}

/// One file's lines: those run outside any test, and which tests ran each of the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Lines {
    every: BTreeSet<u32>,
    by: BTreeMap<u32, BTreeSet<usize>>,
}

/// Which tests reach some lines of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A line is run outside any test: every test reaches it.
    Every,
    /// These tests, in the map's order; empty: none does.
    Tests(Vec<String>),
}

impl Map {
    /// An empty map whose tests are `items`.
    pub fn new(items: Items) -> Map {
        Map {
            items: Some(items),
            ..Map::default()
        }
    }

    /// How many tests the map knows.
    pub fn tests(&self) -> usize {
        self.tests.len()
    }

    /// Every test the map knows, in its order (for a selection of all of them).
    pub fn all_tests(&self) -> Vec<String> {
        self.tests.clone()
    }

    /// How many files (and package folders) have a line any test (or none) ran.
    pub fn files(&self) -> usize {
        self.files.len() + self.dirs.len()
    }

    /// Whether the map can be trusted to say a mutant is reached by no test: it names at
    /// least one test and one file. An empty map (a runner whose processes the collector did
    /// not see, coverage another plugin took over) would call every survivor `not covered`;
    /// it is no map, and the suite runs whole. `Err` says why.
    pub fn usable(&self) -> Result<(), String> {
        match (self.tests(), self.files()) {
            (0, _) => Err("the coverage run mapped no test".into()),
            (n, 0) => Err(format!(
                "the coverage run saw {} but no line of the tree run by any",
                report::text::plural(n, "test")
            )),
            _ => Ok(()),
        }
    }

    /// The test's index, known from now on.
    fn test(&mut self, name: &str) -> usize {
        let next = self.tests.len();
        let i = *self.index.entry(name.to_string()).or_insert(next);
        if i == next {
            self.tests.push(name.to_string());
        }
        i
    }

    /// Records that `test` runs every line of every file in `dir` ("" for the root).
    fn add_dir(&mut self, dir: &str, test: &str) {
        let i = self.test(test);
        self.dirs.entry(dir.to_string()).or_default().insert(i);
    }

    /// Records that `test` took `secs` in the coverage run (added to what it took already).
    pub fn timed(&mut self, test: &str, secs: f64) {
        if secs.is_finite() && secs >= 0.0 {
            let i = self.test(test);
            *self.secs.entry(i).or_default() += secs;
        }
    }

    /// Records the coverage run's wall time, `wall` seconds: what its tests' own times do not
    /// account for is every run's overhead. Nothing when no test was timed.
    pub fn ran_for(&mut self, wall: f64) {
        if !self.secs.is_empty() && wall.is_finite() {
            self.overhead = Some((wall - self.secs.values().sum::<f64>()).max(0.0));
        }
    }

    /// What a run of just `tests` (as [`Map::reach`] names them) should take, from the
    /// coverage run: its overhead and those tests' times. `None` when the map cannot say (a
    /// test with no time, a runner that gave none).
    pub fn estimate(&self, tests: &[String]) -> Option<std::time::Duration> {
        let mut secs = self.overhead?;
        for t in tests {
            secs += self.secs.get(self.index.get(t)?)?;
        }
        std::time::Duration::try_from_secs_f64(secs).ok()
    }

    /// Records that `test` ran `line` of `file`; `None`: it ran outside any test.
    pub fn add(&mut self, file: &str, line: u32, test: Option<&str>) {
        let test = test.map(|name| self.test(name));
        let lines = self.files.entry(file.to_string()).or_default();
        match test {
            None => {
                lines.every.insert(line);
            }
            Some(i) => {
                lines.by.entry(line).or_default().insert(i);
            }
        }
    }

    /// Whether the map ran each test alone (a libtest map), so that a kill by a covering test
    /// is confirmed by that test alone (see `run::select`).
    pub fn runs_tests_alone(&self) -> bool {
        self.libtest
    }

    /// Whether `test` passed when it ran alone on the unmutated code in the coverage run.
    pub fn passed_alone(&self, test: &str) -> bool {
        self.index.get(test).is_some_and(|i| self.alone.contains(i))
    }

    /// Records how `test` did when it ran alone: it passed alone only if every run of it did.
    fn ran_alone(&mut self, test: &str, passed: bool, first: bool) {
        let i = self.test(test);
        match (passed, first) {
            (true, true) => {
                self.alone.insert(i);
            }
            (false, _) => {
                self.alone.remove(&i);
            }
            (true, false) => {}
        }
    }

    /// Records that `line` of `file` is in code a test could run, whether any did or not.
    fn known(&mut self, file: &str, line: u32) {
        let lines = self.files.entry(file.to_string()).or_default();
        lines.by.entry(line).or_default();
    }

    /// Which tests reach any of `lines` (from 1, inclusive) of `file`.
    pub fn reach(&self, file: &str, lines: std::ops::RangeInclusive<u32>) -> Reach {
        if self.libtest
            && self
                .files
                .get(file)
                .is_none_or(|f| lines.clone().any(|l| !f.by.contains_key(&l)))
        {
            return Reach::Every;
        }
        let Some(f) = self.files.get(file) else {
            // The innermost package folder that holds the file.
            let found = self
                .dirs
                .iter()
                .filter(|(dir, _)| dir.is_empty() || file.starts_with(&format!("{dir}/")))
                .max_by_key(|(dir, _)| dir.len())
                .map(|(_, tests)| tests.iter().map(|&i| self.tests[i].clone()).collect());
            return Reach::Tests(found.unwrap_or_default());
        };
        if f.every.range(lines.clone()).next().is_some() {
            return Reach::Every;
        }
        let found: BTreeSet<usize> =
            f.by.range(lines)
                .flat_map(|(_, t)| t.iter().copied())
                .collect();
        Reach::Tests(found.into_iter().map(|i| self.tests[i].clone()).collect())
    }

    /// What a mutant at `lines` of `file` can read, for `--incremental`: the files its covering
    /// tests ran (with those run outside any test), those tests' own files, the file itself,
    /// and every path of `changed` the map does not know (a new test file may reach it).
    /// `None` when the map cannot say: lines run outside any test (every test reaches them),
    /// or a map by package or by libtest's names, which name no file.
    ///
    /// `alone`: the verdict came from a run of the covering tests alone, which loaded no other
    /// test file; the module-level lines of other tests' files (run when the whole suite
    /// collected them) do not count then. A whole suite's verdict (a survivor, a kill the map
    /// missed) reads every test file.
    pub fn held_to(
        &self,
        file: &str,
        lines: std::ops::RangeInclusive<u32>,
        changed: &[String],
        alone: bool,
    ) -> Option<BTreeSet<String>> {
        if self.packages || self.libtest {
            return None;
        }
        let Reach::Tests(tests) = self.reach(file, lines) else {
            return None;
        };
        let own: BTreeSet<String> = tests.iter().map(|t| test_file(t).to_string()).collect();
        let every_test_file: BTreeSet<&str> = self.tests.iter().map(|t| test_file(t)).collect();
        let mut held = self.files_run_by(&tests);
        if alone {
            held.retain(|f| {
                own.contains(f) || !every_test_file.contains(f.as_str()) || self.ran_in(f, &tests)
            });
            held.extend(own);
        } else {
            // The whole suite decided: any test, in any test file, could reach the mutant now
            // (a test added beside others for a survivor), whatever the map says those files
            // ran before.
            held.extend(every_test_file.into_iter().map(str::to_string));
        }
        held.insert(file.to_string());
        held.extend(
            changed
                .iter()
                .filter(|p| !self.files.contains_key(p.as_str()))
                .cloned(),
        );
        Some(held)
    }

    /// The files of the tree that `tests` ran, with those that run outside any test: what a
    /// mutant's covering tests can read (for `--incremental`). A test the map does not know
    /// adds nothing.
    pub fn files_run_by(&self, tests: &[String]) -> BTreeSet<String> {
        let wanted: BTreeSet<usize> = tests
            .iter()
            .filter_map(|t| self.index.get(t).copied())
            .collect();
        self.files
            .iter()
            .filter(|(_, l)| !l.every.is_empty() || l.by.values().any(|t| !t.is_disjoint(&wanted)))
            .map(|(f, _)| f.clone())
            .collect()
    }

    /// Whether any of `tests` ran a line of `file` (not counting lines run outside any test).
    fn ran_in(&self, file: &str, tests: &[String]) -> bool {
        let Some(lines) = self.files.get(file) else {
            return false;
        };
        tests
            .iter()
            .filter_map(|t| self.index.get(t))
            .any(|i| lines.by.values().any(|ran| ran.contains(i)))
    }

    /// `tests` as a template that takes `items` wants them: test ids as they are, or as their
    /// files (pytest's `tests/t.py::test_x[1]` is `tests/t.py`), each once. `None` when the map
    /// cannot name them so (a map by file has no test ids).
    pub fn as_items(&self, tests: Vec<String>, items: Items) -> Option<Vec<String>> {
        match (self.items?, items) {
            (_, Items::Files) if self.packages || self.libtest => None,
            (a, b) if a == b => Some(tests),
            (Items::Tests, Items::Files) => {
                let mut seen = BTreeSet::new();
                Some(
                    tests
                        .into_iter()
                        .map(|t| test_file(&t).to_string())
                        .filter(|f| seen.insert(f.clone()))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// The two maps as one: the same lines from more processes (pytest-xdist's workers).
    /// `None` when their tests are named differently.
    fn merge(mut self, other: Map) -> Option<Map> {
        match (self.items, other.items) {
            (Some(a), Some(b)) if a != b => return None,
            (None, b) => self.items = b,
            _ => {}
        }
        for (file, lines) in other.files {
            for line in lines.every {
                self.add(&file, line, None);
            }
            for (line, tests) in lines.by {
                for t in tests {
                    self.add(&file, line, Some(&other.tests[t]));
                }
            }
        }
        for (t, secs) in other.secs {
            self.timed(&other.tests[t], secs);
        }
        Some(self)
    }
}

/// The file a test's name is in: pytest's `tests/t.py::test_x[1]` is `tests/t.py`; a test
/// file's name is its own.
fn test_file(test: &str) -> &str {
    test.split("::").next().unwrap_or_default()
}

/// A path a coverage tool wrote (absolute, or relative to the checkout) as the tree names it,
/// relative to `root` with `/`; `None` for a file outside the checkout.
fn in_tree(path: &Path, root: &Path) -> Option<String> {
    let abs: PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let rel = abs.strip_prefix(root).ok()?;
    let text = rel.to_str()?.to_string();
    (!text.is_empty() && !text.starts_with("..")).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_with_no_test_or_no_file_is_no_map() {
        let mut map = Map::new(Items::Tests);
        assert!(map.usable().is_err());
        map.timed("t.py::a", 0.1);
        assert_eq!(
            map.usable(),
            Err("the coverage run saw 1 test but no line of the tree run by any".into())
        );
        map.add("a.py", 1, Some("t.py::a"));
        assert_eq!(map.usable(), Ok(()));
    }

    #[test]
    fn lines_run_outside_any_test_are_reached_by_every_test() {
        let mut m = Map::new(Items::Tests);
        m.add("src/a.py", 1, None);
        m.add("src/a.py", 3, Some("t.py::one"));
        m.add("src/a.py", 4, Some("t.py::two"));
        m.add("src/a.py", 4, Some("t.py::one"));
        m.add("src/b.py", 9, Some("u.py::three[a b]"));
        assert_eq!(m.reach("src/a.py", 1..=1), Reach::Every);
        assert_eq!(m.reach("src/a.py", 1..=3), Reach::Every);
        assert_eq!(
            m.reach("src/a.py", 3..=4),
            Reach::Tests(vec!["t.py::one".into(), "t.py::two".into()])
        );
        assert_eq!(m.reach("src/a.py", 5..=9), Reach::Tests(Vec::new()));
        assert_eq!(m.reach("src/c.py", 1..=9), Reach::Tests(Vec::new()));
        assert_eq!(
            m.as_items(
                vec!["u.py::three[a b]".into(), "u.py::four".into()],
                Items::Files
            ),
            Some(vec!["u.py".to_string()])
        );
        let by_file = Map::new(Items::Files);
        assert_eq!(by_file.as_items(vec!["a".into()], Items::Tests), None);
        let ran: Vec<String> = m
            .files_run_by(&["u.py::three[a b]".into()])
            .into_iter()
            .collect();
        // src/a.py runs outside any test, so every test reads it.
        assert_eq!(ran, ["src/a.py", "src/b.py"]);
    }

    #[test]
    fn a_selection_is_estimated_from_its_tests_times_and_the_runs_overhead() {
        let mut m = Map::new(Items::Tests);
        m.add("src/a.py", 3, Some("t.py::one"));
        m.add("src/a.py", 4, Some("t.py::two"));
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        m.timed("t.py::one", 0.5);
        m.timed("t.py::two", 2.0);
        m.timed("t.py::two", 1.0);
        // No wall time yet: no overhead to add, no estimate.
        assert_eq!(m.estimate(&names(&["t.py::one"])), None);
        m.ran_for(4.0);
        let secs = |n: &[&str]| m.estimate(&names(n)).map(|d| d.as_secs_f64());
        assert_eq!(secs(&["t.py::one"]), Some(1.0));
        assert_eq!(secs(&["t.py::one", "t.py::two"]), Some(4.0));
        assert_eq!(secs(&[]), Some(0.5));
        // A test the map never timed: it cannot say.
        assert_eq!(secs(&["t.py::three"]), None);
    }
}
