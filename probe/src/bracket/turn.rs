//! A point of the per-turn budget: one turn in which the model asks for k results at once, each
//! with its own n, judged one by one with the exact judge, and the turn's verdict read off them.
//!
//! A client may limit the total of all tool results in one turn apart from each result's size
//! (the seed measured 200,000 characters across results next to 50,000 per result). A turn point
//! names the total T; the k calls split it ([`split`]), so every result stays far below the
//! per-result limit and only the total can be over. The server gives each call its own nonce,
//! so each result is rebuilt and compared exactly ([`super::judge::judge_text`]); results are
//! paired with the calls by the nonce they carry, else by n in order. The turn is `inline` only
//! when every result came back exactly; otherwise its verdict and shape are those of the first
//! result (in call order) that did not.

use super::judge::{judge_text, Judgment, Verdict};
use super::results::TurnResult;
use mcp::server::LoggedCall;
use regex::Regex;
use report::record::RunRecord;
use report::text::clip;
use standin::text_of;

/// The most calls one turn may ask for (the stand-in's bound on a prompt).
pub(crate) const MAX_CALLS: u64 = standin::MAX_CALLS as u64;

/// `total` split over `calls` results, each n different and the larger first, as evenly as
/// that allows: 100 over 4 is 27, 26, 24, 23. Every call must differ, since clients stop a
/// turn that repeats a call with identical arguments (Qwen Code's and Gemini CLI's loop
/// detection); the sum is always `total`, so a bisection over it is exact. A total too small to
/// give every call its own n (under calls·(calls-1)/2) is split as evenly as units allow.
pub(crate) fn split(total: u64, calls: u64) -> Vec<u64> {
    let calls = calls.max(1);
    let steps = calls * (calls - 1) / 2;
    if total < steps {
        let (each, more) = (total / calls, total % calls);
        return (0..calls).map(|i| each + u64::from(i < more)).collect();
    }
    // n_i = base + i, and the remainder one each on the largest: still all different.
    let (base, more) = ((total - steps) / calls, (total - steps) % calls);
    (0..calls)
        .rev()
        .map(|i| base + i + u64::from(i >= calls - more))
        .collect()
}

/// One result as the client handed it on: the n of the call it answers when known, its text,
/// and its size in UTF-16 units.
#[derive(Debug, Clone)]
pub(crate) struct Handed {
    pub n: Option<u64>,
    pub text: String,
    pub units: u64,
}

impl Handed {
    /// The results a stand-in received, in order, from its `tool_result` events.
    pub(crate) fn from_events(events: &[standin::ModelEvent]) -> Vec<Handed> {
        events
            .iter()
            .filter_map(|e| match e {
                standin::ModelEvent::ToolResult {
                    n, content, units, ..
                } => Some(Handed {
                    n: *n,
                    text: text_of(content),
                    units: *units,
                }),
                _ => None,
            })
            .collect()
    }

    /// The results a command client printed, one JSON object per line with the result's
    /// `text` (as `probe test-client --calls` prints them); `None` when its output is not
    /// that, and each call is then judged against the whole output.
    pub(crate) fn from_output(output: &str) -> Option<Vec<Handed>> {
        let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return None;
        }
        lines
            .into_iter()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).ok()?;
                let text = value["text"].as_str()?.to_string();
                Some(Handed {
                    n: value["n"].as_u64(),
                    units: mcp::emit::utf16_len(&text),
                    text,
                })
            })
            .collect()
    }
}

/// Pairs each call with the result that answers it: the one carrying its nonce, else the next
/// unpaired one for its n (or, when n is unknown, the next unpaired one).
fn pair<'h>(calls: &[LoggedCall], handed: &'h [Handed]) -> Vec<Option<&'h Handed>> {
    let mut used = vec![false; handed.len()];
    let mut take = |pick: &dyn Fn(&Handed) -> bool| {
        let k = (0..handed.len()).find(|&k| !used[k] && pick(&handed[k]))?;
        used[k] = true;
        Some(&handed[k])
    };
    calls
        .iter()
        .map(|call| {
            let nonce = format!("nonce={} ", call.nonce);
            take(&|h| h.text.contains(&nonce))
                .or_else(|| take(&|h| h.n == Some(call.n)))
                .or_else(|| take(&|h| h.n.is_none()))
        })
        .collect()
}

/// The judgment of one turn whose calls asked for `ns`: each result judged exactly, and the
/// turn's verdict. `handed` is what came back (`None`: judge each call against `whole`).
pub(crate) fn judge_turn(
    record: &RunRecord,
    ns: &[u64],
    calls: &[LoggedCall],
    handed: Option<&[Handed]>,
    whole: &str,
    spill: &[Regex],
) -> (Judgment, Vec<TurnResult>) {
    let shared;
    let handed = match handed {
        Some(h) => h,
        None => {
            shared = vec![
                Handed {
                    n: None,
                    text: whole.to_string(),
                    units: mcp::emit::utf16_len(whole),
                };
                calls.len()
            ];
            &shared
        }
    };
    let paired = pair(calls, handed);
    let mut results: Vec<TurnResult> = calls
        .iter()
        .zip(paired)
        .map(|(call, got)| match got {
            Some(got) => {
                let mut j = judge_text(call, &got.text, record, spill);
                if j.verdict == Verdict::Saved || j.saved_path.is_some() {
                    j.message = Some(clip(got.text.trim(), 300));
                }
                TurnResult::of(call.n, Some(&call.nonce), j, Some(got.units))
            }
            None => TurnResult::of(
                call.n,
                Some(&call.nonce),
                Judgment::of(
                    Verdict::Error,
                    Some("the tool ran but its result did not come back".into()),
                ),
                None,
            ),
        })
        .collect();
    // The calls the client did not make, by the n asked for.
    let mut made: Vec<u64> = calls.iter().map(|c| c.n).collect();
    for &n in ns {
        match made.iter().position(|&m| m == n) {
            Some(k) => {
                made.remove(k);
            }
            None => results.push(TurnResult::of(
                n,
                None,
                Judgment::of(
                    Verdict::NotCalled,
                    Some("the client made no call for it".into()),
                ),
                None,
            )),
        }
    }
    (verdict_of(&results, ns.len()), results)
}

/// The turn's verdict from its results: the first over one, else inline when all `asked` came
/// back exactly, else not called (some calls never made) or error.
fn verdict_of(results: &[TurnResult], asked: usize) -> Judgment {
    let k = results.len();
    let said = |i: usize, r: &TurnResult| {
        let what = r.message.as_deref().unwrap_or("");
        format!("result {} of {k} (n={}): {what}", i + 1, r.n)
    };
    if let Some((i, r)) = results
        .iter()
        .enumerate()
        .find(|(_, r)| r.verdict.is_over())
    {
        let over = results.iter().filter(|r| r.verdict.is_over()).count();
        return Judgment {
            verdict: r.verdict,
            message: Some(format!("{over} of {k} results over; {}", said(i, r))),
            saved_path: r.saved_path.clone(),
            shape: r.shape.clone(),
        };
    }
    let inline = results
        .iter()
        .filter(|r| r.verdict == Verdict::Inline)
        .count();
    if inline == asked && inline == k {
        return Judgment::of(Verdict::Inline, None);
    }
    let not_called = results
        .iter()
        .filter(|r| r.verdict == Verdict::NotCalled)
        .count();
    let first = results
        .iter()
        .enumerate()
        .find(|(_, r)| r.verdict != Verdict::Inline);
    let why = first.map(|(i, r)| said(i, r)).unwrap_or_default();
    if not_called > 0 && results.iter().all(|r| r.verdict != Verdict::Error) {
        Judgment::of(
            Verdict::NotCalled,
            Some(format!(
                "the client made {} of {asked} calls in one turn",
                asked - not_called
            )),
        )
    } else {
        Judgment::of(Verdict::Error, Some(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::emit::{emit_with_nonce, EmitArgs, Fill};
    use std::path::PathBuf;

    fn record() -> RunRecord {
        let mut r = RunRecord::not_yet_run(vec!["client".into()], PathBuf::new(), PathBuf::new());
        r.run.ended = runner::Ended::exited(0);
        r
    }

    fn call(n: u64, nonce: &str) -> LoggedCall {
        LoggedCall {
            n,
            fill: Fill::Ascii,
            blocks: 1,
            nonce: nonce.into(),
            units: n,
            bytes: n,
            start_marker: true,
            end_marker: true,
        }
    }

    fn sent(n: u64, nonce: &str) -> String {
        let args = EmitArgs {
            n,
            fill: Fill::Ascii,
            blocks: 1,
        };
        emit_with_nonce(args, nonce).blocks.concat()
    }

    fn handed(text: String) -> Handed {
        Handed {
            n: None,
            units: mcp::emit::utf16_len(&text),
            text,
        }
    }

    #[test]
    fn a_total_splits_into_calls_that_sum_to_it_the_larger_first() {
        assert_eq!(split(100, 4), [27, 26, 24, 23]);
        assert_eq!(split(10, 3), [5, 3, 2]);
        assert_eq!(split(200_001, 4), [50_002, 50_001, 50_000, 49_998]);
        assert_eq!(split(5, 1), [5]);
        // Too small for every call to differ: as even as units allow.
        assert_eq!(split(2, 3), [1, 1, 0]);
        for (t, k) in [
            (0, 3),
            (7, 7),
            (21, 7),
            (1_000_003, 20),
            (190, 20),
            (12_345, 1000),
        ] {
            let s = split(t, k);
            assert_eq!((s.len() as u64, s.iter().sum::<u64>()), (k, t), "{t} {k}");
            if t >= k * (k - 1) / 2 {
                assert!(s.windows(2).all(|w| w[0] > w[1]), "{t} {k}: {s:?}");
            }
        }
    }

    #[test]
    fn a_turn_is_inline_only_when_every_result_came_back_exactly_paired_by_nonce() {
        let calls = [call(300, "aaaa0001"), call(300, "aaaa0002")];
        // Handed back in the other order: the nonce pairs them.
        let back = [handed(sent(300, "aaaa0002")), handed(sent(300, "aaaa0001"))];
        let (j, results) = judge_turn(&record(), &[300, 300], &calls, Some(&back), "", &[]);
        assert_eq!(j.verdict, Verdict::Inline);
        assert!(results.iter().all(|r| r.verdict == Verdict::Inline));
        // The second cut at its end with a note: the turn is truncated, and says which.
        let whole = sent(300, "aaaa0002");
        let cut = format!("{}[over the turn's budget]", &whole[..100]);
        let back = [handed(sent(300, "aaaa0001")), handed(cut)];
        let (j, results) = judge_turn(&record(), &[300, 300], &calls, Some(&back), "", &[]);
        assert_eq!(j.verdict, Verdict::Truncated, "{:?}", j.message);
        let m = j.message.unwrap();
        assert!(
            m.starts_with("1 of 2 results over; result 2 of 2 (n=300)"),
            "{m}"
        );
        assert_eq!(j.shape.unwrap().first_difference, 100);
        assert_eq!(results[0].verdict, Verdict::Inline);
    }

    #[test]
    fn a_call_never_made_or_a_result_never_handed_back_is_no_inline_turn() {
        let calls = [call(300, "bbbb0001")];
        let back = [handed(sent(300, "bbbb0001"))];
        let (j, results) = judge_turn(&record(), &[300, 300], &calls, Some(&back), "", &[]);
        assert_eq!(j.verdict, Verdict::NotCalled, "{:?}", j.message);
        assert_eq!(
            j.message.as_deref(),
            Some("the client made 1 of 2 calls in one turn")
        );
        assert_eq!(results.len(), 2);
        let calls = [call(300, "bbbb0001"), call(300, "bbbb0002")];
        let (j, _) = judge_turn(&record(), &[300, 300], &calls, Some(&back), "", &[]);
        assert_eq!(j.verdict, Verdict::Error, "{:?}", j.message);
        // Without results of its own, each call is judged against the whole output.
        let both = format!("{}\n{}", sent(300, "bbbb0001"), sent(300, "bbbb0002"));
        let (j, _) = judge_turn(&record(), &[300, 300], &calls, None, &both, &[]);
        assert_eq!(j.verdict, Verdict::Inline);
    }

    #[test]
    fn a_command_clients_results_are_json_lines_with_their_text() {
        let got = Handed::from_output("{\"n\": 3, \"text\": \"abc\"}\n\n{\"text\": \"\\u00e9\"}\n")
            .unwrap();
        assert_eq!(
            (got[0].n, got[0].text.as_str(), got[0].units),
            (Some(3), "abc", 3)
        );
        assert_eq!((got[1].n, got[1].text.as_str()), (None, "é"));
        assert!(Handed::from_output("plain text").is_none());
        assert!(Handed::from_output("").is_none());
    }
}
