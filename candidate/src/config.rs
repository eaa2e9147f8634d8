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

use runner::DEFAULT_TIMEOUT;

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
    suite: Vec<Spanned<RawSuite>>,
    worktree: Option<crate::setup::RawWorktree>,
    canary: Option<crate::canary::RawCanary>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Option<Spanned<String>>,
    run: Option<Spanned<String>>,
    glob: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    junit: Option<Spanned<String>>,
    tap: Option<Spanned<bool>>,
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
    /// Where its counts and failed tests are read from: the log, the runner's JUnit file
    /// (`junit = "reports/junit.xml"`), or TAP on stdout (`tap = true`).
    pub results: report::results::Source,
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
        for (i, spanned) in raw.suite.iter().enumerate() {
            let suite = spanned.get_ref();
            let suite_at = Some(spanned.span());
            let command = match (&suite.run, &suite.glob) {
                (Some(run), None) => SuiteCommand::Run(nonempty(run, "run")?),
                (None, Some(glob)) => {
                    let pattern = nonempty(glob, "glob")?;
                    // A glob matches files of the candidate's tree, so it is relative to it.
                    relative_path(&pattern)
                        .map_err(|why| at(Some(glob.span()), format!("`glob` {why}")))?;
                    SuiteCommand::Glob(pattern)
                }
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
                Some(t) => timeout(t.get_ref())
                    .map_err(|why| at(Some(t.span()), format!("timeout: {why}")))?,
                None => DEFAULT_TIMEOUT,
            };
            suites.push(SuiteSpec {
                name,
                command,
                timeout,
                env: env_table(&suite.env, &at)?,
                results: suite_results(&suite.junit, &suite.tap, &at)?,
            });
        }
        Ok(Config {
            file: path.to_path_buf(),
            base,
            patch,
            manifest,
            head,
            env: env_table(&raw.env, &at)?,
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

/// An `env` table checked, the one rule for gate.toml's and mutants.toml's: `execve` takes
/// `NAME=VALUE` strings ended by a NUL, so a name that is empty or holds `=` or NUL, or a value
/// that holds NUL, would be cut short or refused. The error is at the entry's line, as
/// `env NAME: why`.
pub fn env_table(
    raw: &BTreeMap<String, Spanned<String>>,
    at: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut env = BTreeMap::new();
    for (name, value) in raw {
        let why = if name.is_empty() {
            Some("the name is empty")
        } else if name.contains('\0') {
            Some("the name holds a NUL byte")
        } else if name.contains('=') {
            Some("the name holds `=`")
        } else if value.get_ref().contains('\0') {
            Some("the value holds a NUL byte, which no environment can carry")
        } else {
            None
        };
        if let Some(why) = why {
            let shown = files::escape::text(name);
            return Err(at(Some(value.span()), format!("env {shown}: {why}")));
        }
        env.insert(name.clone(), value.get_ref().clone());
    }
    Ok(env)
}

/// A suite's `junit` and `tap` keys, the one rule for gate.toml's and mutants.toml's: `junit`
/// names the runner's JUnit file by the one path rule (relative to the checkout, never
/// absolute or climbing), `tap = true` says the runner prints TAP; not both. The error is at
/// the key's line.
pub fn suite_results(
    junit: &Option<Spanned<String>>,
    tap: &Option<Spanned<bool>>,
    at: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<report::results::Source, ConfigError> {
    use report::results::Source;
    match (junit, tap.as_ref().map(|t| (*t.get_ref(), t.span()))) {
        (Some(_), Some((true, span))) => Err(at(
            Some(span),
            "a suite reads `junit` or `tap`, not both".into(),
        )),
        (Some(path), _) => Source::junit(path.get_ref()).map_err(|why| {
            at(
                Some(path.span()),
                format!("`junit` {:?} {why}", files::escape::text(path.get_ref())),
            )
        }),
        (None, Some((true, _))) => Ok(Source::Tap),
        (None, _) => Ok(Source::Log),
    }
}

/// A suite timeout as written (`15m`), by the one duration rule ([`report::duration::timeout`]):
/// more than zero, at most [`MAX_TIMEOUT`], at most [`report::duration::MAX_LEN`] characters.
pub fn timeout(text: &str) -> Result<Duration, String> {
    report::duration::timeout(text).map_err(|e| e.to_string())
}

/// `p` as a path relative to the candidate's tree (a suite's `glob`), by the one path rule
/// ([`files::path`]): not absolute, no `..`, not the tree itself; kept as written.
pub(crate) fn relative_path(p: &str) -> Result<PathBuf, String> {
    files::path::relative(p)
        .map(|_| PathBuf::from(p))
        .map_err(|why| format!("{p:?} {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("cand/gate.toml"))
    }

    #[test]
    fn a_suites_junit_report_is_a_path_in_the_checkout_and_tap_its_alternative() {
        use report::results::Source;
        let with = |keys: &str| {
            format!("base=\"a\"\npatch=\"p\"\nmanifest=\"m\"\n[[suite]]\nname=\"x\"\nrun=\"true\"\n{keys}\n")
        };
        let results = |keys: &str| parse(&with(keys)).unwrap().suites[0].results.clone();
        assert_eq!(
            results("junit = \"./reports/junit.xml\""),
            Source::Junit("reports/junit.xml".into())
        );
        assert_eq!(results("tap = true"), Source::Tap);
        assert_eq!(results("tap = false"), Source::Log);
        assert_eq!(results(""), Source::Log);
        let e = |keys: &str| parse(&with(keys)).unwrap_err().to_string();
        assert_eq!(
            e("junit = \"/tmp/junit.xml\""),
            "cand/gate.toml:7: `junit` \"/tmp/junit.xml\" is absolute (write it relative to the tree's root)"
        );
        assert!(
            e("junit = \"../junit.xml\"")
                .starts_with("cand/gate.toml:7: `junit` \"../junit.xml\" climbs"),
            "{}",
            e("junit = \"../junit.xml\"")
        );
        assert_eq!(
            e("junit = \"j.xml\"\ntap = true"),
            "cand/gate.toml:8: a suite reads `junit` or `tap`, not both"
        );
        assert!(e("tap = \"yes\"").starts_with("cand/gate.toml:7:"));
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
            .contains("pass --base"));
        let dup = format!("{GOOD}\n[[suite]]\nname = \"bus\"\nrun = \"true\"\n");
        assert!(parse(&dup).unwrap_err().message.contains("two suites"));
        let neither = "base=\"a\"\npatch=\"p\"\nmanifest=\"m\"\n[[suite]]\nname=\"x\"\n";
        assert!(parse(neither).unwrap_err().message.contains("neither"));
    }

    #[test]
    fn a_file_of_suites_only_is_completed_by_the_command_line() {
        let suites = "[[suite]]\nname = \"unit\"\nrun = \"true\"\n";
        let all = Overrides {
            base: Some("main".into()),
            patch: Some("/c/build.patch".into()),
            manifest: Some("m.sha256".into()),
        };
        let c = Config::parse_with(suites, Path::new("cand/gate.toml"), &all).unwrap();
        assert_eq!(c.base, "main");
        assert_eq!(c.patch, Path::new("/c/build.patch"));
        assert_eq!(c.manifest, Path::new("m.sha256"));
        assert_eq!(c.suites.len(), 1);
        // Each field missing from both places is one error naming its flag.
        for (key, flag, overrides) in [
            (
                "base",
                "--base REV",
                Overrides {
                    base: None,
                    ..all.clone()
                },
            ),
            (
                "patch",
                "--patch FILE",
                Overrides {
                    patch: None,
                    ..all.clone()
                },
            ),
            (
                "manifest",
                "--manifest FILE",
                Overrides {
                    manifest: None,
                    ..all.clone()
                },
            ),
        ] {
            let e =
                Config::parse_with(suites, Path::new("cand/gate.toml"), &overrides).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "cand/gate.toml: no `{key}`: set `{key}` in this file or pass {flag} on \
                     the command line"
                )
            );
        }
        // A field the file holds is still checked when the command line replaces it.
        let e = Config::parse_with(&format!("base = \"\"\n{suites}"), Path::new("g"), &all)
            .unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
    }

    #[test]
    fn nul_bytes_and_bad_env_names_name_their_line() {
        let nul = GOOD.replace("unix:///nonexistent", "unix:///x\\u0000y");
        let e = parse(&nul).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("NUL"), "{e}");
        let in_suite = format!("{GOOD}env = {{ A = \"a\\u0000\" }}\n");
        let e = parse(&in_suite).unwrap_err();
        assert_eq!(e.line, Some(16), "{e}");
        assert!(e.message.contains("NUL"), "{e}");
        let eq = GOOD.replace("DOCKER_HOST =", "\"A=B\" =");
        let e = parse(&eq).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("the name holds `=`"), "{e}");
        let run = GOOD.replace("node --test", "node\\u0000--test");
        assert!(parse(&run).unwrap_err().message.contains("NUL"));
    }

    #[test]
    fn timeouts_are_bounded_and_never_overflow() {
        assert_eq!(timeout("30d").unwrap(), MAX_TIMEOUT);
        for bad in [
            "31d",
            "0s",
            "18446744073709551615s",
            "99999999999d 99999999999d 99999999999d 99999999999d",
            "1e9s",
        ] {
            assert!(timeout(bad).is_err(), "{bad}");
        }
        let bad = GOOD.replace("\"15m\"", "\"9999d\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, Some(12), "{e}");
        assert!(e.message.contains("30 days"), "{e}");
    }

    #[test]
    fn the_patch_and_manifest_may_be_anywhere_and_the_command_line_wins() {
        // They are only read: absolute, climbing out with `..`, or a link out are all fine.
        for path in ["../build.patch", "sub/../../x", "/tmp/build.patch"] {
            let c = parse(&GOOD.replace("\"build.patch\"", &format!("{path:?}"))).unwrap();
            assert_eq!(c.patch, Path::new("cand").join(path), "{path}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let toml = tmp.path().join("gate.toml");
        std::fs::write(&toml, GOOD).unwrap();
        let c = Config::load_with(
            &toml,
            &Overrides {
                base: Some("v2".into()),
                patch: Some("/elsewhere/p.patch".into()),
                manifest: None,
            },
        )
        .unwrap();
        assert_eq!(c.base, "v2");
        assert_eq!(c.patch, Path::new("/elsewhere/p.patch"));
        assert_eq!(c.manifest, tmp.path().join("candidate-manifest.sha256"));
        // A glob matches files of the candidate's tree, so it stays inside it.
        for glob in ["../scripts/*.sh", "/tmp/*.sh"] {
            let bad = GOOD.replace("\"scripts/test-*.sh\"", &format!("{glob:?}"));
            let e = parse(&bad).unwrap_err();
            assert_eq!(e.line, Some(15), "{e}");
            assert!(e.message.starts_with("`glob`"), "{e}");
        }
    }

    #[test]
    fn a_file_without_suites_is_refused_by_require_suites() {
        let c = parse("base = \"a\"\npatch = \"p\"\nmanifest = \"m\"\n").unwrap();
        let e = c.require_suites().unwrap_err();
        assert!(
            e.to_string().starts_with("cand/gate.toml: no [[suite]]"),
            "{e}"
        );
        parse(GOOD).unwrap().require_suites().unwrap();
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn any_text_is_a_config_or_an_error_never_a_panic(text in "\\PC*") {
            let _ = parse(&text);
        }

        #[test]
        fn any_edit_of_a_good_file_is_a_config_or_an_error(
            at in 0usize..400,
            insert in "[\\x00-\\x7f\u{1b}\u{202e}]{0,12}",
        ) {
            let mut text = GOOD.to_string();
            let at = text.char_indices().map(|(i, _)| i).nth(at % text.chars().count()).unwrap();
            text.insert_str(at, &insert);
            if let Err(e) = parse(&text) {
                proptest::prop_assert!(!e.to_string().is_empty());
            }
        }

        #[test]
        fn any_timeout_text_is_a_bounded_duration_or_an_error(t in "[0-9.smhd ]{0,80}") {
            if let Ok(d) = timeout(&t) {
                proptest::prop_assert!(!d.is_zero() && d <= MAX_TIMEOUT);
            }
        }
    }
}
