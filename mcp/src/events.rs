//! JSON-lines event logs: one JSON object per line, stamped with the time it was written, and a
//! typed reader for them.
//!
//! probe's long-running parts (the model stand-in, the MCP server) log what they saw as events a
//! driver reads back to judge a run. Each event is one `write` of one whole line, flushed, under
//! a lock: a process stopped by a signal, or another thread writing at the same moment, can
//! never leave half a line behind. The events themselves are typed enums
//! (`#[serde(tag = "event")]`, as the model stand-in's `ModelEvent`); this module only knows they
//! serialize to JSON objects.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::Mutex;

/// An append-only JSON-lines file (or nowhere), shared by every thread that records.
#[derive(Debug, Default)]
pub struct EventLog {
    file: Mutex<Option<File>>,
}

use files::sync::lock;

impl EventLog {
    /// Appends to `path` (created if missing); `None` records nothing.
    pub fn open(path: Option<&Path>) -> io::Result<EventLog> {
        let file = match path {
            // Recorded when it is in an output folder of this process; a link at the
            // log's place is refused by the kernel (`O_NOFOLLOW`), never written through.
            Some(p) => Some(
                files::outputs::claim(p)
                    .and_then(|()| {
                        File::options()
                            .create(true)
                            .append(true)
                            .custom_flags(nix::libc::O_NOFOLLOW)
                            .open(p)
                    })
                    .map_err(|e| {
                        io::Error::new(e.kind(), format!("opening log {}: {e}", p.display()))
                    })?,
            ),
            None => None,
        };
        Ok(EventLog {
            file: Mutex::new(file),
        })
    }

    /// Writes `event` as one line with a `time` field. A log that cannot be written is not worth
    /// stopping what is being logged, so a failed write is dropped.
    pub fn record(&self, event: &impl Serialize) {
        let line = format!("{}\n", stamped(event));
        if let Some(file) = lock(&self.file).as_mut() {
            let _ = file.write_all(line.as_bytes()).and_then(|()| file.flush());
        }
    }

    /// Waits for a write in progress, then closes the file: later records go nowhere, so a
    /// process about to exit cannot be stopped halfway through a line.
    pub fn close(&self) {
        lock(&self.file).take();
    }
}

/// `event` as the JSON object a log line holds: its own fields plus `time` (RFC 3339, UTC).
pub fn stamped(event: &impl Serialize) -> Value {
    let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.insert(
            "time".into(),
            serde_json::json!(report::time::Timestamp::now()),
        );
    }
    value
}

/// The events of a JSON-lines log that read as `E`, in order. A line that does not (half
/// written by a killed writer, another kind of event, not JSON) is skipped; a missing file has
/// no events.
pub fn read_events<E: DeserializeOwned>(path: &Path) -> Vec<E> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_slice(&line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "event", rename_all = "snake_case")]
    enum Seen {
        Start { pid: u32 },
        Stop,
    }

    #[test]
    fn each_event_is_one_stamped_line_and_reads_back_typed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let log = EventLog::open(Some(&path)).unwrap();
        log.record(&Seen::Start { pid: 7 });
        log.record(&Seen::Stop);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["event"], "start");
        assert_eq!(lines[0]["pid"], 7);
        assert!(
            report::time::Timestamp::parse(lines[1]["time"].as_str().unwrap()).is_some(),
            "{text}"
        );
        assert_eq!(
            read_events::<Seen>(&path),
            [Seen::Start { pid: 7 }, Seen::Stop]
        );
    }

    #[test]
    fn the_reader_skips_what_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(
            &path,
            "{\"event\":\"stop\"}\nnot json\n{\"event\":\"other\"}\n{\"event\":\"start\",\"pid\":1,\"time\":\"x\"}\n{\"event\":\"sta",
        )
        .unwrap();
        assert_eq!(
            read_events::<Seen>(&path),
            [Seen::Stop, Seen::Start { pid: 1 }]
        );
        assert!(read_events::<Seen>(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn a_closed_log_writes_nothing_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let log = EventLog::open(Some(&path)).unwrap();
        log.record(&Seen::Stop);
        log.close();
        log.record(&Seen::Stop);
        assert_eq!(read_events::<Seen>(&path).len(), 1);
    }
}
