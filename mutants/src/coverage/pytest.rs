//! pytest's coverage: coverage.py's dynamic contexts, one per test id, switched by a small
//! plugin ([`PLUGIN`]) that each pytest process loads with `-p gatekit_cover` and that writes
//! its map as JSON (`pytest-PID.json`: file -> line -> the test ids that ran it, `""` for
//! outside any test) and each test id's own call time. Without coverage.py the plugin writes why
//! instead, and there is no map.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{in_tree, Map};
use candidate::suite::Items;

/// The plugin's module name, as `-p` names it.
pub(super) const MODULE: &str = "gatekit_cover";

/// The plugin's source.
pub(super) const PLUGIN: &str = include_str!("gatekit_cover.py");

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    /// Each test id's own call, in seconds (fixture setups count as the run's overhead).
    #[serde(default)]
    secs: BTreeMap<String, f64>,
}

/// The map the plugin's files in `dir` hold for the checkout at `root`: `Ok(None)` when no
/// pytest process ran, `Err(why)` when one could not measure (no coverage.py).
pub(super) fn read(dir: &Path, root: &Path) -> Result<Option<Map>, String> {
    let mut map: Option<Map> = None;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("pytest-") && name.ends_with(".json")) {
            continue;
        }
        let doc: Doc = std::fs::read(entry.path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| format!("the pytest plugin's {name} could not be read"))?;
        if let Some(why) = doc.error {
            return Err(format!("coverage.py could not measure ({why})"));
        }
        let cwd = doc.cwd.map(std::path::PathBuf::from);
        let mut one = Map::new(Items::Tests);
        for (file, lines) in doc.files {
            let path = match &cwd {
                Some(cwd) => cwd.join(&file),
                None => file.into(),
            };
            let Some(file) = in_tree(&path, root) else {
                continue;
            };
            for (line, contexts) in lines {
                let Ok(line) = line.parse::<u32>() else {
                    continue;
                };
                for c in contexts {
                    one.add(&file, line, (!c.is_empty()).then_some(c.as_str()));
                }
            }
        }
        for (test, secs) in doc.secs {
            one.timed(&test, secs);
        }
        map = Some(match map {
            None => one,
            Some(m) => m
                .merge(one)
                .ok_or("the pytest processes named their tests differently")?,
        });
    }
    Ok(map)
}
