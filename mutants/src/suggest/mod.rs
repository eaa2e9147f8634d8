//! `mutants suggest`: exact-anchor mutants proposed for the lines a change touches, as an
//! ordinary spec whose claims the reviewer names.
//!
//! The pieces: [`changes`] finds the files and lines (a candidate, a diff, whole files) and
//! reads the bytes the mutants will be swapped in; the `syntax` crate proposes, per file, and
//! does every per-file check (test code, generated, size, parse); [`suites`] picks the suite
//! every proposal names; [`output`] writes the spec (TOML through the `toml` crate, read back
//! before it is shown) and the JSON for tools; `run --suggested` runs the spec as any other,
//! each mutant carrying its hunk for the findings (`render::findings`). A proposal is an ordinary `[[mutant]]` (`operator` says it was
//! generated, `undoes` says `TODO:` until a claim is named), so everything else in the toolkit
//! applies to it unchanged.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Result;

use candidate::config::{Config, Overrides};
use candidate::git::Git;
use syntax::{Language, Operator, Options, Outcome, Proposal};

pub(crate) mod changes;
pub(crate) mod output;
pub(crate) mod suites;

use changes::Changed;
use suites::Chosen;

/// How many lines either side of a finding's line its hunk shows, at most.
pub(crate) const HUNK_RADIUS: usize = 3;

/// The spec `run --suggested` writes in its `--out`, so `mutants run OUT/suggested.toml` can
/// make the report again.
pub(crate) const SPEC_FILE: &str = "suggested.toml";

/// The claim every proposal starts with, for the reviewer to replace.
pub(crate) const UNDOES: &str = "TODO: the claim this mutant undoes";

/// Where the changed lines come from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A candidate (gate.toml, with the command line's base/patch/manifest in place of its own).
    Candidate {
        config: PathBuf,
        overrides: Overrides,
    },
    /// The changes from a revision to DIR as `run` reads it.
    Diff { rev: String },
    /// Whole files of DIR (none named: every tracked source file).
    Whole { paths: Vec<PathBuf> },
}

/// What to propose for, as typed settings.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub source: Source,
    /// The repository (`--dir`); `None` is the current directory.
    pub dir: Option<PathBuf>,
    pub suite: Option<String>,
    pub all: bool,
}

/// One entry of the spec: a proposal, or a file's control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub site: Option<String>,
    pub file: String,
    pub line: usize,
    pub anchor: String,
    pub replace: String,
    pub operator: Operator,
    pub description: String,
    pub control: bool,
    /// The change around its line, as a reviewer reads it (unified diff text).
    pub hunk: Option<String>,
}

/// What happened to one file of the change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileOutcome {
    pub file: String,
    pub language: Option<Language>,
    /// Mutants proposed (its control not counted).
    pub proposed: usize,
    /// Proposals dropped: the file no longer parsed after the swap.
    pub dropped: usize,
    /// Why the file got no proposals at all.
    pub skipped: Option<String>,
}

/// Everything `suggest` found, before it is written.
#[derive(Clone, Debug)]
pub(crate) struct Suggestion {
    pub entries: Vec<Entry>,
    pub files: Vec<FileOutcome>,
    pub suite: Chosen,
    /// Inputs no output may land on (gate.toml, its patch and manifest).
    pub inputs: Vec<(String, PathBuf)>,
    /// What the proposals were made for, for the spec's opening comment.
    pub about: String,
    /// The repository proposed in (its `.git` is no place for an output).
    pub repo: Git,
    /// A candidate whose manifest does not hold: its summary, for the command to say.
    pub not_holding: Option<manifests::Summary>,
}

impl Suggestion {
    /// How many entries are controls.
    pub fn controls(&self) -> usize {
        self.entries.iter().filter(|e| e.control).count()
    }

    /// How many entries are mutants (controls aside).
    pub fn mutants(&self) -> usize {
        self.entries.len() - self.controls()
    }

    /// The files that got no proposal at all, each with its reason.
    pub fn skipped(&self) -> impl Iterator<Item = &FileOutcome> {
        self.files.iter().filter(|f| f.skipped.is_some())
    }
}

/// Proposes for `request`: the suite chosen first (several and no `--suite` is bad input
/// before any git work), then the changed files read and each handed to the `syntax` crate.
pub(crate) fn suggest(request: &Request) -> Result<Suggestion> {
    let repo = crate::checkout::open_repo(request.dir.clone())?;
    let mut inputs = Vec::new();
    let mut not_holding = None;
    let (changed, found, about) = match &request.source {
        Source::Candidate { config, overrides } => {
            let config = Config::load_with(config, overrides)?;
            inputs.push(("gate.toml".to_string(), config.file.clone()));
            inputs.push(("patch".to_string(), config.patch.clone()));
            inputs.push(("manifest".to_string(), config.manifest.clone()));
            let found = suites::of_config(&config);
            let found = if found.suites.is_empty() && found.left_out.is_empty() {
                suites::of_repo(repo.dir())?
            } else {
                found
            };
            // The suite is known good before the checkout is built.
            let chosen = suites::choose(found, request.suite.as_deref())?;
            let about = format!("the candidate {}", config.file.display());
            let (changed, summary) = changes::from_candidate(&repo, &config)?;
            not_holding = summary;
            (changed, chosen, about)
        }
        Source::Diff { rev } => {
            let chosen = suites::choose(suites::of_repo(repo.dir())?, request.suite.as_deref())?;
            let about = format!("the changes from {rev} to {}", repo.dir().display());
            (changes::from_diff(&repo, rev)?, chosen, about)
        }
        Source::Whole { paths } => {
            let chosen = suites::choose(suites::of_repo(repo.dir())?, request.suite.as_deref())?;
            let dir = request.dir.clone().unwrap_or_else(|| PathBuf::from("."));
            let about = format!("whole files of {}", repo.dir().display());
            (changes::whole(&repo, &dir, paths)?, chosen, about)
        }
    };
    if let Some(file) = &found.file {
        inputs.push(("suites".to_string(), file.clone()));
    }
    let options = Options { all: request.all };
    let outcomes: Vec<(Changed, Option<Outcome>)> = changed
        .into_iter()
        .map(|c| {
            let outcome = c
                .content
                .as_ref()
                .ok()
                .map(|bytes| syntax::propose(&c.path, bytes, &c.scope, &options));
            (c, outcome)
        })
        .collect();
    let (entries, files) = assemble(outcomes);
    Ok(Suggestion {
        entries,
        files,
        suite: found,
        inputs,
        about,
        repo,
        not_holding,
    })
}

/// The spec's entries and each file's outcome, from what the `syntax` crate proposed for each
/// file: names made unique, every anchor checked once more to occur exactly once in the bytes
/// it was proposed for (one that does not is dropped and counted), a file's control only
/// beside mutants of its own. A file whose content was not read (`None`) is skipped with the
/// reason it was not.
pub(crate) fn assemble(
    outcomes: Vec<(Changed, Option<Outcome>)>,
) -> (Vec<Entry>, Vec<FileOutcome>) {
    let mut entries = Vec::new();
    let mut files = Vec::new();
    let mut names = BTreeSet::new();
    for (changed, outcome) in outcomes {
        let language = syntax::Language::of_path(&changed.path);
        let skipped = |why: String| FileOutcome {
            file: changed.path.clone(),
            language,
            proposed: 0,
            dropped: 0,
            skipped: Some(why),
        };
        let (proposals, bytes) = match (outcome, &changed.content) {
            (Some(Outcome::Proposed(p)), Ok(bytes)) => (p, bytes),
            (Some(Outcome::Skipped(skip)), _) => {
                files.push(skipped(skip.to_string()));
                continue;
            }
            // The content was never read (binary, a link, linguist-generated): why not.
            (_, Err(why)) => {
                files.push(skipped(why.clone()));
                continue;
            }
            (None, Ok(_)) => {
                files.push(skipped("not read".into()));
                continue;
            }
        };
        let mut dropped = proposals.dropped;
        let mut made = Vec::new();
        let once = |anchor: &str| {
            matches!(
                crate::anchor::find_anchor(bytes, anchor.as_bytes()),
                crate::anchor::Found::Once(_)
            )
        };
        for p in proposals.mutants {
            if !once(&p.anchor) || p.anchor == p.replace {
                dropped += 1;
                continue;
            }
            made.push(entry(&changed, p, false, &mut names));
        }
        let proposed = made.len();
        if proposed > 0 {
            if let Some(c) = proposals
                .control
                .filter(|c| once(&c.anchor) && c.anchor != c.replace)
            {
                made.push(entry(&changed, c, true, &mut names));
            }
        }
        entries.extend(made);
        files.push(FileOutcome {
            file: changed.path.clone(),
            language: Some(proposals.language),
            proposed,
            dropped,
            skipped: None,
        });
    }
    (entries, files)
}

/// One proposal as an entry: `src/lib.rs:42: replace < with <=`, made unique with `#2`, `#3`.
fn entry(changed: &Changed, p: Proposal, control: bool, names: &mut BTreeSet<String>) -> Entry {
    let what = if control {
        format!("control: {}", p.description)
    } else {
        p.description.clone()
    };
    // One line, as the spec reader keeps it (it trims a name), and short enough for a table.
    let line = format!("{}:{}: {what}", changed.path, p.line);
    let base = report::text::clip(&files::escape::text(&line), 160)
        .trim()
        .to_string();
    let mut name = base.clone();
    let mut n = 1;
    while names.contains(&name) {
        n += 1;
        name = format!("{base} #{n}");
    }
    names.insert(name.clone());
    Entry {
        name,
        site: p.site,
        file: changed.path.clone(),
        line: p.line,
        hunk: changed.hunk(p.line, HUNK_RADIUS).map(|h| h.text()),
        anchor: p.anchor,
        replace: p.replace,
        operator: p.operator,
        description: p.description,
        control,
    }
}

#[cfg(test)]
mod tests;
