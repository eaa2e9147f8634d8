//! `probe check`: is a client's threshold still where it was? One command per version bump.
//!
//! It runs `--expect N` and `N+1`: N must come back inline and N+1 saved or truncated (with
//! `--expect-turn`, N is the total of one turn's results, split over its calls). When the
//! threshold moved, it goes on to find the new one (doubling up, or bisecting down) so the report
//! says where it went, and the suggested reply cap follows the threshold actually measured.

use crate::bracket::events::Observer as _;
use crate::bracket::{
    bisect, conclude, publish, run_observed, threshold, BisectEnd, CheckRecord, ClientSettings,
    Driver, Verdict,
};
use crate::units::{n_for, size_of, Measure, Unit};
use cmdline::Exit;
use mcp::emit::{Fill, MAX_N};
use report::Timestamp;

/// What `check` takes.
#[derive(Debug, Clone)]
pub(crate) struct CheckSettings {
    /// The threshold expected, in `unit` (UTF-16 units, as `emit`'s n, when none is given).
    pub expect: u64,
    /// The unit the client is expected to count in; a unit of text is checked with a second
    /// fill, tokens are the estimate (one per four units).
    pub unit: Option<Measure>,
    /// The fraction under the threshold the suggested cap keeps (0.2 for 20%).
    pub margin: f64,
    pub client: ClientSettings,
}

/// A cap that stays `margin` under `threshold` (50000 with 0.2 gives 40000).
pub(crate) fn suggested_cap(threshold: u64, margin: f64) -> u64 {
    // Round the product to a whole unit before flooring, so 50000 * 0.8 is 40000 and not 39999
    // from floating-point dust.
    ((threshold as f64 * (1.0 - margin)) * 1e6).round() as u64 / 1_000_000
}

/// `probe check`: 0 when the threshold held, 1 when it moved, 4 when the client gave no verdict.
pub(crate) fn run_check(settings: &CheckSettings) -> anyhow::Result<Exit> {
    let started = Timestamp::now();
    // The n (as emit counts) whose text is the expected size in the unit, with the fill that
    // measures that unit directly.
    let fill = settings.unit.map_or(settings.client.fill, Measure::fill);
    let n = match settings.unit {
        Some(unit) => n_for(settings.expect, fill, unit).min(MAX_N - 1),
        None => settings.expect,
    };
    let mut client = settings.client.clone();
    client.fill = fill;
    let mut driver = Driver::new(&client)?;
    let quiet = settings.client.output_format() == report::Format::Json;
    let mut progress = crate::bracket::render::progress(2, quiet, settings.client.color);
    let mut note = None;
    let mut unit_held = None;
    let mut unit_at = None;
    let mut unit_note = None;
    let outcome: anyhow::Result<()> = (|| {
        let run = run_observed;
        let at = run(&mut driver, n, &mut progress)?;
        let above = run(&mut driver, n + 1, &mut progress)?;
        match (at, above) {
            (Verdict::Inline, v) if v.is_over() => {}
            (Verdict::Inline, Verdict::Inline) => {
                // Moved up: double the distance until a point is over, then bisect.
                let (mut lo, mut step) = (n + 1, 1u64);
                loop {
                    step *= 2;
                    let hi = (n + step).min(MAX_N);
                    progress.plan(1);
                    let v = run(&mut driver, hi, &mut progress)?;
                    if v.is_over() {
                        note = stopped(bisect(&mut driver, lo, hi, &mut progress)?);
                        break;
                    }
                    if v != Verdict::Inline {
                        note = Some(format!("n={hi} came back `{v}`; the search up stopped"));
                        break;
                    }
                    if hi == MAX_N {
                        note = Some(format!("inline up to the tool's maximum {MAX_N}"));
                        break;
                    }
                    lo = hi;
                }
            }
            (v, _) if v.is_over() => {
                // Moved down: halve until a point is inline, then bisect.
                let mut hi = n;
                loop {
                    let lo = hi / 2;
                    progress.plan(1);
                    let v = run(&mut driver, lo, &mut progress)?;
                    if v == Verdict::Inline {
                        note = stopped(bisect(&mut driver, lo, hi, &mut progress)?);
                        break;
                    }
                    if !v.is_over() || lo == 0 {
                        note = Some(format!("n={lo} came back `{v}`; the search down stopped"));
                        break;
                    }
                    hi = lo;
                }
            }
            _ => {}
        }
        // The unit, checked where the threshold is now (the one expected when it held, the
        // one measured when it moved): the same size under the astral fill (two UTF-16 units,
        // four bytes, one code point a character) must also be inline, and one character more
        // over. Where no threshold was pinned there is no size to check at, and the record
        // says so rather than judge the unit at a size that no longer means anything.
        if let Some(unit) = settings
            .unit
            .and_then(Measure::unit)
            .filter(|u| *u != Unit::Lines)
        {
            let now = threshold(&driver.points, fill, driver.calls());
            match (now.exact, now.last_inline) {
                // A turn's budget is split over its calls, which a second fill would split
                // differently in every unit.
                _ if settings.client.calls > 1 => {
                    unit_note = Some(
                        "not checked: a turn's total is split over its calls, differently \
                         under another fill"
                            .to_string(),
                    );
                }
                (true, Some(last)) => {
                    let size = size_of(last, fill, unit);
                    let a = n_for(size, Fill::Astral, unit).min(MAX_N - 1);
                    driver.set_fill(Fill::Astral);
                    progress.plan(2);
                    let at = run(&mut driver, a, &mut progress)?;
                    let above = run(&mut driver, a + 1, &mut progress)?;
                    driver.set_fill(fill);
                    unit_at = Some(size);
                    if at.is_judged() && above.is_judged() {
                        unit_held = Some(at == Verdict::Inline && above.is_over());
                    } else {
                        unit_note = Some(format!(
                            "not checked: the astral fill came back `{at}` at n={a} and \
                             `{above}` at n={}",
                            a + 1
                        ));
                    }
                }
                _ => {
                    unit_note = Some(
                        "not checked: the threshold was not pinned, so there is no size to \
                         check the astral fill at"
                            .to_string(),
                    );
                }
            }
        }
        Ok(())
    })();
    let mut results = conclude("check", &driver, started, &mut progress, outcome)?;
    let verdict_at = |m: u64| {
        results
            .points
            .iter()
            .find(|p| p.n == m && p.fill == fill)
            .map(|p| p.verdict)
    };
    let judged = verdict_at(n).is_some_and(Verdict::is_judged)
        && verdict_at(n + 1).is_some_and(Verdict::is_judged);
    let held = verdict_at(n) == Some(Verdict::Inline)
        && verdict_at(n + 1).is_some_and(Verdict::is_over)
        && unit_held != Some(false);
    // The threshold in the expected unit (the n itself without one).
    let measured = if results.threshold.exact {
        results.threshold.last_inline.map(|t| match settings.unit {
            Some(unit) => size_of(t, fill, unit),
            None => t,
        })
    } else {
        None
    };
    results.check = Some(CheckRecord {
        expect: settings.expect,
        unit: settings.unit,
        unit_held,
        unit_at,
        unit_note,
        held,
        judged,
        margin: settings.margin,
        measured,
        note,
        // A cap in a unit the client was just shown not to count in would be a guess.
        suggested_cap: measured
            .filter(|_| unit_held != Some(false))
            .map(|t| suggested_cap(t, settings.margin)),
    });
    publish(&driver, &results, &mut progress)?;
    let verdict = if results.interrupted {
        Exit::Interrupted
    } else if !judged {
        Exit::Precondition
    } else {
        Exit::from_held(held)
    };
    Ok(progress.finish(verdict))
}

/// Why a bisection stopped, when it did not pin the threshold.
fn stopped(end: BisectEnd) -> Option<String> {
    match end {
        BisectEnd::Pinned => None,
        stopped => Some(stopped.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_the_margin() {
        assert_eq!(suggested_cap(50_000, 0.2), 40_000);
        assert_eq!(suggested_cap(50_000, 0.0), 50_000);
        assert_eq!(suggested_cap(12_345, 0.1), 11_110);
    }

    #[test]
    fn the_cap_is_floored_to_a_whole_unit_and_never_over_the_threshold() {
        // 100 * 0.7 is 70.00000000000001 in floating point, 0.3 of 10 is 2.9999999999999996.
        assert_eq!(suggested_cap(100, 0.3), 70);
        assert_eq!(suggested_cap(10, 0.7), 3);
        assert_eq!(suggested_cap(7, 0.5), 3);
        for t in [1, 99, 50_000, 9_999_999] {
            for m in [0.0, 0.01, 0.2, 0.5, 0.99] {
                assert!(suggested_cap(t, m) <= t, "{t} {m}");
            }
        }
    }
}
