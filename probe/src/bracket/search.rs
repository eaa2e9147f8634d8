//! Which n to run: the plan (`--points`, or N-S, N and N+S for `--around`, or `--bisect
//! LO..HI`), each point reported to an observer, and the halving between a bisection's ends.
//!
//! Bisection steers only by `inline` (the threshold is above) and saved or truncated (it is at
//! or below); a midpoint that gives anything else (`error`, `not called`) stops the search where
//! it is, and the record says why, because guessing a side would report a threshold that was
//! never measured.

use super::events::{Observer, Step};
use super::results::BisectRecord;
use super::{Driver, Verdict};
use mcp::emit::MAX_N;
use std::fmt;

/// Which n to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    Points(Vec<u64>),
    /// LO is expected inline and HI not; halve the gap until it is one.
    Bisect {
        lo: u64,
        hi: u64,
    },
}

impl Plan {
    /// How many runs the plan takes at most (for the progress count).
    pub(crate) fn runs(&self) -> usize {
        match self {
            Plan::Points(p) => p.len(),
            Plan::Bisect { lo, hi } => 2 + midpoints(*lo, *hi),
        }
    }
}

/// How many midpoints a bisection between `lo` and `hi` runs at most: ceil(log2(hi - lo)).
pub(crate) fn midpoints(lo: u64, hi: u64) -> usize {
    let gap = hi.saturating_sub(lo);
    if gap <= 1 {
        0
    } else {
        (64 - (gap - 1).leading_zeros()) as usize
    }
}

/// `--around N --step S`: N-S, N and N+S, each a size emit serves.
pub(crate) fn around(n: u64, step: u64) -> Result<Vec<u64>, String> {
    let below = n.checked_sub(step).ok_or_else(|| {
        format!("--around {n} --step {step}: {n}-{step} is below 0; take a smaller step")
    })?;
    let above = n.checked_add(step).filter(|a| *a <= MAX_N).ok_or_else(|| {
        format!("--around {n} --step {step}: {n}+{step} is over the maximum {MAX_N}")
    })?;
    Ok(vec![below, n, above])
}

/// Runs the client at `n`, observed as a point of its own.
pub(crate) fn run_observed(
    driver: &mut Driver,
    n: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<Verdict> {
    let step = Step::Point {
        n,
        calls: driver.calls(),
    };
    Ok(observer.point(step, &mut || driver.run_point(n))?.verdict)
}

/// The next n to run between `lo` (inline) and `hi` (over): their midpoint, or `None` once they
/// are one apart and the threshold is pinned.
pub(crate) fn midpoint(lo: u64, hi: u64) -> Option<u64> {
    (hi - lo > 1).then(|| lo + (hi - lo) / 2)
}

/// Which side of the threshold a verdict puts its n on, if it tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Inline: the threshold is at n or above.
    Below,
    /// Saved or truncated: the threshold is below n.
    Above,
}

impl Side {
    pub(crate) fn of(verdict: Verdict) -> Option<Side> {
        match verdict {
            Verdict::Inline => Some(Side::Below),
            v if v.is_over() => Some(Side::Above),
            _ => None,
        }
    }
}

/// How a bisection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BisectEnd {
    /// LO and HI are one apart: the threshold is exact.
    Pinned,
    /// A midpoint came back with a verdict that tells no side.
    Stopped {
        at: u64,
        verdict: Verdict,
        lo: u64,
        hi: u64,
    },
}

impl fmt::Display for BisectEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BisectEnd::Pinned => f.write_str("pinned"),
            BisectEnd::Stopped {
                at,
                verdict,
                lo,
                hi,
            } => write!(
                f,
                "n={at} came back `{verdict}`, so the bisection stopped between {lo} and {hi}"
            ),
        }
    }
}

/// Bisects between `lo` (inline) and `hi` (over), both already run.
pub(crate) fn bisect(
    driver: &mut Driver,
    mut lo: u64,
    mut hi: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<BisectEnd> {
    observer.plan(midpoints(lo, hi));
    while let Some(mid) = midpoint(lo, hi) {
        let step = Step::Between {
            n: mid,
            lo,
            hi,
            calls: driver.calls(),
        };
        let p = observer.point(step, &mut || driver.run_point(mid))?;
        match Side::of(p.verdict) {
            Some(Side::Below) => lo = mid,
            Some(Side::Above) => hi = mid,
            None => {
                return Ok(BisectEnd::Stopped {
                    at: mid,
                    verdict: p.verdict,
                    lo,
                    hi,
                })
            }
        }
    }
    Ok(BisectEnd::Pinned)
}

/// `--bisect LO..HI`: runs both ends, and bisects when LO came back inline and HI did not.
pub(crate) fn bisect_range(
    driver: &mut Driver,
    lo: u64,
    hi: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<BisectRecord> {
    observer.plan(2);
    let at_lo = run_observed(driver, lo, observer)?;
    let at_hi = run_observed(driver, hi, observer)?;
    let why = if at_lo != Verdict::Inline {
        Some(format!(
            "LO={lo} came back `{at_lo}`, not inline: the threshold is not in {lo}..{hi}"
        ))
    } else if !at_hi.is_over() {
        Some(format!(
            "HI={hi} came back `{at_hi}`, not saved or truncated: the threshold is not in {lo}..{hi}"
        ))
    } else {
        match bisect(driver, lo, hi, observer)? {
            BisectEnd::Pinned => None,
            stopped => Some(stopped.to_string()),
        }
    };
    Ok(BisectRecord {
        held: why.is_none(),
        hi,
        lo,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// --around never yields a point below 0 or over the maximum, whatever N and S are.
        #[test]
        fn around_stays_in_bounds(n in any::<u64>(), step in any::<u64>()) {
            if let Ok(points) = around(n, step) {
                prop_assert_eq!(points, vec![n - step, n, n + step]);
                prop_assert!(n + step <= MAX_N);
            }
        }
    }

    #[test]
    fn around_takes_one_step_either_side_within_bounds() {
        assert_eq!(around(5, 5), Ok(vec![0, 5, 10]));
        assert!(around(5, 6).is_err());
        assert!(around(MAX_N, 1).is_err());
    }

    #[test]
    fn the_midpoint_halves_the_gap_until_it_is_one() {
        assert_eq!(midpoint(100, 200), Some(150));
        assert_eq!(midpoint(100, 103), Some(101));
        assert_eq!(midpoint(100, 102), Some(101));
        assert_eq!(midpoint(100, 101), None, "one apart is pinned");
        assert_eq!(midpoint(0, 10_000_000), Some(5_000_000));
    }

    #[test]
    fn halving_from_any_range_reaches_the_threshold_in_about_log2_steps() {
        // A client inline up to `t`: steer by the side each midpoint falls on.
        for (lo, hi, t) in [
            (100, 5000, 1337),
            (0, 1 << 20, 1),
            (10, 12, 11),
            (10, 12, 10),
        ] {
            let start = (lo, hi);
            let (mut lo, mut hi, mut steps) = (lo, hi, 0);
            while let Some(mid) = midpoint(lo, hi) {
                if mid <= t {
                    lo = mid
                } else {
                    hi = mid
                }
                steps += 1;
            }
            assert_eq!((lo, hi), (t, t + 1));
            assert!(steps <= midpoints(start.0, start.1), "{steps} steps");
        }
    }

    #[test]
    fn only_inline_and_over_verdicts_steer() {
        assert_eq!(Side::of(Verdict::Inline), Some(Side::Below));
        assert_eq!(Side::of(Verdict::Saved), Some(Side::Above));
        assert_eq!(Side::of(Verdict::Truncated), Some(Side::Above));
        assert_eq!(Side::of(Verdict::Error), None);
        assert_eq!(Side::of(Verdict::NotCalled), None);
    }
}
