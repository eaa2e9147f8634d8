//! The sources' modification times, carried with build outputs so the build tool judges
//! freshness in the new checkout exactly as it would have in the old one.
//!
//! A fresh checkout's files are all "just written": newer than any output, so Cargo would
//! rebuild the whole crate even when not one byte changed. So the outputs travel with a stamp
//! of every source file (path, length, sha256, mtime), and a file in the new checkout gets its
//! twin's mtime back only when its bytes are the same. A file that differs must look newer
//! than every output and must not share its twin's whole second (Python trusts a `.pyc` whose
//! source size and second match): its own time usually is (it was written after the outputs),
//! and when it is not (a twin stamped in the same second, or ahead of the clock) it gets one
//! from [`crate::fresh`]: it is rebuilt, never trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::copy::walk;

/// One source file as it was when the outputs were taken.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Stamp {
    pub path: String,
    pub len: u64,
    pub sha256: String,
    /// Nanoseconds since the epoch.
    pub mtime_ns: u128,
}

/// Stamps every regular file of `checkout`, leaving out `.git` and the `skip` folders (the
/// cached outputs themselves, links).
pub(crate) fn take(checkout: &Path, skip: &[String]) -> io::Result<Vec<Stamp>> {
    let mut files = Vec::new();
    each_source(checkout, skip, &mut |rel, meta| {
        files.push((rel.to_string(), meta.len(), meta.modified().ok()));
    })?;
    let mut stamps = Vec::with_capacity(files.len());
    for (rel, len, modified) in files {
        let Some(mtime_ns) = modified
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos())
        else {
            continue;
        };
        let Ok(sha256) = sha256_of(&checkout.join(&rel)) else {
            continue;
        };
        stamps.push(Stamp {
            path: rel,
            len,
            sha256,
            mtime_ns,
        });
    }
    stamps.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(stamps)
}

/// Gives every file of `checkout` whose bytes equal its stamp the stamp's mtime; returns how
/// many it stamped.
pub(crate) fn apply(checkout: &Path, skip: &[String], stamps: &[Stamp]) -> io::Result<usize> {
    let by_path: BTreeMap<&str, &Stamp> = stamps.iter().map(|s| (s.path.as_str(), s)).collect();
    let mut candidates = Vec::new();
    each_source(checkout, skip, &mut |rel, meta| {
        if let Some(s) = by_path.get(rel) {
            candidates.push((*s, meta.len(), meta.modified().ok()));
        }
    })?;
    let mut stamped = 0;
    for (s, len, mtime) in candidates {
        let path = checkout.join(&s.path);
        let secs = (s.mtime_ns / 1_000_000_000) as u64;
        let nanos = (s.mtime_ns % 1_000_000_000) as u32;
        let time = SystemTime::UNIX_EPOCH + Duration::new(secs, nanos);
        let same = s.len == len && sha256_of(&path).ok().as_deref() == Some(s.sha256.as_str());
        if same {
            if File::open(&path).and_then(|f| f.set_modified(time)).is_ok() {
                stamped += 1;
            }
            continue;
        }
        // Other bytes: the outputs name the twin's second; this file must be past it.
        let whole = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs())
        };
        if mtime.and_then(whole) <= whole(time) {
            crate::fresh::note(&path, time);
            let before = fs::symlink_metadata(&path).ok();
            crate::fresh::stamp_written(&path, before.as_ref())?;
        }
    }
    Ok(stamped)
}

/// Whether two stampings name the same files with the same bytes (times may differ).
pub(crate) fn same_sources(a: &[Stamp], b: &[Stamp]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.path == y.path && x.len == y.len && x.sha256 == y.sha256)
}

fn each_source(
    checkout: &Path,
    skip: &[String],
    each: &mut dyn FnMut(&str, &fs::Metadata),
) -> io::Result<()> {
    let skip: BTreeSet<&str> = skip.iter().map(String::as_str).collect();
    for entry in fs::read_dir(checkout)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == ".git" || skip.contains(name) {
            continue;
        }
        let meta = fs::symlink_metadata(entry.path())?;
        if meta.is_dir() {
            // Nested skip paths (`a/target`) are matched on their full relative path.
            let mut inner = |rel: &str, m: &fs::Metadata| {
                let full = format!("{name}/{rel}");
                if !skip.iter().any(|s| full.starts_with(&format!("{s}/"))) {
                    each(&full, m);
                }
            };
            walk(&entry.path(), &entry.path(), &mut inner)?;
        } else if meta.is_file() {
            each(name, &meta);
        }
    }
    Ok(())
}

fn sha256_of(path: &Path) -> io::Result<String> {
    manifests::hash_file(path).map(|d| d.to_hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mtime(p: &Path) -> SystemTime {
        fs::metadata(p).unwrap().modified().unwrap()
    }

    #[test]
    fn only_files_with_the_same_bytes_get_their_twins_mtime_back() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            fs::create_dir_all(d.join("src")).unwrap();
            fs::create_dir_all(d.join("target")).unwrap();
            fs::write(d.join("target/out"), "o").unwrap();
        }
        fs::write(a.join("src/same.rs"), "same").unwrap();
        fs::write(a.join("src/changed.rs"), "old").unwrap();
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        for f in ["src/same.rs", "src/changed.rs"] {
            File::open(a.join(f)).unwrap().set_modified(old).unwrap();
        }
        let stamps = take(&a, &["target".into()]).unwrap();
        assert_eq!(stamps.len(), 2, "target/ is left out: {stamps:?}");

        fs::write(b.join("src/same.rs"), "same").unwrap();
        fs::write(b.join("src/changed.rs"), "new").unwrap();
        assert_eq!(apply(&b, &["target".into()], &stamps).unwrap(), 1);
        assert_eq!(mtime(&b.join("src/same.rs")), old);
        assert_ne!(mtime(&b.join("src/changed.rs")), old);
    }

    #[test]
    fn a_changed_file_never_shares_its_twins_second() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            fs::create_dir_all(d).unwrap();
        }
        // The twin was stamped a second ahead (a time handed out by `fresh`), and the changed
        // file, of the same size, was written in the same second as that or before.
        fs::write(a.join("m.py"), "x = 1\n").unwrap();
        let ahead = SystemTime::now() + Duration::from_secs(1);
        File::open(a.join("m.py"))
            .unwrap()
            .set_modified(ahead)
            .unwrap();
        let stamps = take(&a, &[]).unwrap();
        fs::write(b.join("m.py"), "x = 2\n").unwrap();
        let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
        File::open(b.join("m.py"))
            .unwrap()
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs(ahead)))
            .unwrap();
        assert_eq!(apply(&b, &[], &stamps).unwrap(), 0);
        assert!(secs(mtime(&b.join("m.py"))) > secs(ahead));
    }
}
