//! Bracketing with more than one fill, for the unit: the same bisection run with `ascii`, then
//! `astral` and `lines`, each fill's threshold kept as a `units::Observation`, and the unit
//! they agree in inferred (`crate::units`).
//!
//! The other fills search near the ascii threshold t: a client counting bytes stops the
//! astral fill near t/2, one counting code points near 2t, so `astral` bisects t/4..4t; a lines
//! limit can lie anywhere, so `lines` bisects the whole range again.

use super::events::Observer;
use super::results::UnitsRecord;
use super::search::{bisect, run_observed, BisectEnd};
use super::{Driver, Verdict};
use crate::units::{infer, Observation};
use mcp::emit::{Fill, MAX_N};

/// Bisects `lo..hi` with `fill` and reads the observation off it: `None` when LO did not come
/// back inline or a midpoint gave no side.
fn observe(
    driver: &mut Driver,
    fill: Fill,
    lo: u64,
    hi: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<Option<Observation>> {
    driver.set_fill(fill);
    observer.plan(2);
    if run_observed(driver, lo, observer)? != Verdict::Inline {
        return Ok(None);
    }
    let at_hi = run_observed(driver, hi, observer)?;
    if at_hi == Verdict::Inline {
        return Ok(Some(Observation {
            fill,
            last_inline: hi,
            first_over: None,
        }));
    }
    if !at_hi.is_over() {
        return Ok(None);
    }
    Ok(match bisect(driver, lo, hi, observer)? {
        BisectEnd::Pinned => {
            let inline = driver
                .points
                .iter()
                .filter(|p| p.fill == fill && p.verdict == Verdict::Inline && p.n < hi)
                .map(|p| p.n)
                .max()
                .unwrap_or(lo);
            Some(Observation {
                fill,
                last_inline: inline,
                first_over: Some(inline + 1),
            })
        }
        BisectEnd::Stopped { .. } => None,
    })
}

/// Bisects `lo..hi` with each fill and infers the unit. The driver's fill is set back to
/// ascii after.
pub(crate) fn bracket_units(
    driver: &mut Driver,
    lo: u64,
    hi: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<UnitsRecord> {
    let mut observations = Vec::new();
    let ascii = observe(driver, Fill::Ascii, lo, hi, observer)?;
    observations.extend(ascii);
    if let Some(a) = ascii {
        let t = a.last_inline;
        let (alo, ahi) = (
            (t / 4).max(1),
            t.saturating_mul(4).saturating_add(4).min(MAX_N),
        );
        observations.extend(observe(driver, Fill::Astral, alo, ahi, observer)?);
        observations.extend(observe(driver, Fill::Lines, lo, hi, observer)?);
    }
    driver.set_fill(Fill::Ascii);
    Ok(UnitsRecord {
        inference: infer(&observations),
        observations,
    })
}
