//! How long each suite run may take: the operator's `--timeout`, else the spec's, else derived
//! from the baseline (max(20s, 5x), as cargo-mutants derives it), and the same for builds.

use std::time::Duration;

use runner::DEFAULT_TIMEOUT;

use crate::spec::Suite;

/// The floor of a derived timeout: below it, machine noise (a cold cache, a busy CI runner)
/// would turn slow-but-passing suites into hangs.
pub(crate) const TIMEOUT_FLOOR: Duration = Duration::from_secs(20);
/// A derived timeout is this many baseline durations (as cargo-mutants does).
pub(crate) const TIMEOUT_FACTOR: u32 = 5;

/// Where the timeout a mutant gets under a suite comes from, in order of precedence.
///
/// `--timeout` wins because it is the operator's word for this run; the spec's `timeout` is the
/// author's word for the suite; the derived one is a guess from the baseline.
pub(crate) fn mutant_timeout(
    cli: Option<Duration>,
    suite: &Suite,
    baseline: Duration,
) -> (Duration, String) {
    if let Some(t) = cli {
        return (t, "--timeout".into());
    }
    if let Some(t) = suite.timeout {
        return (t, "the spec's suite timeout".into());
    }
    let derived = (baseline * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR);
    (
        Duration::from_secs(derived.as_secs_f64().ceil() as u64),
        format!(
            "max({}s, {TIMEOUT_FACTOR}x baseline)",
            TIMEOUT_FLOOR.as_secs()
        ),
    )
}

/// The timeout of a run of a mutant's covering tests alone, when the suite's own was derived:
/// derived the same way from what those tests took in the coverage run (the run's start-up
/// included), never past the whole suite's. A hang in a few quick tests is then called after
/// seconds, not after the whole suite's five baselines (mutmut bounds each mutant by its
/// tests' own times too); a run slowed past it by the machine is what the floor guards.
pub(crate) fn covering_timeout(whole: Duration, estimate: Duration) -> Duration {
    // The times come from files the suite's own processes could write: no overflow.
    let derived = estimate
        .checked_mul(TIMEOUT_FACTOR)
        .unwrap_or(Duration::MAX)
        .max(TIMEOUT_FLOOR);
    Duration::from_secs(derived.as_secs_f64().ceil() as u64).min(whole)
}

/// The timeout the baseline itself runs with: the same precedence, with the suites' default 30-minute
/// default in place of the derived one.
pub(crate) fn baseline_timeout(cli: Option<Duration>, suite: &Suite) -> Duration {
    cli.or(suite.timeout).unwrap_or(DEFAULT_TIMEOUT)
}

/// The timeout a mutant's `build` step gets: the spec's `build_timeout`, else derived from the
/// baseline's build the way a run's is (`--timeout` is the suite run's, not the build's).
pub(crate) fn mutant_build_timeout(suite: &Suite, baseline_build: Duration) -> Duration {
    if let Some(t) = suite.build_timeout {
        return t;
    }
    let derived = (baseline_build * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR);
    Duration::from_secs(derived.as_secs_f64().ceil() as u64)
}

/// The timeout the baseline's `build` step runs with: the spec's, else the suites' default 30 minutes.
pub(crate) fn baseline_build_timeout(suite: &Suite) -> Duration {
    suite.build_timeout.unwrap_or(DEFAULT_TIMEOUT)
}

/// The two timeouts one suite run gets.
pub(crate) use candidate::suite::Timeouts;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn suite(timeout: Option<Duration>) -> Suite {
        Suite {
            build: None,
            name: "bus".into(),
            command: candidate::suite::Command::Run("true".into()),
            timeout,
            build_timeout: None,
            env: BTreeMap::new(),
            results: Default::default(),
            inputs: Vec::new(),
            fail_fast: true,
            select: None,
            floor: None,
            watch: None,
        }
    }

    #[test]
    fn timeouts_follow_cli_then_spec_then_baseline() {
        let s = Duration::from_secs;
        assert_eq!(
            mutant_timeout(Some(s(3)), &suite(Some(s(9))), s(100)).0,
            s(3)
        );
        assert_eq!(mutant_timeout(None, &suite(Some(s(9))), s(100)).0, s(9));
        assert_eq!(mutant_timeout(None, &suite(None), s(100)).0, s(500));
        // A covering run: five times its tests' time, at least the floor, at most the whole's.
        assert_eq!(covering_timeout(s(500), s(10)), s(50));
        assert_eq!(covering_timeout(s(500), Duration::from_millis(900)), s(20));
        assert_eq!(covering_timeout(s(40), s(10)), s(40));
        assert_eq!(
            covering_timeout(s(500), Duration::from_millis(10_100)),
            s(51)
        );
        assert_eq!(
            mutant_timeout(None, &suite(None), Duration::from_millis(300)).0,
            TIMEOUT_FLOOR
        );
        assert_eq!(baseline_timeout(None, &suite(None)), DEFAULT_TIMEOUT);
    }

    #[test]
    fn build_timeouts_follow_spec_then_the_baseline_build() {
        let s = Duration::from_secs;
        let mut with_build = suite(None);
        with_build.build = Some("true".into());
        assert_eq!(mutant_build_timeout(&with_build, s(100)), s(500));
        assert_eq!(
            mutant_build_timeout(&with_build, Duration::from_millis(300)),
            TIMEOUT_FLOOR
        );
        assert_eq!(baseline_build_timeout(&with_build), DEFAULT_TIMEOUT);
        with_build.build_timeout = Some(s(7));
        assert_eq!(mutant_build_timeout(&with_build, s(100)), s(7));
        assert_eq!(baseline_build_timeout(&with_build), s(7));
    }
}
