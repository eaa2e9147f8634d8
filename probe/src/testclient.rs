//! `probe test-client`: a small MCP client with a known inline limit, in the ways real clients
//! behave.
//!
//! It exists so the driver can be tried and tested end to end without installing an agent CLI:
//! `probe bracket --client 'probe test-client --limit 50000 --mcp-config {mcp_config} --n {n}'`
//! finds 50000, exactly as it does for Claude Code. Its default mode is a client that never
//! truncates: a result over the limit is saved to a file and replaced by a message naming it.
//! The other modes are the clients the driver must judge rightly too: one that cuts the text at
//! its limit, one that keeps head and tail with a note where the middle was, one that substitutes
//! text of the same length, one that repeats a chunk in place of another (the last two leave the
//! length exact, so only a comparison finds them), one that answers without calling the tool,
//! one that hangs.
//!
//! With `--calls K` it asks for K results in one turn (n split over them as a driver splits a
//! turn's total) and prints each as a JSON line with its `text`; `--turn-budget B` then plays a
//! client with a budget for all results of a turn together: once their sum (in UTF-16 units)
//! is over B, the result that crosses it keeps what fits and gets a note, and the ones after it
//! are the note alone.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use cmdline::Exit;

use crate::client::{self, CallSettings, Implementation};
use crate::units::Measure;
use crate::Failure;
use mcp::emit::utf16_len;

/// How the test client hands a result on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Mode {
    /// The text when it fits under the limit; over it, the text is saved to a file and a spill
    /// message is printed instead.
    Spill,
    /// The first LIMIT UTF-16 units of the text, whatever its size (a client that truncates).
    Cut,
    /// Over LIMIT units: the first and last LIMIT/2 units with a note where the middle was
    /// (`... N tokens truncated ...`), as one real agent client does.
    CutMiddle,
    /// Over LIMIT units: 100 units from LIMIT/2 replaced by `?`s, the length unchanged.
    Substitute,
    /// Over LIMIT units: the 100 units from LIMIT/2 written again in place of the next 100, the
    /// length unchanged.
    Repeat,
    /// Answers without calling the tool: prints a line and exits 0.
    Never,
    /// Hangs without calling the tool, until it is killed or interrupted.
    Hang,
}

/// What `test-client` takes.
#[derive(Debug, Clone)]
pub(crate) struct TestClientSettings {
    pub mcp_config: PathBuf,
    pub n: u64,
    pub limit: u64,
    /// What the limit counts: UTF-16 units, or bytes, code points, lines, estimated tokens. The
    /// spill mode decides in it; the changing modes decide in it and cut at LIMIT UTF-16 units.
    pub limit_unit: Measure,
    /// The fill asked for.
    pub fill: mcp::emit::Fill,
    pub saved_dir: Option<PathBuf>,
    pub mode: Mode,
    /// The line printed for a saved result, instead of the default that names the file.
    pub spill_message: Option<String>,
    /// Who the client says it is in MCP `initialize`.
    pub client_info: Implementation,
    /// How long to wait before starting, so a driver's progress has something to show.
    pub delay: Duration,
    /// The results asked for in one turn (1: one result, printed as it is).
    pub calls: u64,
    /// The most UTF-16 units all results of one turn may hold together (none: no budget).
    pub turn_budget: Option<u64>,
}

/// The note that takes the place of what a turn's budget left out.
fn budget_note(budget: u64) -> String {
    format!("\n[... tool results over this turn's budget of {budget} units omitted ...]")
}

/// What each result of a turn becomes under `budget`: whole while the sum fits, then cut to
/// what is left with the note, then the note alone.
fn apply_budget(texts: Vec<String>, budget: Option<u64>) -> Vec<String> {
    let Some(budget) = budget else {
        return texts;
    };
    let mut used = 0u64;
    texts
        .into_iter()
        .map(|text| {
            let units = utf16_len(&text);
            let left = budget.saturating_sub(used);
            used = used.saturating_add(units);
            if units <= left {
                text
            } else {
                format!("{}{}", cut(&text, left), budget_note(budget))
            }
        })
        .collect()
}

/// The first server of an MCP config, as a command line.
pub(crate) fn first_server(config: &Value) -> Option<Vec<String>> {
    let (_, server) = config["mcpServers"].as_object()?.iter().next()?;
    let mut argv = vec![server["command"].as_str()?.to_string()];
    for arg in server["args"].as_array().into_iter().flatten() {
        argv.push(arg.as_str()?.to_string());
    }
    Some(argv)
}

/// The longest start of `text` that is at most `limit` UTF-16 units, never half a pair.
fn cut(text: &str, limit: u64) -> &str {
    let mut units = 0u64;
    for (i, c) in text.char_indices() {
        units += c.len_utf16() as u64;
        if units > limit {
            return &text[..i];
        }
    }
    text
}

/// The byte where UTF-16 unit `units` of `text` begins, moved one unit back if it falls inside
/// a surrogate pair.
fn at_unit(text: &str, units: u64) -> usize {
    cut(text, units).len()
}

/// What the changing modes hand on for a `text` over `limit`; `None` for the other modes.
fn change(mode: Mode, text: &str, limit: u64) -> Option<String> {
    let half = limit / 2;
    let total = utf16_len(text);
    match mode {
        Mode::CutMiddle => {
            let head = &text[..at_unit(text, half)];
            let tail_from = at_unit(text, total - half);
            let removed = total - utf16_len(head) - utf16_len(&text[tail_from..]);
            Some(format!(
                "{head}\n\n... {} tokens truncated ...\n\n{}",
                removed.div_ceil(4),
                &text[tail_from..]
            ))
        }
        Mode::Substitute => {
            let (i, j) = (at_unit(text, half), at_unit(text, half + 100));
            let same = "?".repeat(utf16_len(&text[i..j]) as usize);
            Some(format!("{}{same}{}", &text[..i], &text[j..]))
        }
        Mode::Repeat => {
            let (i, j) = (at_unit(text, half), at_unit(text, half + 100));
            let k = at_unit(text, half + 100 + utf16_len(&text[i..j]));
            Some(format!("{}{}{}", &text[..j], &text[i..j], &text[k..]))
        }
        Mode::Spill | Mode::Cut | Mode::Never | Mode::Hang => None,
    }
}

/// Waits `delay` (`None`: for ever), or until an interrupt; `false` when interrupted.
fn wait(delay: Option<Duration>) -> bool {
    let until = delay.and_then(|d| Instant::now().checked_add(d));
    loop {
        if files::interrupt::requested() {
            return false;
        }
        let step = Duration::from_millis(50);
        match until {
            Some(until) if Instant::now() >= until => return true,
            Some(until) => std::thread::sleep((until - Instant::now()).min(step)),
            None => std::thread::sleep(step),
        }
    }
}

/// Calls `emit` and hands the text on as `s.mode` says.
pub(crate) fn run_test_client(s: &TestClientSettings) -> Result<Exit> {
    // Bad input (a folder, a device, a missing file) is a usage error, exit 2; an interrupt
    // while waiting on a FIFO still ends with 130, as the flag decides that first.
    let bytes = files::input::read(&s.mcp_config)
        .map_err(|e| Failure::Usage(format!("{}: {e}", files::escape::path(&s.mcp_config))))?;
    let text = String::from_utf8_lossy(&bytes);
    let config: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{}: not JSON: {e}", s.mcp_config.display())))?;
    let server = first_server(&config).ok_or_else(|| {
        Failure::Usage(format!(
            "{}: no server with a `command` under `mcpServers`",
            s.mcp_config.display()
        ))
    })?;
    if !wait(Some(s.delay)) {
        return Ok(Exit::Interrupted);
    }
    match s.mode {
        Mode::Never => {
            cmdline::outln!("answered without the tool")?;
            return Ok(Exit::Ok);
        }
        Mode::Hang => {
            wait(None);
            return Ok(Exit::Interrupted);
        }
        Mode::Spill | Mode::Cut | Mode::CutMiddle | Mode::Substitute | Mode::Repeat => {}
    }
    let call = |n: u64| {
        client::call(&CallSettings {
            tool: "emit".into(),
            arguments: json!({ "n": n, "fill": s.fill.to_string() }),
            cap: None,
            timeout: Duration::from_secs(60),
            json: false,
            server: server.clone(),
            client_info: s.client_info.clone(),
        })
    };
    if s.calls > 1 {
        let ns = crate::bracket::split(s.n, s.calls);
        let mut texts = Vec::new();
        for &n in &ns {
            texts.push(call(n)?.texts.concat());
        }
        for (n, text) in ns.iter().zip(apply_budget(texts, s.turn_budget)) {
            cmdline::outln!("{}", json!({"n": n, "text": text}))?;
        }
        return Ok(Exit::Ok);
    }
    let report = call(s.n)?;
    let text = report.texts.concat();
    if s.mode == Mode::Cut {
        cmdline::outln!("{}", cut(&text, s.limit))?;
        return Ok(Exit::Ok);
    }
    let over = report.text.get(s.limit_unit) > s.limit;
    if over {
        if let Some(changed) = change(s.mode, &text, s.limit) {
            cmdline::outln!("{changed}")?;
            return Ok(Exit::Ok);
        }
    }
    if !over {
        cmdline::outln!("{text}")?;
        return Ok(Exit::Ok);
    }
    let dir = s.saved_dir.clone().unwrap_or_else(std::env::temp_dir);
    let file = tempfile::Builder::new()
        .prefix("probe-test-client-")
        .suffix(".txt")
        .tempfile_in(&dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    // Through the handle made with O_EXCL, never by name: nothing raced in is written through.
    std::io::Write::write_all(&mut file.as_file(), text.as_bytes())?;
    let (_, path) = file.keep().context("keeping the saved result")?;
    match &s.spill_message {
        Some(message) => cmdline::outln!("{message}")?,
        None => cmdline::outln!(
            "Error: result ({} {}) exceeds this client's limit of {}. Output has been saved to {}",
            report.text.get(s.limit_unit),
            s.limit_unit.words(),
            s.limit,
            path.display()
        )?,
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_server_of_a_config_is_a_command_line() {
        let config = json!({"mcpServers": {"probe": {"command": "/bin/probe", "args": ["serve", "--log", "x"]}}});
        assert_eq!(
            first_server(&config).unwrap(),
            ["/bin/probe", "serve", "--log", "x"]
        );
        assert_eq!(first_server(&json!({"mcpServers": {}})), None);
        assert_eq!(first_server(&json!({})), None);
    }

    #[test]
    fn a_turns_budget_keeps_results_whole_while_their_sum_fits_then_cuts_with_a_note() {
        let texts = vec!["aaaa".to_string(), "bbbb".into(), "cccc".into()];
        assert_eq!(apply_budget(texts.clone(), None), texts);
        assert_eq!(apply_budget(texts.clone(), Some(12)), texts);
        let note = budget_note(9);
        assert_eq!(
            apply_budget(texts, Some(9)),
            ["aaaa".to_string(), "bbbb".into(), format!("c{note}")]
        );
        let note = budget_note(3);
        assert_eq!(
            apply_budget(vec!["aaaa".into(), "bb".into()], Some(3)),
            [format!("aaa{note}"), note.clone()]
        );
    }

    #[test]
    fn a_cut_keeps_at_most_the_limit_in_utf16_units_and_never_half_a_pair() {
        assert_eq!(cut("abcdef", 4), "abcd");
        assert_eq!(cut("abc", 10), "abc");
        // Each of these is a surrogate pair: two units.
        assert_eq!(cut("\u{1F600}\u{1F600}", 3), "\u{1F600}");
        assert_eq!(cut("\u{1F600}\u{1F600}", 4), "\u{1F600}\u{1F600}");
        assert_eq!(cut("x", 0), "");
    }
}
