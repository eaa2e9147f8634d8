//! The JSON reports of `gate apply`, `gate check` and `gate cites` (`--json`): one envelope
//! (`version`, `tool`, `command`, and `at` where the command has a moment) around each
//! command's own fields. `gate run`'s JSON is the [record](crate::record) itself.

use anyhow::Result;
use serde::Serialize;

use report::Timestamp;

use crate::record::REPORT_VERSION;

#[derive(Serialize)]
struct Envelope<'a, T> {
    version: u32,
    tool: &'static str,
    command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<Timestamp>,
    #[serde(flatten)]
    body: &'a T,
}

/// Prints `body`'s fields in the envelope on stdout, keys in sorted order as these reports
/// have always had them (a JSON object read back as a map, then printed).
pub(crate) fn print<T: Serialize>(command: &str, at: Option<Timestamp>, body: &T) -> Result<()> {
    let value = serde_json::to_value(Envelope {
        version: REPORT_VERSION,
        tool: "gate",
        command,
        at,
        body,
    })?;
    cmdline::outln!("{}", serde_json::to_string_pretty(&value)?)?;
    Ok(())
}
