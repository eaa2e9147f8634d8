//! Coverage maps kept between runs in gatekit's cache folder (`coverage/KEY.json`), one per
//! code tree and suite: a run of the same code (the tree without the spec file, as
//! `--only` compares it) with the same suite (its command, `select`, build, environment,
//! where its counts come from) reads the map instead of running the suite with coverage again.
//! `--no-cache` neither reads nor writes one. A map kept is only ever a hint, as any map is:
//! a stale one makes a run slower, never a verdict wrong (see `run::select`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Lines, Map};
use crate::spec::Suite;
use candidate::suite::Items;

/// The layout of a kept map; another is not read.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    by_test: bool,
    tests: Vec<String>,
    files: BTreeMap<String, StoredLines>,
    /// Package folders and the tests that run every file in them (cargo's map).
    #[serde(default)]
    dirs: BTreeMap<String, Vec<usize>>,
    #[serde(default)]
    packages: bool,
    /// The tests are libtest's names, mapped by function.
    #[serde(default)]
    libtest: bool,
    /// The tests that passed when each ran alone (indices).
    #[serde(default)]
    alone: Vec<usize>,
    /// Each timed test's seconds in the coverage run (by index), and the run's overhead.
    #[serde(default)]
    secs: BTreeMap<usize, f64>,
    #[serde(default)]
    overhead: Option<f64>,
}

/// A file's lines run outside any test, and each other line's tests (indices into `tests`).
type StoredLines = (Vec<u32>, BTreeMap<u32, Vec<usize>>);

/// Where the map of `suite` on `code_tree` is kept, in the cache folder `cache`.
fn path(cache: &Path, code_tree: &str, suite: &Suite) -> PathBuf {
    let key = serde_json::json!({
        "format": FORMAT,
        "code_tree": code_tree,
        "suite": crate::spec::identity::suite_value(suite),
    });
    let hex = manifests::Digest::of(key.to_string().as_bytes()).to_hex();
    cache.join("coverage").join(format!("{hex}.json"))
}

/// The map kept for `suite` on `code_tree`, if there is one that reads whole and is usable
/// (see [`Map::usable`]: an empty one kept by an older gatekit is not read).
pub(crate) fn load(code_tree: &str, suite: &Suite) -> Option<Map> {
    load_from(&runner::scratch::cache_dir(), code_tree, suite).filter(|m| m.usable().is_ok())
}

/// Keeps `map` for `suite` on `code_tree` (best effort: a cache that cannot be written only
/// means the next run maps again).
pub(crate) fn save(code_tree: &str, suite: &Suite, map: &Map) {
    save_in(&runner::scratch::cache_dir(), code_tree, suite, map)
}

fn load_from(cache: &Path, code_tree: &str, suite: &Suite) -> Option<Map> {
    let bytes = std::fs::read(path(cache, code_tree, suite)).ok()?;
    let stored: Stored = serde_json::from_slice(&bytes).ok()?;
    if stored.format != FORMAT {
        return None;
    }
    let mut map = Map::new(if stored.by_test {
        Items::Tests
    } else {
        Items::Files
    });
    // The tests in their kept order, so the map is the one that was kept.
    for (i, t) in stored.tests.iter().enumerate() {
        if map.index.insert(t.clone(), i).is_some() {
            return None;
        }
    }
    map.tests = stored.tests.clone();
    map.packages = stored.packages;
    map.libtest = stored.libtest;
    for t in stored.alone {
        stored.tests.get(t)?;
        map.alone.insert(t);
    }
    for (dir, tests) in stored.dirs {
        for t in tests {
            map.add_dir(&dir, stored.tests.get(t)?);
        }
    }
    for (t, secs) in stored.secs {
        map.timed(stored.tests.get(t)?, secs);
    }
    map.overhead = stored.overhead;
    for (file, (every, by)) in stored.files {
        for line in every {
            map.add(&file, line, None);
        }
        for (line, tests) in by {
            map.known(&file, line);
            for t in tests {
                map.add(&file, line, Some(stored.tests.get(t)?));
            }
        }
    }
    Some(map)
}

fn save_in(cache: &Path, code_tree: &str, suite: &Suite, map: &Map) {
    let stored = Stored {
        format: FORMAT,
        by_test: map.items == Some(Items::Tests),
        tests: map.tests.clone(),
        files: map
            .files
            .iter()
            .map(|(f, Lines { every, by })| {
                let by = by
                    .iter()
                    .map(|(l, t)| (*l, t.iter().copied().collect::<Vec<_>>()))
                    .collect();
                (f.clone(), (every.iter().copied().collect(), by))
            })
            .collect(),
        dirs: map
            .dirs
            .iter()
            .map(|(d, t)| (d.clone(), t.iter().copied().collect()))
            .collect(),
        packages: map.packages,
        libtest: map.libtest,
        alone: map.alone.iter().copied().collect(),
        secs: map.secs.clone(),
        overhead: map.overhead,
    };
    let path = path(cache, code_tree, suite);
    let Ok(text) = serde_json::to_string(&stored) else {
        return;
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = files::atomic::write_text_atomic(&path, &text);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn a_kept_map_reads_back_as_it_was_for_its_own_tree_and_suite_only() {
        let cache = tempfile::tempdir().unwrap();
        let cache = cache.path();
        let spec = crate::spec::Spec::parse(
            "[suites.t]\nrun = \"pytest\"\nselect = \"pytest {tests}\"\n[suites.u]\nrun = \"pytest -x\"\nselect = \"pytest {tests}\"\n[[mutant]]\nname = \"m\"\nfile = \"f\"\nanchor = \"a\"\nreplace = \"b\"\nsuite = \"t\"\n",
            std::path::Path::new("mutants.toml"),
        )
        .unwrap();
        let (t, u) = (&spec.suites["t"], &spec.suites["u"]);
        let mut map = Map::new(Items::Tests);
        map.add("a.py", 1, None);
        map.add("a.py", 3, Some("t.py::x[a b]"));
        map.add("b.py", 2, Some("t.py::y"));
        map.add("b.py", 2, Some("t.py::a-later-test-named-earlier"));
        map.add_dir("crates/x", "--package=x");
        map.known("c.rs", 4);
        map.libtest = true;
        map.ran_alone("t.py::y", true, true);
        map.timed("t.py::y", 0.25);
        map.ran_for(3.0);
        save_in(cache, "tree1", t, &map);
        assert_eq!(load_from(cache, "tree1", t), Some(map));
        assert_eq!(load_from(cache, "tree2", t), None);
        assert_eq!(load_from(cache, "tree1", u), None);
        let kept: BTreeSet<PathBuf> = std::fs::read_dir(cache.join("coverage"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 1);
    }
}
