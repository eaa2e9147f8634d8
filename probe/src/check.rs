//! `probe check`: is a client's threshold still where it was? One command per version bump.
//!
//! It runs `--expect N` and `N+1`: N must come back inline and N+1 saved or truncated. When the
//! threshold moved, it goes on to find the new one (doubling up, or bisecting down) so the report
//! says where it went, and the suggested reply cap follows the threshold actually measured.

use crate::bracket::{
    bisect, print_results, progress_line, render, write_results, ClientSettings, Driver,
    Interrupted, Results, Verdict,
};
use crate::emit::MAX_N;
use report::{Exit, Timestamp};
use serde_json::json;

/// What `check` takes.
#[derive(Debug, Clone)]
pub struct CheckSettings {
    pub expect: u64,
    /// The fraction under the threshold the suggested cap keeps (0.2 for 20%).
    pub margin: f64,
    pub client: ClientSettings,
}

/// A cap that stays `margin` under `threshold` (50000 with 0.2 gives 40000).
pub fn suggested_cap(threshold: u64, margin: f64) -> u64 {
    // Round the product to a whole unit before flooring, so 50000 * 0.8 is 40000 and not 39999
    // from floating-point dust.
    ((threshold as f64 * (1.0 - margin)) * 1e6).round() as u64 / 1_000_000
}

/// `probe check`: 0 when the threshold held, 1 when it moved, 4 when the client gave no verdict.
pub fn run_check(settings: &CheckSettings) -> anyhow::Result<Exit> {
    report::interrupt::install();
    let started = Timestamp::now();
    let n = settings.expect;
    let mut driver = Driver::new(&settings.client)?;
    let quiet = settings.client.output_format() == report::Format::Json;
    let mut progress = report::progress::Progress::new(2, quiet);
    let mut note = None;
    let outcome: anyhow::Result<()> = (|| {
        let run = |driver: &mut Driver,
                   n: u64,
                   progress: &mut report::progress::Progress|
         -> anyhow::Result<Verdict> {
            let p = progress.during(&format!("n={n}"), || driver.run_point(n))?;
            progress.finished(&progress_line(&p));
            Ok(p.verdict)
        };
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
                    let v = run(&mut driver, hi, &mut progress)?;
                    if v.is_over() {
                        note = bisect(&mut driver, lo, hi, &mut progress)?.err();
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
                    let v = run(&mut driver, lo, &mut progress)?;
                    if v == Verdict::Inline {
                        note = bisect(&mut driver, lo, hi, &mut progress)?.err();
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
        Ok(())
    })();
    progress.clear();
    let interrupted = match outcome {
        Ok(()) => false,
        Err(e) if e.is::<Interrupted>() => true,
        Err(e) => return Err(e),
    };
    let mut results = Results::new("check", &driver, started);
    results.interrupted = interrupted;
    results.complete = !interrupted;
    let verdict_at = |m: u64| results.points.iter().find(|p| p.n == m).map(|p| p.verdict);
    let judged = matches!(
        verdict_at(n),
        Some(Verdict::Inline | Verdict::Saved | Verdict::Truncated)
    ) && matches!(
        verdict_at(n + 1),
        Some(Verdict::Inline | Verdict::Saved | Verdict::Truncated)
    );
    let held =
        verdict_at(n) == Some(Verdict::Inline) && verdict_at(n + 1).is_some_and(Verdict::is_over);
    let measured = if results.threshold.exact {
        results.threshold.last_inline
    } else {
        None
    };
    let cap = measured.map(|t| suggested_cap(t, settings.margin));
    results.check = Some(json!({
        "expect": n,
        "held": held,
        "judged": judged,
        "measured": measured,
        "margin": settings.margin,
        "suggested_cap": cap,
        "note": note,
    }));
    let mut text = render(&results);
    if !judged {
        text.push_str(&format!(
            "check: no verdict at {n} and {}: the client could not be judged\n",
            n + 1
        ));
    } else if held {
        text.push_str(&format!(
            "check: held, inline up to {n}, not from {}\n",
            n + 1
        ));
    } else {
        text.push_str(&format!(
            "check: MOVED, expected inline up to {n}; now {}\n",
            results.threshold.text
        ));
    }
    if let Some(note) = &note {
        text.push_str(&format!("note: {}\n", report::escape::text(note)));
    }
    if let (Some(t), Some(cap)) = (measured, cap) {
        text.push_str(&format!(
            "suggested cap: {cap} units ({t} less {}%)\n",
            (settings.margin * 100.0).round()
        ));
    }
    write_results(&driver.settings().out, &results, &text)?;
    print_results(&settings.client, &results, &text)?;
    Ok(if interrupted {
        Exit::Interrupted
    } else if !judged {
        Exit::Precondition
    } else {
        Exit::from_held(held)
    })
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
}
