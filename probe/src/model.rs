//! `probe model`: the model stand-in (the `standin` crate) run in the foreground until SIGINT or
//! SIGTERM, its port on stdout when the caller asked for any free one.

use std::io::{self, Write};
use std::thread;
use std::time::Duration;

use standin::{ModelSettings, StandIn};

/// Runs the stand-in until killed. The chosen port goes to stdout when the caller asked for any
/// free one (`--port 0`), so a script can read it.
pub(crate) fn run_model(settings: ModelSettings) -> anyhow::Result<cmdline::Exit> {
    let asked_any = settings.port == 0;
    let stand_in = StandIn::start(settings)?;
    let _ = writeln!(
        io::stderr(),
        "probe model: listening on http://127.0.0.1:{}",
        stand_in.port()
    );
    if asked_any {
        crate::print_out(&format!("{}\n", stand_in.port()))?;
    }
    // Serve until SIGINT or SIGTERM (the flag is polled: the handler only sets it).
    while !files::interrupt::requested() {
        thread::sleep(Duration::from_millis(50));
    }
    stand_in.stop();
    let _ = writeln!(io::stderr(), "probe model: interrupted");
    Ok(cmdline::Exit::Interrupted)
}
