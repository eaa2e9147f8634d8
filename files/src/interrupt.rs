//! Ctrl-C and SIGTERM as a request, not a death.
//!
//! The tools must clean up when interrupted (kill the running groups, restore files, remove
//! worktrees, write the partial report, exit 130), so the signal only sets a flag; the runner
//! polls it while it waits for a child and every loop over work items checks it between items.
//! Children run in their own process groups, so the terminal's SIGINT never reaches them
//! directly: the runner kills them itself.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};

/// The work stopped at Ctrl-C or SIGTERM after cleaning up: exit 130. The error a wait or a
/// read cut short by [`requested`] raises; the exit policy finds it by its type.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: nix::libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    SIGNAL.store(sig, Ordering::SeqCst);
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT and SIGTERM to the flag. Call once, early in `main`.
pub fn install() {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe.
        unsafe {
            let _ = signal::sigaction(sig, &action);
        }
    }
}

/// Whether an interrupt has arrived.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The signal number that arrived, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Sets the flag as a signal would; used by tests and by tools that stop early on their own.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

static CLEANS_UP: AtomicBool = AtomicBool::new(false);

/// Says that the running command polls [`requested`] and cleans up on its own (a run that must
/// kill its suites, restore files and write a partial report). Commands that do not say so are
/// ended by [`exit_when_requested`] soon after the signal, as a plain Ctrl-C would end them.
pub fn cleans_up() {
    CLEANS_UP.store(true, Ordering::SeqCst);
}

/// Starts a watcher that ends the process with 130 shortly after an interrupt arrives, unless
/// the command said it [`cleans_up`] itself; `before_exit` runs first (the end-of-run sweep).
///
/// Why: the handler [`install`] sets makes SIGINT a request rather than a death, and with
/// `SA_RESTART` a blocking read (`gate cites` on a terminal's stdin, a long hash of a huge
/// file) would never notice it. A command with nothing to clean up must still stop at Ctrl-C.
pub fn exit_when_requested(before_exit: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if requested() && !CLEANS_UP.load(Ordering::SeqCst) {
            before_exit();
            std::process::exit(130);
        }
    });
}
