//! The canary phase, between the baseline and the first mutant: each mutated file made
//! unloadable in the first checkout, each of its suites run once, and the run stopped (exit 4)
//! when one still passes (see [`crate::run::canary`]).

use std::collections::BTreeMap;

use anyhow::Result;

use cmdline::Exit;

use super::note::Note;
use super::{Out, Session};
use crate::record::{CanaryLeftOut, CanaryVerdict};
use crate::render;
use crate::run::{self, canary, BaselineResult, Plan};

impl Session {
    /// Runs every planned canary in the first checkout, each written to the report as it ends.
    /// `Err(exit)` when the run must stop: a canary survived (exit 4) or an interrupt came.
    pub(crate) fn canaries(
        &mut self,
        baseline: &BaselineResult,
        out: &mut Out,
    ) -> Result<Result<(), Exit>> {
        if self.settings.no_canary {
            out.emit(&Note::CanariesSkipped);
            return Ok(Ok(()));
        }
        let mut planned = canary::planned(&self.mutants());
        // `[canary] skip`: generated files the suites do not read, each said with its glob.
        planned.retain(|(file, _)| match self.spec.canary.skipped(file) {
            Some(why) => {
                let left = CanaryLeftOut {
                    file: file.clone(),
                    why,
                };
                if !self.report.canaries_left_out.contains(&left) {
                    self.report.canaries_left_out.push(left);
                }
                false
            }
            None => true,
        });
        let plan = Plan {
            spec: &self.spec,
            source: &self.source,
            prep: &self.prep,
            mutants: Vec::new(),
            baseline,
            out: self.out.clone(),
            warm: run::Warm {
                snapshot: None,
                suites: Vec::new(),
                cli_timeout: self.settings.timeout,
            },
            cores: &self.cores,
            // A canary runs its suite whole.
            coverage: &BTreeMap::new(),
            checks: Default::default(),
        };
        out.steps(planned.len());
        for (file, suite) in &planned {
            let running = Note::CanaryRunning { file, suite };
            let ran = out.during(&running, || {
                canary::run_canary(&plan, &self.checkouts[0], file, suite)
            })?;
            let Some(c) = ran else {
                out.clear();
                return Ok(Err(Exit::Interrupted));
            };
            out.emit(&Note::CanaryRan(&c));
            let survived = c.verdict == CanaryVerdict::Survived;
            if survived {
                out.emit(&Note::CanarySurvived {
                    canary: &c,
                    dir: self.checkouts[0].path(),
                });
            }
            self.report.canaries.push(c);
            render::write_all(
                &self.report,
                &self.sources,
                &self.out,
                self.settings.sarif.as_deref(),
            )?;
            if survived {
                out.clear();
                return Ok(Err(Exit::Precondition));
            }
        }
        out.clear();
        Ok(Ok(()))
    }
}
