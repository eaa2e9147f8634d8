//! gatekit's exit codes (0, 1, 2, 4, 70, 74, 130), shared by every tool, and the one policy that
//! maps an error to one: by the typed errors in its chain ([`PreconditionFailed`],
//! [`Interrupted`], [`Bug`]), which the crates below raise without knowing any exit code, and by
//! whether the run had begun to write ([`files::outputs::written`]).
//!
//! A finding (a failed check, a survived mutant, a moved threshold) is not an error: it is an
//! outcome that maps to 1. Errors that stopped the tool from judging at all map to 2 (bad input,
//! met before anything was written or changed), 4 (a precondition such as a red baseline), 74 (an
//! I/O failure after the run began to write: a full disk, git failing mid-run; its reports may
//! be incomplete and say so) or 70 (gatekit's own bug: a broken invariant, a panic).
//!
//! Data goes to stdout through [`print()`] (or [`outln!`](crate::outln)), never `println!`: a
//! reader that goes away early (`gate check ... | head -1`) closes the pipe, and `println!`
//! would panic with "failed printing to stdout". Rust ignores SIGPIPE, so the write fails with
//! `EPIPE` instead. The exit code is the verdict whatever happens to stdout, and every file a
//! run owes is written though nobody reads what it prints: so [`print()`] is the one place a
//! closed stdout is met, and there it is noted ([`stdout_closed`]) and swallowed. No caller
//! sees it as an error; the run goes on, writes its reports and attestation, and ends with
//! the code of its verdict.

use runner::stop::{Bug, Interrupted, PreconditionFailed};

/// What a run of any gatekit tool ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: everything held.
    Ok,
    /// 1: findings: a check failed, a mutant survived, a control was killed, a threshold moved.
    Findings,
    /// 2: bad usage or bad input; nothing was written or changed.
    Usage,
    /// 4: a baseline or precondition failed, so nothing could be judged.
    Precondition,
    /// 70: gatekit's own bug (a broken invariant, a panic); whatever it wrote is suspect.
    Internal,
    /// 74: an I/O failure after the run began to write (a full disk, git failing mid-run);
    /// its reports may be incomplete, and say so.
    Io,
    /// 130: interrupted by SIGINT or SIGTERM, after cleaning up.
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Findings => 1,
            Exit::Usage => 2,
            Exit::Precondition => 4,
            Exit::Internal => 70,
            Exit::Io => 74,
            Exit::Interrupted => 130,
        }
    }

    /// `Ok` when `held`, otherwise `Findings`.
    pub fn from_held(held: bool) -> Exit {
        if held {
            Exit::Ok
        } else {
            Exit::Findings
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(e.code())
    }
}

/// Set once a write to stdout met a closed pipe (or, through [`show`], failed at all):
/// nothing more is written there.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether stdout's reader went away during this run (a write met `EPIPE`). What a tool
/// prints after that is dropped; its files and its exit code are not touched by it.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes `text` to stdout and flushes it. A closed pipe is noted ([`stdout_closed`]) and is
/// not an error: the run goes on to write its files and end with its verdict. Other failures
/// (a full disk behind a redirect) stay errors.
pub fn print(text: &str) -> std::io::Result<()> {
    print_bytes(text.as_bytes())
}

/// [`print()`] for bytes (a man page, a completion script).
pub fn print_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    if stdout_closed() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// Shows on stdout a report whose files a run has already written: there stdout is only a view
/// of them, so no failure to write it (a closed pipe, or a full disk behind a redirect) changes
/// the run's exit code or stops what the run does next. A failure other than a closed pipe is
/// said on stderr, once; nothing more is written to stdout after it.
pub fn show(text: &str) {
    if let Err(e) = print(text) {
        STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        crate::errln!(
            "warning: stdout: {} (the report is in its files; the exit code is its verdict's)",
            one_line(&e)
        );
    }
}

/// `println!` for data on stdout, through [`print()`]: evaluates to `std::io::Result<()>`, so a
/// tool writes `outln!("{x}")?;`; a closed pipe is swallowed there, a full disk is an error.
#[macro_export]
macro_rules! outln {
    () => { $crate::exit::print("\n") };
    ($($arg:tt)*) => { $crate::exit::print(&format!("{}\n", format_args!($($arg)*))) };
}

/// Writes one line to stderr, as `eprintln!` would, but never panics: a closed stderr
/// (`2>&-`, a log pipe whose reader went away) loses the message, not the run.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// What a command line clap refused (or `--help`, `--version`) ends with: help and version go
/// to stdout (exit 0, a closed pipe or not), a usage error to stderr as exit 2. The
/// text quotes the arguments as typed, so control characters in them are shown as escapes:
/// an argument cannot clear the screen or print a line of its own.
pub fn usage(error: clap::Error) -> Exit {
    use std::io::Write as _;
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let safe = usage_text(&error, &args);
    if error.use_stderr() {
        let _ = std::io::stderr().write_all(safe.as_bytes());
        Exit::Usage
    } else {
        let _ = print(&safe);
        Exit::Ok
    }
}

/// clap's text for `error` with every argument it quotes (`args`, or the value after a
/// `--flag=`) written escaped, so an argument's line break cannot pass for one of clap's; the
/// lines clap writes are kept, and any other control character is escaped.
pub fn usage_text(error: &clap::Error, args: &[String]) -> String {
    let mut text = error.to_string();
    // clap quotes a value as typed, or with its ANSI sequences stripped (in its plain text).
    let mut quoted: Vec<String> = args
        .iter()
        .flat_map(|a| [a.as_str(), a.split_once('=').map_or("", |(_, v)| v)])
        .flat_map(|a| [a.to_string(), report::color::strip(a)])
        .filter(|a| a.chars().any(files::escape::is_unsafe))
        .collect();
    quoted.sort_by_key(|a| std::cmp::Reverse(a.len()));
    for arg in quoted {
        text = text.replace(&arg, &files::escape::text(&arg));
    }
    let mut safe = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        safe.push_str(&files::escape::text(body));
        safe.push_str(end);
    }
    safe
}

/// Bad usage or bad input found after the command line was parsed (a config that is not JSON,
/// a `--out` another run holds, a request the server refused): exit 2. It is also what any
/// error of no other kind ends with (see [`Stop`]); naming it says so where it is made.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Usage(String),
}

/// Why a run stopped without judging: the one error-to-exit policy of all three tools,
/// decided from the typed errors in the chain and whether the run had begun to write, never
/// from an error's text, and never by a tool of its own: the same kind is the same code in
/// gate, mutants and probe. The kinds, in the order they are looked for: [`Interrupted`] (130),
/// [`PreconditionFailed`] (4), [`Bug`] (70), and everything else, [`Failure::Usage`] or untyped
/// (an output that cannot be written, a file that cannot be read): bad usage or bad input (2)
/// while nothing was written or changed, an I/O failure after work began (74) once it was. A
/// closed stdout is none of them: it is never an error (see [`print()`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Bad usage or bad input, met before anything was written or changed: exit 2.
    Usage,
    /// A [`PreconditionFailed`] anywhere in the chain: exit 4.
    Precondition,
    /// A [`Bug`] anywhere in the chain: exit 70.
    Internal,
    /// Any other error met after the run began to write: exit 74.
    Io,
    /// An [`Interrupted`] in the chain, or an interrupt was requested: exit 130.
    Interrupted,
}

impl Stop {
    /// What stopped the run that ended with `error`.
    pub fn of(error: &anyhow::Error) -> Stop {
        Stop::of_at(error, files::outputs::written())
    }

    /// What stopped a run that ended with `error`, `written` saying whether it had begun to
    /// write its outputs.
    pub fn of_at(error: &anyhow::Error, written: bool) -> Stop {
        // `downcast_ref` sees a type given as context as well as the root; `chain` the causes,
        // looking inside an `io::Error` too (its `source` skips the error it carries).
        let holds = |is: fn(&(dyn std::error::Error + 'static)) -> bool| {
            error.chain().any(|e| {
                is(e)
                    || e.downcast_ref::<std::io::Error>()
                        .and_then(|io| io.get_ref())
                        .is_some_and(|inner| is(inner))
            })
        };
        let interrupted = files::interrupt::requested()
            || error.downcast_ref::<Interrupted>().is_some()
            || holds(|e| e.is::<Interrupted>());
        if interrupted {
            Stop::Interrupted
        } else if error.downcast_ref::<PreconditionFailed>().is_some()
            || holds(|e| e.is::<PreconditionFailed>())
        {
            Stop::Precondition
        } else if error.downcast_ref::<Bug>().is_some() || holds(|e| e.is::<Bug>()) {
            Stop::Internal
        } else if written {
            Stop::Io
        } else {
            Stop::Usage
        }
    }

    pub fn exit(self) -> Exit {
        match self {
            Stop::Usage => Exit::Usage,
            Stop::Precondition => Exit::Precondition,
            Stop::Internal => Exit::Internal,
            Stop::Io => Exit::Io,
            Stop::Interrupted => Exit::Interrupted,
        }
    }
}

/// What a run that judged (`verdict`) ends with when writing some of its outputs failed
/// (`errors`, each already printed): the verdict stands when it found something (1, 4, 130);
/// a pass that could not be written whole is the first error's [`Stop`] after work began
/// (74 for an I/O failure), so a report that failed to land is never exit 0.
pub fn after_writing(verdict: Exit, errors: &[anyhow::Error]) -> Exit {
    match errors.first() {
        Some(first) if verdict == Exit::Ok => Stop::of_at(first, true).exit(),
        _ => verdict,
    }
}

/// Prints an error that stopped `tool` from judging, once, and returns its exit code (see
/// [`Stop`]): `TOOL: interrupted` at an interrupt, a
/// failed precondition whole (its lines, a log's tail, were escaped when it was made), and
/// any other error as one line with its causes (`gate: error: patch build.patch: No such file
/// or directory`).
pub fn fail(tool: &str, error: &anyhow::Error) -> Exit {
    let stop = Stop::of(error);
    match stop {
        Stop::Interrupted => crate::errln!("{tool}: interrupted"),
        Stop::Precondition => crate::errln!("{tool}: {error}"),
        Stop::Usage | Stop::Io | Stop::Internal => {
            crate::errln!("{tool}: error: {}", one_line(error.as_ref()))
        }
    }
    stop.exit()
}

/// A tool's whole run: route Ctrl-C and SIGTERM to the interrupt flag, do the work, print an
/// error that stopped it once (see [`fail`]), and sweep what its runs left behind.
pub fn run_tool(tool: &str, work: impl FnOnce() -> anyhow::Result<Exit>) -> Exit {
    files::interrupt::install();
    let name = tool.to_string();
    files::interrupt::exit_when_requested(move || {
        crate::errln!("{name}: interrupted");
        runner::sweep();
        runner::scratch::finish();
    });
    // A run that died with SIGKILL could clean nothing: its processes and scratch are ours to
    // remove now, before this run starts its own.
    let stale = runner::stale::clean_stale();
    if stale.processes > 0 {
        crate::errln!(
            "{tool}: killed {} process(es) left by a gatekit run that was killed",
            stale.processes
        );
    }
    // A panic is gatekit's own bug, whatever it met: 70, never the 101 of an unwinding main
    // that a script could take for a finding. The panic's own message is already on stderr.
    let exit = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(Ok(exit)) => exit,
        Ok(Err(e)) => fail(tool, &e),
        Err(_) => {
            crate::errln!(
                "{tool}: internal error (a bug in gatekit): it panicked; please report it"
            );
            Exit::Internal
        }
    };
    sweep_strays(tool);
    runner::scratch::finish();
    exit
}

/// The last thing a tool does: kill what its runs left behind (see
/// [`runner::sweep`]) and say so on stderr when there was anything.
pub fn sweep_strays(tool: &str) {
    let killed = runner::sweep();
    if killed > 0 {
        crate::errln!("{tool}: killed {killed} stray process(es) that outlived their runs");
    }
}

/// The most characters an error line quotes; past that its middle is left out (see
/// [`report::text::elide`]). Room for a few long paths, not for a megabyte of one.
const MAX_ERROR_CHARS: usize = 1000;

/// An error and its causes on one line, `: `-separated, without repeats (many errors quote
/// their source in their own message). Errors quote outside text (a path, git's stderr), so
/// line breaks and tabs become spaces and every other control character a visible escape
/// (see [`files::escape`]): an error can never print a second line or a terminal escape.
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    // However long what it quotes (a path of a megabyte), an error stays a line one can read.
    let text = report::text::elide(&text, MAX_ERROR_CHARS);
    let mut line = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => line.push(' '),
            c if files::escape::is_unsafe(c) => line.push_str(&files::escape::text(&c.to_string())),
            c => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading gate.toml")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn an_error_chain_is_one_line() {
        let e = Outer(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such\nfile",
        ));
        assert_eq!(one_line(&e), "reading gate.toml: no such file");
    }

    #[test]
    fn an_error_quoting_outside_text_prints_no_control_character() {
        let e = Outer(std::io::Error::other("x\rverdict   PASS\u{1b}[2J"));
        let line = one_line(&e);
        assert!(!line.chars().any(files::escape::is_unsafe), "{line:?}");
        assert_eq!(line, "reading gate.toml: x verdict   PASS\\u{1b}[2J");
    }

    #[test]
    fn an_error_quoting_a_megabyte_is_cut_to_a_readable_line() {
        let name = format!("start{}end", "n".repeat(1 << 20));
        let e = Outer(std::io::Error::other(name));
        let line = one_line(&e);
        assert!(
            line.chars().count() < MAX_ERROR_CHARS + 40,
            "{}",
            line.len()
        );
        assert!(line.starts_with("reading gate.toml: startnnn") && line.ends_with("nnnend"));
        assert!(line.contains("chars]…"), "{line}");
    }

    #[test]
    fn a_usage_error_quoting_controls_is_shown_with_escapes() {
        use clap::Parser as _;
        #[derive(Debug, clap::Parser)]
        struct Cli {
            #[arg(long, value_parser = ["a", "b"])]
            pick: String,
        }
        let args = ["t", "--pick", "x\u{1b}[2J\ny"].map(String::from);
        let e = Cli::try_parse_from(&args).unwrap_err();
        assert!(e.use_stderr());
        let text = usage_text(&e, &args);
        assert!(
            text.contains("'x\\u{1b}[2J\\ny'") || text.contains("'x\\ny'"),
            "{text:?} from {:?}",
            e.to_string()
        );
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert_eq!(usage(e), Exit::Usage);
    }

    #[test]
    fn the_exit_comes_from_the_typed_error_in_the_chain_however_it_was_wrapped() {
        use anyhow::Context as _;
        let root = anyhow::Error::new(PreconditionFailed::new("baseline red"));
        assert_eq!(Stop::of(&root), Stop::Precondition);
        let wrapped = Err::<(), _>(PreconditionFailed::new("setup failed"))
            .context("preparing copy 2")
            .unwrap_err();
        assert_eq!(Stop::of(&wrapped), Stop::Precondition);
        let as_context = Err::<(), _>(std::io::Error::other("x"))
            .context(PreconditionFailed::new("red"))
            .unwrap_err();
        assert_eq!(Stop::of(&as_context), Stop::Precondition);
        let deep = Outer(std::io::Error::other(Interrupted));
        assert_eq!(Stop::of(&anyhow::Error::new(deep)), Stop::Interrupted);
        // Bad usage named, and an error of no kind (an output that cannot be written), are
        // the same exit 2 in every tool while nothing was written, and 74 once it was.
        let named = anyhow::Error::new(Failure::Usage("--out is busy".into()));
        assert_eq!(Stop::of_at(&named, false), Stop::Usage);
        assert_eq!(Stop::of_at(&named, true), Stop::Io);
        let unwritable =
            anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::NotADirectory))
                .context("writing results.json");
        assert_eq!(Stop::of_at(&unwritable, false), Stop::Usage);
        assert_eq!(Stop::of_at(&unwritable, true), Stop::Io);
        assert_eq!(Stop::Io.exit().code(), 74);
        assert_eq!(after_writing(Exit::Ok, &[unwritable]), Exit::Io);
        assert_eq!(after_writing(Exit::Findings, &[named]), Exit::Findings);
        // gatekit's own bug is 70 wherever it is met, and before an interrupt only loses.
        let bug = Err::<(), _>(Bug("a row without a mutant".into()))
            .context("rendering mutants.txt")
            .unwrap_err();
        assert_eq!(Stop::of_at(&bug, false), Stop::Internal);
        assert_eq!(Stop::of_at(&bug, true), Stop::Internal);
        assert_eq!(Stop::Internal.exit().code(), 70);
        let pre_and_bug = Err::<(), _>(Bug("x".into()))
            .context(PreconditionFailed::new("red"))
            .unwrap_err();
        assert_eq!(Stop::of_at(&pre_and_bug, true), Stop::Precondition);
        assert_eq!(after_writing(Exit::Ok, &[]), Exit::Ok);
        // The words alone decide nothing.
        let words = anyhow::anyhow!("interrupted: precondition failed");
        assert_eq!(Stop::of_at(&words, false), Stop::Usage);
        assert_eq!(Stop::Precondition.exit(), Exit::Precondition);
        // Its lines are kept, and what it quotes cannot drive the terminal.
        let quoted = PreconditionFailed::new("no tool \"x\u{1b}[2J\"\nlisted: a\rb").to_string();
        assert_eq!(quoted, "no tool \"x\\u{1b}[2J\"\nlisted: a\\rb");
        assert_eq!(PreconditionFailed::new(quoted.clone()).to_string(), quoted);
    }
}
