//! `--incremental`: the rows of the report in `--out` that still hold, so only the rest are
//! judged.
//!
//! A row holds when its mutant is unchanged (the same `spec::identity`: file, anchor,
//! replacement, expectation, suites and their commands) at the same position, the candidate is
//! the same, its verdict was a judgement, not an `error` (a suite that could not start proves
//! nothing about the next run), and what the verdict depended on is unchanged: the whole code
//! (the report's `code_tree`, the tree without the spec), or, when every suite of the mutant
//! declares its `inputs`, the files those match and the mutated file itself; and, whatever a
//! suite declares, the lockfiles and toolchain versions it depends on (`implicit`). A report
//! that cannot be read (none, another version) reuses nothing: every mutant is judged, as
//! without the flag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::implicit::{self, Reads};
use crate::record::{CandidateFacts, Reused, Row, RunReport};
use crate::spec::{Mutant, Spec};
use crate::verdict::Verdict;

/// The report in `out` an incremental run may reuse rows of, or why there is none.
pub(crate) fn prior(out: &Path) -> Result<RunReport, String> {
    match super::previous::read(out) {
        Ok(Some(report)) => Ok(report),
        Ok(None) => Err("no report in --out yet".to_string()),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// What the tree under review holds that a row's reuse depends on: the report's `inputs`,
/// `file_blobs` and `lockfiles`, and what each suite's `inputs` match.
#[derive(Debug, Default)]
pub(crate) struct TreeFacts {
    /// The files that name a toolchain (see [`implicit::is_manifest`]).
    pub manifests: Vec<String>,
    /// The digest of each suite's declared `inputs` (see [`TreeFacts::of`]).
    pub inputs: BTreeMap<String, String>,
    /// The files each suite's declared `inputs` match (suites without `inputs` have none).
    pub matched: BTreeMap<String, Vec<String>>,
    /// The blob id of each mutated file.
    pub file_blobs: BTreeMap<String, String>,
    /// The blob id of each lockfile (see [`implicit::is_lockfile`]).
    pub lockfiles: BTreeMap<String, String>,
}

impl TreeFacts {
    /// The facts of `files` (path and blob id of every file of the tree under review). A
    /// suite's `inputs` digest is the sha256 of its globs and each file they match, sorted.
    pub(crate) fn of(spec: &Spec, files: &[(String, String)]) -> TreeFacts {
        let mut facts = TreeFacts {
            manifests: files
                .iter()
                .filter(|(p, _)| implicit::is_manifest(p))
                .map(|(p, _)| p.clone())
                .collect(),
            lockfiles: implicit::lockfiles(files),
            ..TreeFacts::default()
        };
        for (name, suite) in &spec.suites {
            if suite.inputs.is_empty() {
                continue;
            }
            let mut set = globset::GlobSetBuilder::new();
            for pattern in &suite.inputs {
                // Each was checked to be a glob when the spec was read.
                if let Ok(glob) = globset::GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                {
                    set.add(glob);
                }
            }
            let Ok(set) = set.build() else { continue };
            let mut matched: Vec<&(String, String)> = files
                .iter()
                .filter(|(path, _)| set.is_match(path))
                .collect();
            matched.sort();
            let text = serde_json::json!({ "globs": suite.inputs, "files": matched }).to_string();
            facts.inputs.insert(
                name.clone(),
                manifests::Digest::of(text.as_bytes()).to_hex(),
            );
            facts.matched.insert(
                name.clone(),
                matched.iter().map(|(p, _)| p.clone()).collect(),
            );
        }
        let blobs: BTreeMap<&str, &str> = files
            .iter()
            .map(|(p, id)| (p.as_str(), id.as_str()))
            .collect();
        facts.file_blobs = spec
            .mutants
            .iter()
            .filter_map(|m| Some((m.file.clone(), blobs.get(m.file.as_str())?.to_string())))
            .collect();
        facts
    }

    /// Whether every suite of `m` declares its `inputs`.
    fn matched_all(&self, m: &Mutant) -> bool {
        m.suites().all(|s| self.matched.contains_key(s))
    }

    /// What of the tree `m` reads: its file, and what its suites' `inputs` match (`None`
    /// when one of them declares none: then it reads every file).
    fn reads<'a>(&'a self, m: &'a Mutant) -> Reads<'a> {
        let mut inputs = Vec::new();
        for suite in m.suites() {
            match self.matched.get(suite) {
                Some(files) => inputs.extend(files.iter().map(String::as_str)),
                None => {
                    return Reads {
                        file: &m.file,
                        inputs: None,
                    }
                }
            }
        }
        Reads {
            file: &m.file,
            inputs: Some(inputs),
        }
    }
}

/// Which files the tests that cover a mutant ran, and those tests' own files: the seam a
/// coverage map plugs into. A mutant whose suites declare no `inputs` is then held to these
/// files (and its own) instead of the whole code, when git still has the report's tree to
/// say which paths changed; `None` for a mutant the map does not know.
pub(crate) trait Covering {
    /// `by_covering_run`: the row's verdict came from its covering tests' own run (a kill
    /// there), which loaded only their test files; else the whole suite decided.
    fn files(&self, m: &Mutant, by_covering_run: bool) -> Option<Vec<String>>;
}

/// What this run judges that a row's reuse is compared with.
pub(crate) struct Now<'a> {
    pub code_tree: &'a str,
    pub candidate: Option<&'a CandidateFacts>,
    pub facts: &'a TreeFacts,
    /// The version of each toolchain the spec's suites use (see [`implicit::versions`]).
    pub toolchains: &'a BTreeMap<String, String>,
    /// The paths that differ between the report's tree and this one, when git still has the
    /// report's tree: to say why a row is judged again, and what a coverage map is held to.
    pub changed: Option<&'a [String]>,
    /// The coverage map, when the run has one (see [`Covering`]).
    pub coverage: Option<&'a dyn Covering>,
}

/// Why a mutant's row in the report does not hold for this run: it is judged again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stale {
    /// The report has no row for it (a new mutant, or one a cut-short run never judged).
    New,
    /// Its identity changed: file, anchor, replacement, expectation or a suite.
    Changed,
    /// It moved in the spec (from this position, from 0).
    Moved { from: usize },
    /// Its verdict was an `error`, which proves nothing.
    Error,
    /// The candidate (its patch or manifest) changed.
    Candidate,
    /// A toolchain it runs on answers another version (`None`: not asked then, or now).
    Toolchain {
        tool: String,
        was: Option<String>,
        now: Option<String>,
    },
    /// The code changed and one of its suites declares no `inputs`: these paths, when known.
    Code { changed: Option<Vec<String>> },
    /// The mutated file changed.
    File { file: String },
    /// The files a suite's `inputs` match changed: these, when known.
    Inputs {
        suite: String,
        changed: Option<Vec<String>>,
    },
    /// A lockfile that concerns it changed, appeared or went away.
    Lockfile { path: String },
    /// A file its tests read changed: one its covering tests ran, their own files (every test
    /// file, for a verdict of the whole suite), or the mutated file.
    Covered { changed: Vec<String> },
}

/// For each of `selected` (spec indices, in order), why its row in `prior` does not hold for
/// this run, or `None` when it does.
pub(crate) fn staleness(
    prior: &RunReport,
    spec: &Spec,
    selected: &[usize],
    now: &Now,
) -> Vec<(usize, Option<Stale>)> {
    selected
        .iter()
        .map(|&i| (i, stale(prior, spec, &spec.mutants[i], now)))
        .collect()
}

/// Why `m`'s row in `prior` does not hold now, checked from what the mutant is to what it
/// reads; `None` when it holds.
fn stale(prior: &RunReport, spec: &Spec, m: &Mutant, now: &Now) -> Option<Stale> {
    let Some(row) = prior.mutants.iter().find(|r| r.name == m.name) else {
        return Some(Stale::New);
    };
    if row.identity != crate::spec::identity::of(spec, m) {
        return Some(Stale::Changed);
    }
    if row.index != m.index {
        return Some(Stale::Moved { from: row.index });
    }
    if row.verdict == Verdict::Error {
        return Some(Stale::Error);
    }
    let same_candidate = match (&prior.candidate, now.candidate) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.patch_sha256 == b.patch_sha256 && a.manifest_sha256 == b.manifest_sha256
        }
        _ => false,
    };
    if !same_candidate {
        return Some(Stale::Candidate);
    }
    let facts = now.facts;
    // A kill by the covering tests' own run (no comparison suite beside it) read only what
    // that run loaded; any other verdict is the whole suite's.
    let by_covering_run = row.also.is_empty()
        && row
            .run
            .as_ref()
            .and_then(|r| r.selection.as_ref())
            .is_some_and(|s| !s.whole);
    let covered = match (facts.matched_all(m), now.coverage, now.changed) {
        (false, Some(map), Some(_)) => map.files(m, by_covering_run),
        _ => None,
    };
    let reads = match &covered {
        Some(files) => Reads {
            file: &m.file,
            inputs: Some(files.iter().map(String::as_str).collect()),
        },
        None => facts.reads(m),
    };
    // The toolchain is not in the tree: compared even when the code is the same.
    let paths: Vec<&str> = facts.manifests.iter().map(String::as_str).collect();
    for tool in implicit::toolchains_of(spec, m, &reads, &paths) {
        let (was, is) = (prior.toolchains.get(tool), now.toolchains.get(tool));
        if was.is_none() || was != is {
            return Some(Stale::Toolchain {
                tool: tool.to_string(),
                was: was.cloned(),
                now: is.cloned(),
            });
        }
    }
    if prior.code_tree == now.code_tree {
        return None;
    }
    let changed = |files: Option<&Vec<String>>| {
        now.changed.map(|all| {
            all.iter()
                .filter(|p| files.is_none_or(|f| f.contains(p)))
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    // Held to what its covering tests ran: a changed path among those files, or its own.
    if let (Some(files), Some(all)) = (&covered, now.changed) {
        let hit: Vec<String> = all
            .iter()
            .filter(|p| **p == m.file || files.contains(p))
            .cloned()
            .collect();
        if !hit.is_empty() {
            return Some(Stale::Covered { changed: hit });
        }
    }
    // With other code, a verdict holds only when each of its suites says what it reads, that
    // is unchanged, and so are the mutated file and the lockfiles that concern it.
    if reads.inputs.is_none() {
        return Some(Stale::Code {
            changed: changed(None),
        });
    }
    let same = |a: Option<&String>, b: Option<&String>| a.is_some() && a == b;
    if covered.is_none() && !same(prior.file_blobs.get(&m.file), facts.file_blobs.get(&m.file)) {
        return Some(Stale::File {
            file: m.file.clone(),
        });
    }
    for suite in m.suites().filter(|_| covered.is_none()) {
        if !same(prior.inputs.get(suite), facts.inputs.get(suite)) {
            let mine = facts.matched.get(suite);
            return Some(Stale::Inputs {
                suite: suite.to_string(),
                // Files that left the match are not in this tree's list: named by the diff.
                changed: changed(None).map(|all| {
                    let within: Vec<String> = all
                        .iter()
                        .filter(|p| mine.is_some_and(|f| f.contains(p)))
                        .cloned()
                        .collect();
                    if within.is_empty() {
                        all
                    } else {
                        within
                    }
                }),
            });
        }
    }
    let lockfiles = prior.lockfiles.keys().chain(facts.lockfiles.keys());
    for path in lockfiles.filter(|p| reads.concerned_by(p)) {
        if prior.lockfiles.get(path) != facts.lockfiles.get(path) {
            return Some(Stale::Lockfile { path: path.clone() });
        }
    }
    None
}

/// What a dry incremental run found: the report it compared with, and each mutant whose row
/// does not hold, with why.
#[derive(Debug)]
pub(crate) struct Dry {
    /// `--out`, as given.
    pub out: PathBuf,
    /// The report's tree and when it started.
    pub report: (String, report::Timestamp),
    /// How many mutants were compared.
    pub compared: usize,
    /// Each mutant an incremental run would judge: its name and why.
    pub stale: Vec<(String, Stale)>,
    /// Rows of the report whose mutants the spec no longer has.
    pub gone: Vec<String>,
}

impl Dry {
    /// Whether the report's verdicts are all current.
    pub(crate) fn current(&self) -> bool {
        self.stale.is_empty() && self.gone.is_empty()
    }
}

/// The rows of `prior` whose mutants the spec no longer has: a table refreshed now drops them.
pub(crate) fn gone<'a>(prior: &'a RunReport, spec: &Spec) -> Vec<&'a str> {
    prior
        .mutants
        .iter()
        .map(|r| r.name.as_str())
        .filter(|name| !spec.mutants.iter().any(|m| m.name == *name))
        .collect()
}

/// `prior`'s rows for `reused` (spec indices), each marked with the tree and time it was
/// really judged: a row reused before keeps what it says; otherwise the report's tree and its
/// suite run's start (a skipped row, which ran nothing, the report's start).
pub(crate) fn kept_rows(prior: RunReport, spec: &Spec, reused: &[usize]) -> Vec<Row> {
    let names: Vec<&str> = reused
        .iter()
        .map(|&i| spec.mutants[i].name.as_str())
        .collect();
    let (tree, start) = (prior.tree, prior.start);
    prior
        .mutants
        .into_iter()
        .filter(|r| names.contains(&r.name.as_str()))
        .map(|mut r| {
            let judged = r.run.as_ref().map(|run| run.start).or(r.rerun);
            let at = r.reused.as_ref().map_or(judged.unwrap_or(start), |u| u.at);
            let from = r.reused.as_ref().map_or(tree.clone(), |u| u.tree.clone());
            r.reused = Some(Reused { tree: from, at });
            r.rerun = None;
            r
        })
        .collect()
}

/// The tree's facts ([`TreeFacts`]) from the checkout `co`, and the version of each
/// toolchain the spec's suites may run on, asked in it ([`implicit::versions`]).
pub(crate) fn tree_facts(
    spec: &Spec,
    co: &crate::checkout::Checkout,
) -> anyhow::Result<(TreeFacts, BTreeMap<String, String>)> {
    use anyhow::Context;
    let files = co
        .files()
        .context("listing the tree's files (git ls-tree)")?;
    let facts = TreeFacts::of(spec, &files);
    let paths: Vec<&str> = facts.manifests.iter().map(String::as_str).collect();
    let tools = implicit::toolchains_used(spec, &paths);
    let toolchains = match tools.is_empty() {
        true => BTreeMap::new(),
        false => {
            let logs = runner::scratch::ScratchDir::new("versions")
                .context("making a folder for the toolchains' answers")?;
            implicit::versions(&tools, co.path(), logs.path())
        }
    };
    Ok((facts, toolchains))
}

/// The paths that differ between `tree` (a report's) and the tree in `co`, the spec left
/// out; `None` when git no longer has `tree` (it held uncommitted changes, or was never
/// fetched here). Only for saying why a mutant is judged again.
pub(crate) fn changed_since(
    co: &crate::checkout::Checkout,
    tree: &str,
    repo: &Path,
    spec: &Spec,
) -> Option<Vec<String>> {
    let git = candidate::git::Git::at(co.path());
    let out = git
        .bytes([
            "diff-tree",
            "-r",
            "-z",
            "--name-only",
            "--no-renames",
            "--end-of-options",
            tree,
            co.tree(),
        ])
        .ok()?;
    let spec_path = super::previous::spec_in_tree(repo, &spec.file);
    Some(
        out.split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| Some(p) != spec_path.as_ref())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../../tests/data/shard-report.json");

    /// `prior`'s one mutant, judged on `files`; `inputs` declared for its suite or not.
    fn spec(inputs: bool) -> Spec {
        let inputs = match inputs {
            true => "inputs = [\"lib.sh\", \"test.sh\"]\n",
            false => "",
        };
        Spec::parse(
            &format!("[suites.unit]\nrun = \"sh test.sh\"\n{inputs}\n[[mutant]]\nname = \"plus to minus\"\nfile = \"lib.sh\"\nanchor = \"$1 + $2\"\nreplace = \"$1 - $2\"\nsuite = \"unit\"\n"),
            Path::new("mutants.toml"),
        )
        .unwrap()
    }

    fn files(readme: &str) -> Vec<(String, String)> {
        [
            ("Cargo.lock", "c0"),
            ("README.md", readme),
            ("lib.sh", "l0"),
            ("test.sh", "t0"),
        ]
        .map(|(p, b)| (p.to_string(), b.to_string()))
        .to_vec()
    }

    /// The sample report, its row made `spec`'s mutant judged on `files("r0")`.
    fn prior(spec: &Spec) -> RunReport {
        let mut prior = crate::merge::shard::parse(SAMPLE.as_bytes()).unwrap();
        prior.mutants[0].identity = crate::spec::identity::of(spec, &spec.mutants[0]);
        let facts = TreeFacts::of(spec, &files("r0"));
        prior.inputs = facts.inputs;
        prior.file_blobs = facts.file_blobs;
        prior.lockfiles = facts.lockfiles;
        prior
    }

    struct Map(Vec<String>);
    impl Covering for Map {
        fn files(&self, _: &Mutant, _: bool) -> Option<Vec<String>> {
            Some(self.0.clone())
        }
    }

    fn stale_now(
        spec: &Spec,
        prior: &RunReport,
        code_tree: &str,
        readme: &str,
        changed: Option<&[String]>,
        coverage: Option<&dyn Covering>,
    ) -> Option<Stale> {
        let facts = TreeFacts::of(spec, &files(readme));
        let now = Now {
            code_tree,
            candidate: None,
            facts: &facts,
            toolchains: &BTreeMap::new(),
            changed,
            coverage,
        };
        stale(prior, spec, &spec.mutants[0], &now)
    }

    #[test]
    fn a_row_holds_on_the_same_code_and_otherwise_only_on_what_it_reads() {
        for declared in [false, true] {
            let s = spec(declared);
            let p = prior(&s);
            let same = p.code_tree.clone();
            assert_eq!(stale_now(&s, &p, &same, "r0", None, None), None);
            let other = stale_now(&s, &p, "0123abcd", "r1", None, None);
            match declared {
                false => assert_eq!(other, Some(Stale::Code { changed: None })),
                true => assert_eq!(other, None, "the README is no input"),
            }
        }
    }

    #[test]
    fn a_coverage_map_holds_a_mutant_to_what_its_tests_ran() {
        let s = spec(false);
        let p = prior(&s);
        let map = Map(vec!["test.sh".into()]);
        let readme = ["README.md".to_string()];
        let test = ["test.sh".to_string()];
        // Only the README changed: the covering test did not run it.
        let held = stale_now(&s, &p, "0123abcd", "r1", Some(&readme), Some(&map));
        assert_eq!(held, None);
        let hit = stale_now(&s, &p, "0123abcd", "r1", Some(&test), Some(&map));
        assert_eq!(
            hit,
            Some(Stale::Covered {
                changed: test.to_vec()
            })
        );
        // Without the diff (the report's tree is gone) the map cannot be trusted: the code.
        let unknown = stale_now(&s, &p, "0123abcd", "r1", None, Some(&map));
        assert_eq!(unknown, Some(Stale::Code { changed: None }));
    }
}
