//! `node --test`'s coverage: V8's own (`NODE_V8_COVERAGE=DIR`, one JSON file per process,
//! named `coverage-PID-...`), with each process's test file recorded by a preload
//! ([`PROBE`], given by `NODE_OPTIONS=--require`).
//!
//! `node --test` runs each test file in a process of its own, with `NODE_TEST_CONTEXT` set;
//! a process a test started inherits it, so a process belongs to the test file of its oldest
//! ancestor that has it. A process with no such ancestor (the runner itself, a script the suite
//! runs around the tests) runs outside any test: its lines count for every test.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{in_tree, Map};
use candidate::suite::Items;

/// The preload: one small file per process, its pid, its parent, its main script, whether
/// it runs under a test runner's test context, and (written again as it exits) how long it ran.
pub(super) const PROBE: &str = r#"// gatekit: which test file this process runs (for its coverage map).
try {
  const at = require('path').join(process.env.GATEKIT_COVER_DIR, 'proc-' + process.pid + '.json');
  const me = {
    pid: process.pid,
    ppid: process.ppid,
    main: process.argv[1] || null,
    test: !!process.env.NODE_TEST_CONTEXT,
  };
  const fs = require('fs');
  fs.writeFileSync(at, JSON.stringify(me));
  process.on('exit', () => {
    try { fs.writeFileSync(at, JSON.stringify({ ...me, secs: process.uptime() })); } catch (e) {}
  });
} catch (e) {}
"#;

#[derive(Deserialize)]
struct Proc {
    ppid: u32,
    main: Option<String>,
    test: bool,
    /// Seconds from its start to its exit; none when it was killed.
    #[serde(default)]
    secs: Option<f64>,
}

#[derive(Deserialize)]
struct Coverage {
    result: Vec<Script>,
}

#[derive(Deserialize)]
struct Script {
    url: String,
    functions: Vec<Function>,
}

#[derive(Deserialize)]
struct Function {
    ranges: Vec<Range>,
}

#[derive(Deserialize, Clone, Copy)]
struct Range {
    #[serde(rename = "startOffset")]
    start: usize,
    #[serde(rename = "endOffset")]
    end: usize,
    count: u64,
}

/// The map `dir` holds for the checkout at `root`; `None` when no process wrote coverage.
pub(super) fn read(dir: &Path, root: &Path) -> Option<Map> {
    let mut procs: BTreeMap<u32, Proc> = BTreeMap::new();
    let mut coverages: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_prefix("proc-")
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse().ok())
        {
            if let Some(p) = std::fs::read(entry.path())
                .ok()
                .and_then(|b| serde_json::from_slice::<Proc>(&b).ok())
            {
                procs.insert(pid, p);
            }
        } else if let Some(pid) = name
            .strip_prefix("coverage-")
            .and_then(|n| n.split('-').next())
            .and_then(|n| n.parse().ok())
        {
            coverages.push((pid, entry.path()));
        }
    }
    if coverages.is_empty() {
        return None;
    }
    let mut map = Map::new(Items::Files);
    // A test file's time is its own process's, start-up included: what running it alone takes.
    for (pid, p) in &procs {
        let outermost = p.test && !procs.get(&p.ppid).is_some_and(|parent| parent.test);
        if let (true, Some(secs), Some(test)) = (outermost, p.secs, test_file(*pid, &procs, root)) {
            map.timed(&test, secs);
        }
    }
    let mut sources: BTreeMap<String, Option<Vec<usize>>> = BTreeMap::new();
    for (pid, path) in coverages {
        let test = test_file(pid, &procs, root);
        let Some(cov) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Coverage>(&b).ok())
        else {
            continue;
        };
        for script in cov.result {
            let Some(file) = script
                .url
                .strip_prefix("file://")
                .map(percent_decoded)
                .and_then(|p| in_tree(Path::new(&p), root))
            else {
                continue;
            };
            if file.split('/').any(|part| part == "node_modules") {
                continue;
            }
            let starts = sources
                .entry(file.clone())
                .or_insert_with(|| line_starts(&root.join(&file)));
            let Some(starts) = starts else { continue };
            let ranges: Vec<Range> = script
                .functions
                .iter()
                .flat_map(|f| f.ranges.iter().copied())
                .collect();
            for (line, at) in starts.iter().enumerate() {
                if ran(&ranges, *at) {
                    map.add(&file, line as u32 + 1, test.as_deref());
                }
            }
        }
    }
    Some(map)
}

/// The test file (relative to `root`) the process `pid` belongs to, `None` when it runs
/// outside any test.
fn test_file(pid: u32, procs: &BTreeMap<u32, Proc>, root: &Path) -> Option<String> {
    let mut at = procs.get(&pid).filter(|p| p.test)?;
    // Up to the oldest ancestor in a test context; the bound stops a cycle of reused pids.
    for _ in 0..64 {
        match procs.get(&at.ppid).filter(|p| p.test) {
            Some(parent) => at = parent,
            None => break,
        }
    }
    in_tree(Path::new(at.main.as_deref()?), root)
}

/// Whether the innermost range around `offset` ran (the outermost of each function holds the
/// inner ones; a smaller one is always inside a larger one that overlaps it).
fn ran(ranges: &[Range], offset: usize) -> bool {
    ranges
        .iter()
        .filter(|r| r.start <= offset && offset < r.end)
        .min_by_key(|r| r.end - r.start)
        .is_some_and(|r| r.count > 0)
}

/// For each line of the file, the offset (in UTF-16 units, as V8 counts) of its first
/// character that is not white space; a blank line gets one past its end, which no range
/// of its own holds. `None` when the file cannot be read.
fn line_starts(path: &Path) -> Option<Vec<usize>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in text.split('\n') {
        let lead: usize = line
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(char::len_utf16)
            .sum();
        let blank = line.trim().is_empty();
        starts.push(if blank { usize::MAX } else { offset + lead });
        offset += line.chars().map(char::len_utf16).sum::<usize>() + 1;
    }
    Some(starts)
}

/// A `file://` URL's path with its `%XX` escapes decoded.
fn percent_decoded(url: &str) -> String {
    let bytes = url.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_range_decides_and_urls_are_decoded() {
        let r = |start, end, count| Range { start, end, count };
        let ranges = [r(0, 100, 1), r(10, 50, 0), r(20, 30, 3)];
        assert!(ran(&ranges, 5));
        assert!(!ran(&ranges, 15));
        assert!(ran(&ranges, 25));
        assert!(!ran(&ranges, 200));
        assert_eq!(percent_decoded("/a%20b/c%5B1%5D.mjs"), "/a b/c[1].mjs");
        assert_eq!(percent_decoded("/x%"), "/x%");
    }
}
