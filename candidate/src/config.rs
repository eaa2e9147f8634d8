//! `gate.toml`: the candidate (base, patch, manifest, head) and its suites, validated up front.
//!
//! Every problem is reported as `FILE:LINE: what is wrong` before anything runs: a typo in a
//! key (`tmeout`) or a duration (`15 minutes`) must not surface after the first suite has run
//! for half an hour. Paths are relative to the file's own folder, so a gate.toml can sit beside
//! its patch and be run from anywhere.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use report::runner::DEFAULT_TIMEOUT;

#[derive(Debug, Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    base: Spanned<String>,
    patch: Spanned<String>,
    manifest: Spanned<String>,
    head: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    suite: Vec<Spanned<RawSuite>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Option<Spanned<String>>,
    run: Option<Spanned<String>>,
    glob: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// What the suite runs: a shell command, or every file a glob matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SuiteCommand {
    Run(String),
    Glob(String),
}

/// One `[[suite]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteSpec {
    pub name: String,
    pub command: SuiteCommand,
    pub timeout: Duration,
    pub env: BTreeMap<String, String>,
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
    pub suites: Vec<SuiteSpec>,
}

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        Config::parse(&text, path)
    }

    /// Validates `text` as if read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let at = |span: Option<Range<usize>>, message: String| ConfigError {
            file: file.clone(),
            line: span.map(|s| report::span::line_of(text, s.start)),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            at(e.span(), message)
        })?;
        let folder = path.parent().unwrap_or(Path::new(""));
        let resolve = |p: &str| {
            let p = Path::new(p);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                folder.join(p)
            }
        };
        let nonempty = |s: &Spanned<String>, key: &str| {
            if s.get_ref().trim().is_empty() {
                Err(at(Some(s.span()), format!("`{key}` is empty")))
            } else {
                Ok(s.get_ref().clone())
            }
        };
        let base = nonempty(&raw.base, "base")?;
        let patch = resolve(&nonempty(&raw.patch, "patch")?);
        let manifest = resolve(&nonempty(&raw.manifest, "manifest")?);
        let head = match &raw.head {
            Some(h) => nonempty(h, "head")?,
            None => "HEAD".to_string(),
        };
        let mut suites = Vec::new();
        for (i, spanned) in raw.suite.iter().enumerate() {
            let suite = spanned.get_ref();
            let suite_at = Some(spanned.span());
            let command = match (&suite.run, &suite.glob) {
                (Some(run), None) => SuiteCommand::Run(nonempty(run, "run")?),
                (None, Some(glob)) => SuiteCommand::Glob(nonempty(glob, "glob")?),
                (Some(_), Some(glob)) => {
                    return Err(at(
                        Some(glob.span()),
                        "a suite has either `run` or `glob`, not both".into(),
                    ))
                }
                (None, None) => {
                    return Err(at(
                        suite_at,
                        format!("suite {} has neither `run` nor `glob`", i + 1),
                    ))
                }
            };
            let name = match (&suite.name, &command) {
                (Some(n), _) => nonempty(n, "name")?,
                (None, SuiteCommand::Glob(g)) => g.clone(),
                (None, SuiteCommand::Run(_)) => {
                    return Err(at(suite_at, format!("suite {} has no `name`", i + 1)))
                }
            };
            if suites.iter().any(|s: &SuiteSpec| s.name == name) {
                let span = suite.name.as_ref().map(|n| n.span()).or(suite_at);
                return Err(at(span, format!("two suites are named {name:?}")));
            }
            let timeout = match &suite.timeout {
                Some(t) => report::duration::parse(t.get_ref())
                    .map_err(|e| at(Some(t.span()), format!("timeout: {e}")))?,
                None => DEFAULT_TIMEOUT,
            };
            if timeout.is_zero() {
                let span = suite.timeout.as_ref().map(|t| t.span());
                return Err(at(span, "timeout must be more than zero".into()));
            }
            suites.push(SuiteSpec {
                name,
                command,
                timeout,
                env: suite.env.clone(),
            });
        }
        Ok(Config {
            file: path.to_path_buf(),
            base,
            patch,
            manifest,
            head,
            env: raw.env,
            suites,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("cand/gate.toml"))
    }

    const GOOD: &str = r#"
base = "a3f6e9e6"
patch = "build.patch"
manifest = "candidate-manifest.sha256"

[env]
DOCKER_HOST = "unix:///nonexistent"

[[suite]]
name = "bus"
run = "node --test packages/bus/tests"
timeout = "15m"

[[suite]]
glob = "scripts/test-*.sh"
"#;

    #[test]
    fn a_good_file_resolves_paths_against_its_folder() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.base, "a3f6e9e6");
        assert_eq!(c.head, "HEAD");
        assert_eq!(c.patch, Path::new("cand/build.patch"));
        assert_eq!(c.suites.len(), 2);
        assert_eq!(c.suites[0].timeout, Duration::from_secs(900));
        assert_eq!(c.suites[1].timeout, DEFAULT_TIMEOUT);
        assert_eq!(
            c.suites[1].command,
            SuiteCommand::Glob("scripts/test-*.sh".into())
        );
        assert_eq!(c.env["DOCKER_HOST"], "unix:///nonexistent");
    }

    #[test]
    fn an_unknown_key_names_its_line() {
        let bad = GOOD.replace("timeout = \"15m\"", "tmeout = \"15m\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, Some(12), "{e}");
        assert!(
            e.to_string()
                .starts_with("cand/gate.toml:12: unknown field `tmeout`"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_duration_names_its_line() {
        let bad = GOOD.replace("\"15m\"", "\"15 minutes\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, Some(12), "{e}");
        assert!(e.message.contains("15 minutes"), "{e}");
    }

    #[test]
    fn missing_and_duplicate_fields_are_errors() {
        assert!(parse("patch = \"p\"\nmanifest = \"m\"\n")
            .unwrap_err()
            .message
            .contains("base"));
        let dup = format!("{GOOD}\n[[suite]]\nname = \"bus\"\nrun = \"true\"\n");
        assert!(parse(&dup).unwrap_err().message.contains("two suites"));
        let neither = "base=\"a\"\npatch=\"p\"\nmanifest=\"m\"\n[[suite]]\nname=\"x\"\n";
        assert!(parse(neither).unwrap_err().message.contains("neither"));
    }
}
