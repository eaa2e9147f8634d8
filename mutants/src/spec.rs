//! `mutants.toml`: the suites and the hand-written mutants, validated before anything runs.
//!
//! Every problem is one line, `mutants.toml:LINE: what is wrong`, and exit 2, before a checkout
//! exists: a typo in a key or a suite name must not surface after the baseline has run for ten
//! minutes. The one thing a newcomer must know: `file` is relative to the repository root (the
//! checkout's root at run time), never to the spec's folder, and it may not leave the tree.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// A problem located in the file (`FILE:LINE: what is wrong`): the one type all gatekit's
/// config files report with.
pub(crate) type SpecError = files::located::Located;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    suites: BTreeMap<String, Spanned<candidate::suite::RawSuite>>,
    #[serde(default)]
    mutant: Vec<Spanned<RawMutant>>,
    worktree: Option<candidate::setup::RawWorktree>,
    canary: Option<candidate::canary::RawCanary>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMutant {
    name: Spanned<String>,
    site: Option<String>,
    file: Spanned<String>,
    anchor: Spanned<String>,
    replace: Spanned<String>,
    undoes: Option<String>,
    suite: Spanned<String>,
    #[serde(default)]
    also: Vec<Spanned<String>>,
    expect: Option<Spanned<String>>,
    operator: Option<Spanned<String>>,
}

/// A suite: gate.toml's and mutants.toml's one type. Every suite of a spec is a `run` suite
/// (a `glob` is refused at its line), run with `sh -c` in the checkout's root; its `build`
/// runs first, for the baseline and every mutant: a mutant whose build fails is an `error`
/// (it proves nothing), never a kill, so a replacement that does not compile never looks killed.
pub(crate) use candidate::suite::Suite;

/// What the suite is expected to do with a mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A real mutant: the suite must fail.
    Kill,
    /// A control: a no-op edit the suite must NOT notice.
    Survive,
}

/// One hand-written mutant: swap `anchor` for `replace` in `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mutant {
    /// Position in the spec, from 0; the order every report keeps.
    pub index: usize,
    pub name: String,
    pub site: Option<String>,
    /// Relative to the repository root, with `/` separators.
    pub file: String,
    pub anchor: String,
    pub replace: String,
    /// The claim the mutant undoes.
    pub undoes: Option<String>,
    pub suite: String,
    /// Comparison suites, run for the table only.
    pub also: Vec<String>,
    pub expect: Expect,
    /// The spec line of its `[[mutant]]` header, for messages.
    pub line: usize,
    /// The operator that generated it (`operator = "boundary"`, checked against
    /// `syntax::Operator`'s names); `None` for a hand-written mutant. A generated mutant
    /// whose build fails is `unviable`, not `error`.
    pub operator: Option<String>,
    /// Text a front end shows beside the mutant's findings (`run --suggested` sets the diff
    /// hunk of the changed lines it came from); never read from a spec. It reaches the row
    /// ([`crate::record::Row::context`]), mutants.json, the Markdown table and SARIF's message.
    pub context: Option<String>,
}

impl Mutant {
    pub fn is_control(&self) -> bool {
        self.expect == Expect::Survive
    }

    /// Whether `undoes` names the claim, or still says `TODO:` ([`crate::origin::claim_named`]).
    pub fn claim_named(&self) -> bool {
        crate::origin::claim_named(self.undoes.as_deref())
    }

    /// Every suite this mutant runs under: its own first, then the comparison suites.
    pub fn suites(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.suite.as_str()).chain(self.also.iter().map(String::as_str))
    }
}

/// A validated spec.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    pub file: PathBuf,
    /// The spec's bytes hashed, so `merge` can refuse outputs of different specs.
    pub sha256: String,
    pub suites: BTreeMap<String, Suite>,
    pub mutants: Vec<Mutant>,
    /// The `[worktree]` table: setup and links for each new checkout.
    pub worktree: candidate::setup::WorktreeSetup,
    /// The `[canary]` table: generated files no canary is written into.
    pub canary: candidate::canary::Canary,
}

impl Spec {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let bytes = files::input::read(path).map_err(|e| SpecError {
            file: path.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| SpecError {
            file: path.display().to_string(),
            line: None,
            message: format!("not UTF-8 text ({e})"),
        })?;
        Spec::parse(&text, path)
    }

    /// Validates `text` as if read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        Spec::parse_as(text, path, false)
    }

    /// Reads and validates `path` for its suites alone: a spec of no `[[mutant]]` yet is let
    /// through (the suites `mutants suggest` copies into the spec it writes).
    pub fn load_suites(path: &Path) -> Result<BTreeMap<String, Suite>, SpecError> {
        let bytes = files::input::read(path).map_err(|e| SpecError::file(path, e.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| SpecError::file(path, format!("not UTF-8 text ({e})")))?;
        Ok(Spec::parse_as(&text, path, true)?.suites)
    }

    fn parse_as(text: &str, path: &Path, suites_only: bool) -> Result<Spec, SpecError> {
        let file = path.display().to_string();
        let at = |span: Option<Range<usize>>, message: String| SpecError {
            file: file.clone(),
            line: span.map(|s| files::located::line_of(text, s.start)),
            message,
        };
        let raw: RawSpec =
            toml::from_str(text).map_err(|e| at(e.span(), e.message().trim().to_string()))?;

        let mut suites = BTreeMap::new();
        for (name, spanned) in &raw.suites {
            // `mutants suggest`'s placeholder when it found no suite: running it would only
            // fail the baseline, after the checkouts are made.
            if let Some(run) = spanned.get_ref().run() {
                if run.get_ref().trim_start().starts_with(crate::origin::TODO) {
                    return Err(at(
                        Some(run.span()),
                        format!("suite {name:?}: `run` still says TODO: write the command that runs your tests"),
                    ));
                }
            }
            let form = candidate::suite::Form::Mutants { name };
            suites.insert(name.clone(), candidate::suite::read(spanned, form, &at)?);
        }

        if raw.mutant.is_empty() && !suites_only {
            return Err(at(None, "no [[mutant]] entries".into()));
        }
        let mut mutants: Vec<Mutant> = Vec::new();
        for (index, spanned) in raw.mutant.iter().enumerate() {
            let m = spanned.get_ref();
            let line = files::located::line_of(text, spanned.span().start);
            let name = m.name.get_ref().trim().to_string();
            if name.is_empty() {
                return Err(at(Some(m.name.span()), "`name` is empty".into()));
            }
            if mutants.iter().any(|o| o.name == name) {
                return Err(at(
                    Some(m.name.span()),
                    format!("two mutants are named {name:?}"),
                ));
            }
            let rel = check_file(m.file.get_ref()).map_err(|why| {
                at(
                    Some(m.file.span()),
                    format!("file {:?} {why}", m.file.get_ref()),
                )
            })?;
            if m.anchor.get_ref().is_empty() {
                return Err(at(Some(m.anchor.span()), "`anchor` is empty".into()));
            }
            if m.replace.get_ref() == m.anchor.get_ref() {
                return Err(at(
                    Some(m.replace.span()),
                    format!(
                        "mutant {name:?}: `replace` equals `anchor`, so the mutant changes nothing"
                    ),
                ));
            }
            let known = |s: &Spanned<String>| {
                if suites.contains_key(s.get_ref()) {
                    Ok(s.get_ref().clone())
                } else {
                    Err(at(
                        Some(s.span()),
                        format!(
                            "unknown suite {:?} (the spec defines: {})",
                            s.get_ref(),
                            suites.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    ))
                }
            };
            let suite = known(&m.suite)?;
            let mut also = Vec::new();
            for a in &m.also {
                let a_name = known(a)?;
                if a_name == suite || also.contains(&a_name) {
                    return Err(at(
                        Some(a.span()),
                        format!("suite {a_name:?} is named twice for this mutant"),
                    ));
                }
                also.push(a_name);
            }
            let expect = match m.expect.as_ref().map(|e| (e.get_ref().as_str(), e.span())) {
                None | Some(("kill", _)) => Expect::Kill,
                Some(("survive", _)) => Expect::Survive,
                Some((other, span)) => {
                    return Err(at(
                        Some(span),
                        format!("expect must be \"kill\" or \"survive\", not {other:?}"),
                    ))
                }
            };
            let operator = match &m.operator {
                Some(op) => Some(
                    crate::origin::check_operator(op.get_ref())
                        .map_err(|why| at(Some(op.span()), why))?,
                ),
                None => None,
            };
            mutants.push(Mutant {
                index,
                name,
                site: m.site.clone().filter(|s| !s.trim().is_empty()),
                file: rel,
                anchor: m.anchor.get_ref().clone(),
                replace: m.replace.get_ref().clone(),
                undoes: m.undoes.clone().filter(|s| !s.trim().is_empty()),
                suite,
                also,
                expect,
                line,
                operator,
                context: None,
            });
        }
        let sha256 = manifests::Digest::of(text.as_bytes()).to_hex();
        let worktree = match &raw.worktree {
            Some(w) => candidate::setup::validate(w).map_err(|(span, m)| at(span, m))?,
            None => Default::default(),
        };
        let canary = match &raw.canary {
            Some(c) => candidate::canary::Canary::validate(c).map_err(|(span, m)| at(span, m))?,
            None => Default::default(),
        };
        Ok(Spec {
            file: path.to_path_buf(),
            sha256,
            suites,
            mutants,
            worktree,
            canary,
        })
    }

    /// The suites the given mutants use, in name order.
    pub fn suites_used<'a>(&self, mutants: impl IntoIterator<Item = &'a Mutant>) -> Vec<&Suite> {
        let mut names: Vec<&str> = mutants.into_iter().flat_map(|m| m.suites()).collect();
        names.sort_unstable();
        names.dedup();
        names.iter().filter_map(|n| self.suites.get(*n)).collect()
    }

    /// `SPEC:LINE: message`, for problems found after parsing (a file missing from the tree).
    pub fn error_at(&self, line: usize, message: String) -> SpecError {
        SpecError {
            file: self.file.display().to_string(),
            line: Some(line),
            message,
        }
    }
}

/// A duration as the spec and `--timeout` take it, by the one duration rule
/// ([`report::duration::timeout`]): more than zero, at most 30 days, at most
/// [`report::duration::MAX_LEN`] characters.
pub(crate) fn check_duration(text: &str) -> Result<Duration, String> {
    report::duration::timeout(text).map_err(|e| e.to_string())
}

/// A `file` value as a plain relative path (`./src/x.js` is `src/x.js`), or why it is refused,
/// by the one path rule ([`files::path`]); a path that climbs out or is absolute is "outside
/// the tree", and one ending in `/` names no file. (A symlink leading out is caught against the
/// checkout at run time.)
pub(crate) fn check_file(file: &str) -> Result<String, String> {
    use files::path::PathError;
    match files::path::relative(file) {
        Ok(rel) if rel.names_folder() => {
            Err("names a folder (it ends with `/`), not a file".into())
        }
        Ok(rel) => Ok(rel.to_str().unwrap_or(file).to_string()),
        Err(why @ (PathError::Absolute | PathError::ParentDir)) => {
            Err(format!("is outside the tree: it {why}"))
        }
        Err(why) => Err(why.to_string()),
    }
}

pub(crate) mod identity;

#[cfg(test)]
mod tests;
