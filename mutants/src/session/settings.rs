//! What `mutants run` was asked to do, as typed settings, and which mutants that selects.
//!
//! The command layer builds [`Settings`] from clap's arguments; nothing below it sees the
//! command line, so a session could be started by another front end with the same values.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};

use report::{ColorChoice, Format};

use crate::record::Shard;
use crate::spec::Spec;

/// A run's settings.
#[derive(Debug)]
pub(crate) struct Settings {
    pub spec: PathBuf,
    /// The repository to mutate a checkout of; `None` is the current directory.
    pub dir: Option<PathBuf>,
    /// A gate.toml to build the checkouts from instead.
    pub candidate: Option<PathBuf>,
    /// `--base`, `--patch`, `--manifest`: in place of the gate.toml's.
    pub overrides: candidate::config::Overrides,
    /// How many mutants run at once, each in its own checkout (at least 1).
    pub jobs: usize,
    /// The operator's timeout for every suite run, over the spec's and the derived one.
    pub timeout: Option<Duration>,
    pub selection: Selection,
    pub out: PathBuf,
    /// Leave the checkouts in place.
    pub keep: bool,
    /// Neither restore nor save the build outputs kept between runs.
    pub no_cache: bool,
    /// Skip the canaries (`--no-canary`); the report says so.
    pub no_canary: bool,
    /// Hand every build and suite a shared jobserver (`--no-jobserver`: none).
    pub jobserver: bool,
    /// What to print on stdout at the end, and whether it is coloured.
    pub format: Format,
    pub color: ColorChoice,
    /// `--sarif FILE`: the findings as SARIF, written with every other report file.
    pub sarif: Option<PathBuf>,
    /// `--attest FILE [--sign-key KEY]`: written by [`super::Session::finish`].
    pub attest: Option<crate::attest::Attest>,
    /// `run --suggested`: the spec proposed for this run, written to `spec` (in `--out`) once
    /// the run holds the folder; `None` runs the spec file `spec` names.
    pub suggested: Option<Suggested>,
}

/// The spec `run --suggested` proposed, and what its findings show.
#[derive(Debug)]
pub(crate) struct Suggested {
    /// The spec's TOML, as `mutants suggest` would write it.
    pub text: String,
    /// Each mutant's hunk, by name: the change a finding is about.
    pub context: std::collections::BTreeMap<String, String>,
}

/// Which of the spec's mutants a run judges.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// Only these (none: all).
    pub only: Vec<String>,
    /// From this one to the end of the spec.
    pub from: Option<String>,
    pub shard: Option<Shard>,
    /// `--incremental`: reuse the rows of --out's report whose mutants are unchanged on the
    /// same code, and judge only the rest.
    pub incremental: bool,
    /// `--incremental --dry-run`: judge nothing; list the mutants an incremental run would
    /// judge, and why.
    pub dry_run: bool,
}

impl Selection {
    /// Whether this run updates an existing report in place (`--only`, `--from`) rather than
    /// starting one.
    pub(crate) fn updates_in_place(&self) -> bool {
        !self.only.is_empty() || self.from.is_some()
    }

    /// The indices of the mutants this selection leaves, in spec order; a name the spec does
    /// not hold is refused.
    pub(crate) fn select(&self, spec: &Spec) -> Result<Vec<usize>> {
        for name in self.only.iter().chain(self.from.iter()) {
            if !spec.mutants.iter().any(|m| &m.name == name) {
                bail!("{}: no mutant is named {name:?}", spec.file.display());
            }
        }
        let start = match &self.from {
            Some(name) => spec
                .mutants
                .iter()
                .position(|m| &m.name == name)
                .unwrap_or(0),
            None => 0,
        };
        let picked: Vec<usize> = (start..spec.mutants.len())
            .filter(|&i| self.only.is_empty() || self.only.contains(&spec.mutants[i].name))
            .collect();
        Ok(match self.shard {
            Some(shard) => shard.select(picked),
            None => picked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let mut text = String::from("[suites.s]\nrun = \"true\"\n");
        for name in ["a", "b", "c", "d", "e"] {
            text.push_str(&format!(
                "[[mutant]]\nname = \"{name}\"\nfile = \"f\"\nanchor = \"x\"\nreplace = \"y\"\nsuite = \"s\"\n"
            ));
        }
        Spec::parse(&text, std::path::Path::new("mutants.toml")).unwrap()
    }

    fn select(only: &[&str], from: Option<&str>, shard: Option<Shard>) -> Result<Vec<usize>> {
        Selection {
            only: only.iter().map(|s| s.to_string()).collect(),
            from: from.map(String::from),
            shard,
            incremental: false,
            dry_run: false,
        }
        .select(&spec())
    }

    #[test]
    fn only_from_and_shard_select_in_spec_order() {
        assert_eq!(select(&[], None, None).unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(select(&["d", "b"], None, None).unwrap(), [1, 3]);
        assert_eq!(select(&[], Some("c"), None).unwrap(), [2, 3, 4]);
        assert_eq!(select(&["a", "d"], Some("b"), None).unwrap(), [3]);
        let second = Some(Shard { k: 2, n: 2 });
        assert_eq!(select(&[], None, second).unwrap(), [1, 3]);
        assert_eq!(select(&[], Some("b"), second).unwrap(), [2, 4]);
    }

    #[test]
    fn a_name_the_spec_does_not_hold_is_refused() {
        let e = select(&["zz"], None, None).unwrap_err().to_string();
        assert!(e.contains("no mutant is named \"zz\""), "{e}");
        assert!(select(&[], Some("zz"), None).is_err());
        assert!(!Selection::default().updates_in_place());
    }
}
