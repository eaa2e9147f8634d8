//! What `--incremental` compares whether or not a suite declares `inputs`: the lockfiles in the
//! tree and the versions of the toolchains that run the suites.
//!
//! Declared `inputs` say which of the tree's files a suite reads; they cannot say which
//! packages its install resolved or which interpreter runs it. A lockfile pins the first, so
//! each one is an input of every mutant it concerns (below); the second is asked of the
//! toolchain itself, once per run, so a new `node`, `python3`, `rustc` or `go` judges again
//! every mutant it runs.
//!
//! A file in folder `D` (a lockfile, or a manifest that names a toolchain) concerns a mutant
//! when `D` holds the mutated file or a file one of its suites' `inputs` match: a lockfile at
//! the root concerns every mutant, `docs/requirements.txt` only the mutants whose suites read
//! `docs/`. Without declared `inputs` every file of the tree concerns the mutant (its verdict
//! is then held to the whole code, which holds every lockfile too).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use crate::spec::{Mutant, Spec, Suite};

/// The lockfiles `--incremental` compares, by name (`*` stands for any text): the one list.
const LOCKFILES: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "deno.lock",
    "Cargo.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "Pipfile.lock",
    "requirements*.txt",
    "constraints*.txt",
    "go.sum",
    "go.work.sum",
    "Gemfile.lock",
    "composer.lock",
];

/// Whether `path` (a tree's file) is a lockfile, by its name.
pub(crate) fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    LOCKFILES
        .iter()
        .any(|pattern| match pattern.split_once('*') {
            Some((head, tail)) => {
                name.len() >= head.len() + tail.len()
                    && name.starts_with(head)
                    && name.ends_with(tail)
            }
            None => name == *pattern,
        })
}

/// The blob id of every lockfile among `files` (the tree's paths and blob ids), by path.
pub(crate) fn lockfiles(files: &[(String, String)]) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(path, _)| is_lockfile(path))
        .cloned()
        .collect()
}

/// A toolchain whose version can change a verdict: how to ask it, and what says a suite uses it.
struct Toolchain {
    /// The name it is recorded under in `mutants.json`'s `toolchains`.
    name: &'static str,
    /// The command that prints its version (run directly, never through a shell).
    ask: &'static [&'static str],
    /// Files that name it, by name (`*` for any text): a suite that reads their folder uses it.
    manifests: &'static [&'static str],
    /// Programs that run on it, as a suite's command names them (a path's last part, version
    /// digits dropped: `./node_modules/.bin/vitest`, `python3.11`).
    words: &'static [&'static str],
}

/// Prints the installed pytest's version without importing it (importing would read the
/// tree's conftest files) and without the checkout's own folder on the path.
const PYTEST_VERSION: &str = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; from importlib.metadata import version; print('pytest ' + version('pytest'))";

const TOOLCHAINS: &[Toolchain] = &[
    Toolchain {
        name: "node",
        ask: &["node", "--version"],
        manifests: &["package.json", ".nvmrc", ".node-version"],
        words: &[
            "node", "npm", "npx", "pnpm", "yarn", "vitest", "jest", "mocha", "tape", "tsx",
        ],
    },
    Toolchain {
        name: "python3",
        ask: &["python3", "--version"],
        manifests: &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "Pipfile",
            "requirements*.txt",
            "tox.ini",
            "pytest.ini",
            "conftest.py",
            ".python-version",
        ],
        words: &[
            "python", "pytest", "tox", "nox", "uv", "poetry", "pipenv", "hatch",
        ],
    },
    Toolchain {
        name: "pytest",
        ask: &["python3", "-c", PYTEST_VERSION],
        manifests: &["pytest.ini", "conftest.py"],
        words: &["pytest"],
    },
    Toolchain {
        name: "rustc",
        ask: &["rustc", "--version"],
        manifests: &["Cargo.toml", "rust-toolchain", "rust-toolchain.toml"],
        words: &["cargo", "rustc", "cargo-nextest"],
    },
    Toolchain {
        name: "cargo",
        ask: &["cargo", "--version"],
        manifests: &["Cargo.toml"],
        words: &["cargo"],
    },
    Toolchain {
        name: "go",
        ask: &["go", "version"],
        manifests: &["go.mod", "go.work"],
        words: &["go", "gotestsum"],
    },
    Toolchain {
        name: "deno",
        ask: &["deno", "--version"],
        manifests: &["deno.json", "deno.jsonc"],
        words: &["deno"],
    },
    Toolchain {
        name: "bun",
        ask: &["bun", "--version"],
        manifests: &["bun.lockb", "bun.lock", "bunfig.toml"],
        words: &["bun", "bunx"],
    },
    Toolchain {
        name: "ruby",
        ask: &["ruby", "--version"],
        manifests: &["Gemfile", ".ruby-version"],
        words: &["ruby", "bundle", "rspec", "rake"],
    },
];

/// Whether `path` (a tree's file) names a toolchain, by its name.
pub(crate) fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    TOOLCHAINS
        .iter()
        .any(|t| t.manifests.iter().any(|pat| name_matches(name, pat)))
}

fn name_matches(name: &str, pattern: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => name == pattern,
    }
}

/// The programs a suite's commands (build, run) name: each word's last path part, its
/// version digits dropped.
fn programs(suite: &Suite) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let commands = [suite.run(), suite.build.as_deref()];
    for command in commands.into_iter().flatten() {
        let words = command.split(|c: char| c.is_whitespace() || ";&|()`'\"=".contains(c));
        for word in words.filter(|w| !w.is_empty()) {
            let last = word.rsplit('/').next().unwrap_or(word);
            let bare = last.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
            out.insert(bare.to_string());
        }
    }
    out
}

/// The folder of a tree path (`""` at the root).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Whether folder `dir` holds `path`.
fn holds(dir: &str, path: &str) -> bool {
    dir.is_empty() || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// What of the tree a mutant reads, for deciding which lockfiles and manifests concern it.
pub(crate) struct Reads<'a> {
    /// The mutated file.
    pub file: &'a str,
    /// The files its suites' `inputs` match; `None` when a suite declares none (it reads all).
    pub inputs: Option<Vec<&'a str>>,
}

impl Reads<'_> {
    /// Whether a file at `path` concerns the mutant (see the module's comment).
    pub(crate) fn concerned_by(&self, path: &str) -> bool {
        let dir = folder(path);
        match &self.inputs {
            None => true,
            Some(inputs) => holds(dir, self.file) || inputs.iter().any(|p| holds(dir, p)),
        }
    }
}

/// The toolchains whose version a mutant's verdict depends on: those its suites' commands name
/// and those a manifest that concerns it names, given the tree's manifests (or all its paths).
pub(crate) fn toolchains_of(
    spec: &Spec,
    m: &Mutant,
    reads: &Reads,
    paths: &[&str],
) -> BTreeSet<&'static str> {
    let named: BTreeSet<String> = m
        .suites()
        .filter_map(|s| spec.suites.get(s))
        .flat_map(programs)
        .collect();
    TOOLCHAINS
        .iter()
        .filter(|t| {
            t.words.iter().any(|w| named.contains(*w))
                || paths.iter().any(|p| {
                    let name = p.rsplit('/').next().unwrap_or(p);
                    t.manifests.iter().any(|pat| name_matches(name, pat)) && reads.concerned_by(p)
                })
        })
        .map(|t| t.name)
        .collect()
}

/// The toolchains any mutant of `spec` may use: every one its suites name or a manifest in the
/// tree names.
pub(crate) fn toolchains_used(spec: &Spec, paths: &[&str]) -> BTreeSet<&'static str> {
    let named: BTreeSet<String> = spec.suites.values().flat_map(programs).collect();
    TOOLCHAINS
        .iter()
        .filter(|t| {
            t.words.iter().any(|w| named.contains(*w))
                || paths.iter().any(|p| {
                    let name = p.rsplit('/').next().unwrap_or(p);
                    t.manifests.iter().any(|pat| name_matches(name, pat))
                })
        })
        .map(|t| t.name)
        .collect()
}

/// How long a toolchain may take to say its version (a version manager may first install it).
const ASK_TIMEOUT: Duration = Duration::from_secs(120);

/// Each of `tools`' version, asked once in `dir` (the checkout: a `rust-toolchain.toml`, a
/// `go.mod` toolchain line or a version manager's file there applies, as it does to the
/// suites) with the run's environment: its first line of output, `not found` when it cannot
/// start, or `failed (STATUS): LINE`. `logs` is a scratch folder for the answers.
pub(crate) fn versions(
    tools: &BTreeSet<&'static str>,
    dir: &Path,
    logs: &Path,
) -> BTreeMap<String, String> {
    TOOLCHAINS
        .iter()
        .filter(|t| tools.contains(t.name))
        .map(|t| (t.name.to_string(), ask(t, dir, logs)))
        .collect()
}

fn ask(t: &Toolchain, dir: &Path, logs: &Path) -> String {
    let log = logs.join(format!("version-{}.log", t.name));
    let argv = t.ask.iter().map(|s| s.to_string()).collect();
    let job = runner::Job::new(runner::Program::Argv(argv), dir, &log)
        .timeout(ASK_TIMEOUT)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let finished = match runner::run(&job) {
        Ok(f) => f,
        Err(e) => return format!("not asked ({e})"),
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let first: String = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    match &finished.ended {
        runner::Ended::CouldNotStart { .. } => "not found".to_string(),
        runner::Ended::Exited(s) if s.exit_code == Some(0) => first,
        // 127 from a version manager's shim: the tool it names is not installed.
        runner::Ended::Exited(s) if s.exit_code == Some(127) => "not found".to_string(),
        other if other.is_hang() => format!("failed (no answer in {}s)", ASK_TIMEOUT.as_secs()),
        other => match (other.exit_code(), other.signal()) {
            (Some(code), _) => format!("failed (exit {code}): {first}"),
            (None, Some(signal)) => format!("failed ({signal}): {first}"),
            (None, None) => format!("failed: {first}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockfiles_are_known_by_name_anywhere_in_the_tree() {
        for path in [
            "Cargo.lock",
            "web/package-lock.json",
            "requirements.txt",
            "py/requirements-dev.txt",
            "go.sum",
            "a/b/pnpm-lock.yaml",
        ] {
            assert!(is_lockfile(path), "{path}");
        }
        for path in ["Cargo.toml", "src/lock.rs", "requirements.md", "xgo.sum"] {
            assert!(!is_lockfile(path), "{path}");
        }
    }

    #[test]
    fn a_file_concerns_the_mutants_that_read_its_folder() {
        let reads = Reads {
            file: "web/src/a.js",
            inputs: Some(vec!["web/src/a.js", "web/test/a.test.js"]),
        };
        assert!(reads.concerned_by("package-lock.json"));
        assert!(reads.concerned_by("web/package-lock.json"));
        assert!(!reads.concerned_by("docs/requirements.txt"));
        assert!(!reads.concerned_by("webby/package-lock.json"));
        let all = Reads {
            file: "x",
            inputs: None,
        };
        assert!(all.concerned_by("docs/requirements.txt"));
    }

    #[test]
    fn a_suite_uses_the_toolchains_its_commands_name() {
        let spec = Spec::parse(
            "[suites.s]\nrun = \"cd web && ./node_modules/.bin/vitest run; python3.11 -m pytest\"\n\n[[mutant]]\nname = \"m\"\nfile = \"f\"\nanchor = \"a\"\nreplace = \"b\"\nsuite = \"s\"\n",
            Path::new("mutants.toml"),
        )
        .unwrap();
        let reads = Reads {
            file: "f",
            inputs: Some(vec!["f"]),
        };
        let tools = toolchains_of(&spec, &spec.mutants[0], &reads, &["f", "sub/Cargo.toml"]);
        assert_eq!(
            tools.into_iter().collect::<Vec<_>>(),
            ["node", "pytest", "python3"]
        );
        let tools = toolchains_of(&spec, &spec.mutants[0], &reads, &["Cargo.toml"]);
        assert!(tools.contains("rustc"), "a manifest at the root names it");
    }
}
