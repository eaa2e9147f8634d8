//! The coverage phase, after the baseline and the canaries: each suite with a `select`
//! template that some mutant (not a control) names as its own runs once more unmutated, in the
//! first checkout, with coverage on, and its map is handed to the engine (and kept in the
//! cache, so a run of the same code and suite reads it instead: `coverage::store`). A suite
//! whose map cannot be made runs whole for every mutant, as it always did.
//!
//! The maps kept for the last report's code also tell `--incremental` what a mutant whose
//! suites declare no `inputs` can read ([`KeptMaps`]): the files its covering tests ran.

use std::collections::BTreeMap;

use anyhow::Result;

use cmdline::Exit;

use std::path::Path;

use super::incremental::{self, Covering, Now, TreeFacts};
use super::{Note, Out, Session};
use crate::anchor::{self, Found};
use crate::checkout::Checkout;
use crate::coverage::{self, Collected, Map};
use crate::record::{CandidateFacts, RunReport};
use crate::render::Sources;
use crate::run::BaselineResult;
use crate::spec::{Mutant, Spec};

/// What a reused row is held to besides the tree's facts, made once for an incremental run and
/// its dry run: the paths that differ from the report's tree (when git still has it) and the
/// coverage maps kept for the report's code tree, one per suite with `select`. A mutant whose
/// suites declare no `inputs` is held to the files its covering tests ran; one whose own suite
/// or comparison suite has no kept map, whose anchor is not found once, or whose lines every
/// test reaches is held to the whole code, as without a map.
pub(crate) struct KeptMaps<'a> {
    maps: BTreeMap<String, Map>,
    sources: &'a Sources,
    changed: Option<Vec<String>>,
}

impl<'a> KeptMaps<'a> {
    /// For the report `prior` and the tree in `co` (of the repository at `repo`): the maps
    /// are read from the cache (none with `no_cache`); `sources` holds each mutated file as
    /// this run reads it.
    pub(crate) fn since(
        prior: &RunReport,
        spec: &Spec,
        (co, repo): (&Checkout, &Path),
        sources: &'a Sources,
        no_cache: bool,
    ) -> KeptMaps<'a> {
        let changed = incremental::changed_since(co, &prior.tree, repo, spec);
        let maps = spec
            .suites
            .iter()
            .filter(|(_, s)| s.select.is_some() && !no_cache)
            .filter_map(|(name, s)| Some((name.clone(), coverage::load(&prior.code_tree, s)?)))
            .collect();
        KeptMaps {
            maps,
            sources,
            changed,
        }
    }

    /// What this run compares each row with: the tree's own facts, and what changed.
    pub(crate) fn now<'b>(
        &'b self,
        code_tree: &'b str,
        candidate: Option<&'b CandidateFacts>,
        facts: &'b TreeFacts,
        toolchains: &'b BTreeMap<String, String>,
    ) -> Now<'b> {
        Now {
            code_tree,
            candidate,
            facts,
            toolchains,
            changed: self.changed.as_deref(),
            coverage: (!self.maps.is_empty()).then_some(self as &dyn Covering),
        }
    }
}

impl Covering for KeptMaps<'_> {
    fn files(&self, m: &Mutant, by_covering_run: bool) -> Option<Vec<String>> {
        let text = self.sources.get(&m.file)?;
        // An unchanged mutated file has its anchor where the report's run swapped it.
        let Found::Once(span) = anchor::find_anchor(text.as_bytes(), m.anchor.as_bytes()) else {
            return None;
        };
        let lines = span.start_line as u32..=span.end_line as u32;
        let changed = self.changed.as_deref().unwrap_or_default();
        let mut held = std::collections::BTreeSet::new();
        for (k, suite) in m.suites().enumerate() {
            let map = self.maps.get(suite)?;
            // Only the mutant's own suite runs its covering tests first.
            let alone = k == 0 && by_covering_run;
            held.extend(map.held_to(&m.file, lines.clone(), changed, alone)?);
        }
        Some(held.into_iter().collect())
    }
}

impl Session {
    /// The coverage maps of the suites that have `select`, by suite name; `Err(exit)` when the
    /// run was interrupted.
    pub(crate) fn cover(
        &self,
        baseline: &BaselineResult,
        out: &mut Out,
    ) -> Result<Result<BTreeMap<String, Map>, Exit>> {
        let mut maps = BTreeMap::new();
        let mut names: Vec<&str> = self
            .mutants()
            .into_iter()
            .filter(|m| !m.is_control())
            .map(|m| m.suite.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let Some(co) = self.checkouts.first() else {
            return Ok(Ok(maps));
        };
        // libtest maps' instrumented builds: kept in the cache, so the next map of changed
        // code builds only what changed; a folder of this run's with `--no-cache`.
        let scratch = match self.settings.no_cache {
            true => Some(runner::scratch::ScratchDir::new("cargo-cover")?),
            false => None,
        };
        let cargo_target = match &scratch {
            Some(s) => s.path().to_path_buf(),
            None => runner::scratch::cache_dir()
                .join("coverage")
                .join("cargo-target"),
        };
        for name in names {
            let Some(suite) = self.spec.suites.get(name).filter(|s| s.select.is_some()) else {
                continue;
            };
            let Some(&timeouts) = baseline.timeouts.get(name) else {
                continue;
            };
            // The same code and suite as a run that mapped it: its map, no suite run.
            let kept = (!self.settings.no_cache)
                .then(|| coverage::load(&self.report.code_tree, suite))
                .flatten();
            if let Some(map) = kept {
                out.emit(&Note::Covered {
                    suite: name,
                    tests: map.tests(),
                    files: map.files(),
                    kept: true,
                });
                maps.insert(name.to_string(), map);
                continue;
            }
            let log = self.out.join("logs").join(format!(
                "coverage-{}.log",
                report::text::slug(name, "suite")
            ));
            out.steps(1);
            let places = coverage::Places {
                cargo: &cargo_target,
            };
            let collected = out.during(&Note::Covering { suite: name }, || {
                coverage::collect(suite, co.path(), &places, &log, timeouts, &self.cores)
            })?;
            out.clear();
            // What the run left in the checkout is put back before the first mutant anyway;
            // now, so that mutant's row does not carry it.
            let _ = co.make_whole();
            match collected {
                Collected::Interrupted => return Ok(Err(Exit::Interrupted)),
                Collected::Map(map) => {
                    out.emit(&Note::Covered {
                        suite: name,
                        tests: map.tests(),
                        files: map.files(),
                        kept: false,
                    });
                    if !self.settings.no_cache {
                        coverage::save(&self.report.code_tree, suite, &map);
                    }
                    maps.insert(name.to_string(), map);
                }
                Collected::None(why) => out.emit(&Note::NotMapped {
                    suite: name,
                    why: &why,
                }),
            }
        }
        Ok(Ok(maps))
    }
}
