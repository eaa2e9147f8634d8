//! A panic is gatekit's own bug: `run_tool` ends it with 70, never the 101 of an unwinding
//! main that a script could read as a finding. A binary of its own: `run_tool` installs the
//! process-wide interrupt handler.

use cmdline::Exit;

#[test]
fn a_panic_in_a_tools_work_ends_it_with_70() {
    let exit = cmdline::exit::run_tool("demo", || -> anyhow::Result<Exit> {
        let rows: Vec<u8> = Vec::new();
        // An invariant broken the way real code breaks one: an index that is not there.
        let first = rows[rows.len()];
        Ok(if first == 0 { Exit::Ok } else { Exit::Findings })
    });
    assert_eq!(exit, Exit::Internal);
    assert_eq!(exit.code(), 70);
    // Work that ends normally keeps its own code through the same door.
    assert_eq!(
        cmdline::exit::run_tool("demo", || Ok(Exit::Findings)),
        Exit::Findings
    );
}
