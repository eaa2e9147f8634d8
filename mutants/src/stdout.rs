//! Everything `mutants` prints on stdout goes through [`print()`], so a reader that stops early
//! (`mutants run --json | head -c 10`) ends the output quietly instead of a panic.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and `print!`
//! turns that failure into a panic ("failed printing to stdout"). Here it is the reader's
//! choice, not an error: the rest of the output is dropped, and the command ends with the exit
//! code its work earned.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout and flushes it; a closed stdout is a quiet end (`Ok`), and nothing
/// more is written after it.
pub fn print(text: &str) -> io::Result<()> {
    write_bytes(text.as_bytes())
}

/// [`print()`] for bytes.
pub fn write_bytes(bytes: &[u8]) -> io::Result<()> {
    if CLOSED.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    quiet(out.write_all(bytes).and_then(|()| out.flush()))
}

/// `result` with a broken pipe turned into a quiet `Ok` (and remembered).
pub fn quiet(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::SeqCst);
            Ok(())
        }
        other => other,
    }
}

/// Whether a reader closed stdout.
pub fn closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}
