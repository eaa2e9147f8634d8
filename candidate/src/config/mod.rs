//! `gate.toml`: the candidate (base, patch, manifest, head) and its suites, validated up front.
//!
//! Every problem is reported as `FILE:LINE: what is wrong` before anything runs: a typo in a
//! key (`tmeout`) or a duration (`15 minutes`) must not surface after the first suite has run
//! for half an hour. Paths are relative to the file's own folder, so a gate.toml can sit beside
//! its patch and be run from anywhere.
//!
//! `patch` and `manifest` may be anywhere (absolute, or climbing out with `..`): they are only
//! read, and every output is refused if it would land on one (`files::outputs`), so one
//! gate.toml serves many candidates; the command line may name them instead ([`Overrides`]),
//! and a project's own gate.toml may hold only its suites, `base`, `patch` and `manifest`
//! coming from `--base`, `--patch` and `--manifest` (one missing from both is an error naming
//! its flag).
//! A suite's `glob` matches files of the candidate's tree, so it stays relative. No string may
//! hold a NUL byte (the kernel cannot pass one in an argument or environment), an `[env]` name
//! is a valid variable name, and a `timeout` is at most [`MAX_TIMEOUT`].

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::suite::Suite;

/// The longest suite `timeout` a gate.toml may set: 30 days. Longer is surely a typo, and a
/// bound keeps every deadline (start + timeout) far inside what a clock can hold.
pub const MAX_TIMEOUT: Duration = report::duration::MAX;

/// A problem located in the file (`FILE:LINE: what is wrong`): the one type all gatekit's
/// config files report with.
pub type ConfigError = files::located::Located;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    base: Option<Spanned<String>>,
    patch: Option<Spanned<String>>,
    manifest: Option<Spanned<String>>,
    head: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    suite: Vec<Spanned<crate::suite::RawSuite>>,
    worktree: Option<crate::setup::RawWorktree>,
    canary: Option<crate::canary::RawCanary>,
}

/// A validated gate.toml.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file it came from.
    pub file: PathBuf,
    pub base: String,
    /// Absolute, or relative to the current directory, resolved against the file's folder.
    pub patch: PathBuf,
    pub manifest: PathBuf,
    pub head: String,
    pub env: BTreeMap<String, String>,
    pub suites: Vec<Suite>,
    /// The `[worktree]` table: setup and links for each new checkout.
    pub worktree: crate::setup::WorktreeSetup,
    /// The `[canary]` table: generated files no canary is written into.
    pub canary: crate::canary::Canary,
    /// The sha256 of the file's bytes as read (once: it may have been a FIFO), hex; empty for
    /// a config parsed from text.
    pub sha256: String,
}

/// What the command line names instead of gate.toml's `base`, `patch` and `manifest`
/// (`--base`, `--patch`, `--manifest`); paths as typed, relative to the current directory.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub base: Option<String>,
    pub patch: Option<PathBuf>,
    pub manifest: Option<PathBuf>,
}

impl Config {
    /// Puts the files a run reads from this gate.toml (itself, its patch and manifest) on
    /// `plan` as inputs no output may land on.
    pub fn plan_inputs(&self, plan: &mut files::outputs::Plan) {
        plan.input("gate.toml", &self.file)
            .input("patch", &self.patch)
            .input("manifest", &self.manifest);
    }

    /// Reads and validates `path`, which must name the candidate itself.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_with(path, &Overrides::default())
    }

    /// Reads and validates `path`, with what the command line names in place of its `base`,
    /// `patch` and `manifest`: one gate.toml, many candidates, and a project's gate.toml may
    /// hold only its suites. A field given in neither place is one error naming the flag.
    pub fn load_with(path: &Path, overrides: &Overrides) -> Result<Config, ConfigError> {
        let bytes = files::input::read(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        let sha256 = manifests::Digest::of(&bytes).to_hex();
        let text = String::from_utf8(bytes).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: None,
            message: format!("not UTF-8 text ({e})"),
        })?;
        let mut config = Config::parse_with(&text, path, overrides)?;
        config.sha256 = sha256;
        Ok(config)
    }

    /// Reads and validates `path` for its suites alone, as [`Config::load`] validates them: a
    /// project's gate.toml may name no candidate (its suites are what `mutants suggest` copies
    /// into the spec it writes), so `base`, `patch` and `manifest` are not asked for.
    pub fn load_suites(path: &Path) -> Result<Vec<Suite>, ConfigError> {
        // Placeholders the parse never reads a file through: only the suites are kept.
        let none = Overrides {
            base: Some("HEAD".into()),
            patch: Some(PathBuf::new()),
            manifest: Some(PathBuf::new()),
        };
        Ok(Config::load_with(path, &none)?.suites)
    }

    /// Bad input unless the file names at least one suite: `gate run` has nothing to judge
    /// without one (a candidate for `mutants run --candidate` needs none).
    pub fn require_suites(&self) -> Result<(), ConfigError> {
        if self.suites.is_empty() {
            return Err(ConfigError {
                file: self.file.display().to_string(),
                line: None,
                message: "no [[suite]]: name at least one suite to run".into(),
            });
        }
        Ok(())
    }

    /// Validates `text` as if read from `path`, which must name the candidate itself.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        Config::parse_with(text, path, &Overrides::default())
    }

    /// Validates `text` as if read from `path`, the command line's `overrides` in place of
    /// its `base`, `patch` and `manifest` (see [`Config::load_with`]).
    pub fn parse_with(
        text: &str,
        path: &Path,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let at = |span: Option<Range<usize>>, message: String| ConfigError {
            file: file.clone(),
            line: span.map(|s| files::located::line_of(text, s.start)),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            at(e.span(), message)
        })?;
        let folder = path.parent().unwrap_or(Path::new(""));
        let nonempty = |s: &Spanned<String>, key: &str| {
            if s.get_ref().trim().is_empty() {
                Err(at(Some(s.span()), format!("`{key}` is empty")))
            } else if s.get_ref().contains('\0') {
                Err(at(Some(s.span()), format!("`{key}` holds a NUL byte")))
            } else {
                Ok(s.get_ref().clone())
            }
        };
        // Relative to the gate.toml's folder; an absolute path stays as it is.
        let input = |s: &Spanned<String>, key: &str| Ok(folder.join(nonempty(s, key)?));
        // The command line wins; a field named in neither place is one error naming both.
        let missing = |key: &str, flag: &str| {
            at(
                None,
                format!("no `{key}`: set `{key}` in this file or pass {flag} on the command line"),
            )
        };
        // Each field the file holds is valid whether or not the command line replaces it.
        let base = raw.base.as_ref().map(|b| nonempty(b, "base")).transpose()?;
        let patch = raw.patch.as_ref().map(|p| input(p, "patch")).transpose()?;
        let manifest = raw
            .manifest
            .as_ref()
            .map(|m| input(m, "manifest"))
            .transpose()?;
        let base = overrides
            .base
            .clone()
            .or(base)
            .ok_or_else(|| missing("base", "--base REV"))?;
        let patch = overrides
            .patch
            .clone()
            .or(patch)
            .ok_or_else(|| missing("patch", "--patch FILE"))?;
        let manifest = overrides
            .manifest
            .clone()
            .or(manifest)
            .ok_or_else(|| missing("manifest", "--manifest FILE"))?;
        let head = match &raw.head {
            Some(h) => nonempty(h, "head")?,
            None => "HEAD".to_string(),
        };
        let mut suites = Vec::new();
        for (index, spanned) in raw.suite.iter().enumerate() {
            let suite = crate::suite::read(spanned, crate::suite::Form::Gate { index }, &at)?;
            if suites.iter().any(|s: &Suite| s.name == suite.name) {
                let span = spanned.get_ref().name().map(Spanned::span);
                let span = span.or(Some(spanned.span()));
                return Err(at(span, format!("two suites are named {:?}", suite.name)));
            }
            suites.push(suite);
        }
        Ok(Config {
            file: path.to_path_buf(),
            base,
            patch,
            manifest,
            head,
            env: crate::suite::env_table(&raw.env, &at)?,
            suites,
            worktree: match &raw.worktree {
                Some(w) => crate::setup::validate(w).map_err(|(span, m)| at(span, m))?,
                None => Default::default(),
            },
            canary: match &raw.canary {
                Some(c) => crate::canary::Canary::validate(c).map_err(|(span, m)| at(span, m))?,
                None => Default::default(),
            },
            sha256: String::new(),
        })
    }
}

#[cfg(test)]
mod tests;
