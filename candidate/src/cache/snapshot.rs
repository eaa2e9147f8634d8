//! A checkout's build folders taken whole at one moment (a [`Snapshot`], after the first
//! checkout's green baseline), or handed straight to another checkout ([`hand_over`]); and the
//! one rule for what may never be handed on ([`refusal`]): a folder that would make the other
//! checkout build or test the first one's files.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::copy::in_tree;
use super::{cargo, copy, stamps};

/// The format of `meta.json` in a cache entry; another is discarded.
pub(super) const META_VERSION: u32 = 1;

/// What a hand-over did in a checkout, for the run's notes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandedOver {
    /// Source files given their twin's mtime (unchanged since the outputs were built).
    pub stamped: usize,
    /// Cargo units made to rebuild because they baked in the old checkout's path.
    pub forgotten: usize,
    /// Build folders not handed over, and why (see `refusal`): the checkout builds them cold.
    pub refused: Vec<(String, String)>,
}

/// Why the build folder `from`, built in the checkout `built_at`, may not be handed to another
/// checkout or kept: it holds a link or a special file (a link may name the other checkout's
/// files; the rest are not data), or (for a build folder other than Cargo's, whose units
/// [`cargo`] makes safe) a file that names `built_at`, as a configure step writes absolute
/// paths: the other checkout would build or test the first one's files.
pub(super) fn refusal(from: &Path, built_at: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    match copy::first_not_plain(from) {
        Ok(Some(rel)) => {
            return Some(format!(
                "it holds {}, which is not a plain file or folder",
                files::escape::text(&rel)
            ))
        }
        Ok(None) => {}
        Err(e) => return Some(format!("it cannot be read ({e})")),
    }
    if cargo::is_build_folder(from) {
        return None;
    }
    match copy::first_naming(from, built_at.as_os_str().as_bytes()) {
        Ok(Some(rel)) => Some(format!(
            "{} names the checkout it was built in, so another checkout would use that one's files",
            files::escape::text(&rel)
        )),
        Ok(None) => None,
        Err(e) => Some(format!("it cannot be read ({e})")),
    }
}

/// A checkout's build folders as they were at one moment (after its baseline), with the
/// stamps of its sources: what the other copies are filled from and what the cache keeps.
#[derive(Debug)]
pub struct Snapshot {
    /// Holds `out/PATH` for each cached path; removed on drop unless committed.
    pub(super) dir: PathBuf,
    pub(super) meta: Meta,
    pub(super) committed: bool,
    /// Paths left out, and why (see [`refusal`]).
    refused: Vec<(String, String)>,
}

/// `meta.json` of a cache entry.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Meta {
    pub(super) version: u32,
    /// The checkout the outputs were built in.
    pub(super) built_at: PathBuf,
    pub(super) paths: Vec<String>,
    pub(super) sources: Vec<stamps::Stamp>,
    /// Every output file (path under `out/`, length): a cache that does not match is corrupt.
    pub(super) outputs: Vec<(String, u64)>,
    /// Facts the caller keeps with the outputs (the slowest cold build and run of each suite,
    /// so a warm baseline never makes a derived timeout tighter than a cold one).
    pub(super) timings: BTreeMap<String, f64>,
}

impl Snapshot {
    /// Copies `paths` of `checkout` into `dir` (which must not exist) and stamps its sources.
    /// A path the checkout does not have is left out.
    pub fn take(checkout: &Path, paths: &[String], dir: PathBuf) -> io::Result<Snapshot> {
        fs::create_dir_all(dir.join("out"))?;
        let mut snap = Snapshot {
            dir,
            meta: Meta {
                version: META_VERSION,
                built_at: checkout.to_path_buf(),
                paths: paths.to_vec(),
                sources: stamps::take(checkout, paths)?,
                outputs: Vec::new(),
                timings: BTreeMap::new(),
            },
            committed: false,
            refused: Vec::new(),
        };
        for rel in paths {
            let Some(from) = in_tree(checkout, rel) else {
                continue;
            };
            if fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir()) {
                if let Some(why) = refusal(&from, checkout) {
                    snap.refused.push((rel.clone(), why));
                    continue;
                }
                let to = snap.dir.join("out").join(rel);
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent)?;
                }
                copy::copy_tree(&from, &to)?;
            }
        }
        snap.meta.outputs = copy::listing(&snap.dir.join("out"))?;
        Ok(snap)
    }

    /// Fills `checkout` (a fresh copy of the same tree) with the snapshot's build folders.
    pub fn fill(&self, checkout: &Path) -> io::Result<HandedOver> {
        for rel in &self.meta.paths {
            let from = self.dir.join("out").join(rel);
            if !from.exists() {
                continue;
            }
            let Some(to) = in_tree(checkout, rel) else {
                continue;
            };
            if fs::symlink_metadata(&to).is_ok() {
                runner::scratch::remove_all(&to)?;
            }
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent)?;
            }
            copy::copy_tree(&from, &to)?;
        }
        Ok(settle(checkout, &self.meta))
    }

    /// The build folders left out of the snapshot, and why: the other copies build them cold.
    pub fn refused(&self) -> &[(String, String)] {
        &self.refused
    }

    /// Keeps `timings` with the outputs (each the larger of the given and the one kept).
    pub fn keep_timings(&mut self, timings: &BTreeMap<String, f64>) {
        for (k, v) in timings {
            let kept = self.meta.timings.entry(k.clone()).or_insert(0.0);
            *kept = kept.max(*v);
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        if !self.committed {
            let _ = runner::scratch::remove_all(&self.dir);
        }
    }
}

/// Hands `paths` of checkout `from` straight to checkout `to` (no snapshot kept).
pub fn hand_over(from: &Path, to: &Path, paths: &[String]) -> io::Result<HandedOver> {
    let meta = Meta {
        version: META_VERSION,
        built_at: from.to_path_buf(),
        paths: paths.to_vec(),
        sources: stamps::take(from, paths)?,
        outputs: Vec::new(),
        timings: BTreeMap::new(),
    };
    let mut refused = Vec::new();
    for rel in paths {
        let (Some(src), Some(dst)) = (in_tree(from, rel), in_tree(to, rel)) else {
            continue;
        };
        if !fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if let Some(why) = refusal(&src, from) {
            refused.push((rel.clone(), why));
            continue;
        }
        if fs::symlink_metadata(&dst).is_ok() {
            runner::scratch::remove_all(&dst)?;
        }
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent)?;
        }
        copy::copy_tree(&src, &dst)?;
    }
    let mut handed = settle(to, &meta);
    handed.refused = refused;
    Ok(handed)
}

/// After the outputs are in `checkout`: path-bound Cargo units forgotten, sources stamped.
pub(super) fn settle(checkout: &Path, meta: &Meta) -> HandedOver {
    let forgotten = meta
        .paths
        .iter()
        .map(|rel| cargo::forget_units_bound_to(checkout, rel, &meta.built_at))
        .sum();
    let stamped = stamps::apply(checkout, &meta.paths, &meta.sources).unwrap_or(0);
    HandedOver {
        stamped,
        forgotten,
        refused: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_folder_naming_its_checkout_or_holding_a_link_is_never_handed_over_or_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            fs::create_dir_all(d.join("src")).unwrap();
            fs::write(d.join("src/lib.sh"), "x").unwrap();
        }
        let paths = vec!["build".to_string()];
        // A configure step wrote the checkout's absolute path.
        fs::create_dir_all(a.join("build")).unwrap();
        fs::write(a.join("build/config.sh"), format!("SRC={}\n", a.display())).unwrap();
        let handed = hand_over(&a, &b, &paths).unwrap();
        assert_eq!(handed.refused.len(), 1, "{handed:?}");
        assert!(handed.refused[0].1.contains("config.sh names the checkout"));
        assert!(!b.join("build").exists());
        let snap = Snapshot::take(&a, &paths, tmp.path().join("staging")).unwrap();
        assert_eq!(snap.refused().len(), 1);
        drop(snap);

        // A link (to the other checkout's sources) in a build folder that names no path.
        fs::write(a.join("build/config.sh"), "SRC=.\n").unwrap();
        std::os::unix::fs::symlink(a.join("src"), a.join("build/src")).unwrap();
        let handed = hand_over(&a, &b, &paths).unwrap();
        assert!(
            handed.refused[0].1.contains("not a plain file"),
            "{handed:?}"
        );
        fs::remove_file(a.join("build/src")).unwrap();
        let handed = hand_over(&a, &b, &paths).unwrap();
        assert!(handed.refused.is_empty());
        assert_eq!(fs::read(b.join("build/config.sh")).unwrap(), b"SRC=.\n");
    }
}
