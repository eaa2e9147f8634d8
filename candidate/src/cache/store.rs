//! The cache kept between runs: one entry per repository under gatekit's cache folder, taken
//! out while a run uses it, checked whole before anything is moved, and written by rename so a
//! killed run never leaves half an entry that is used.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use runner::scratch::RunId;

use super::copy::{self, in_tree, remove_outputs};
use super::snapshot::{refusal, settle, HandedOver, Meta, Snapshot, META_VERSION};
use super::{cargo, stamps};

/// The cache of one repository: `cache_dir()/worktrees/KEY/`, one entry (`slot-0`) and the
/// staging folders of runs in progress.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// What restoring found.
#[derive(Debug)]
pub enum Restored {
    /// No cache yet (or not for these paths): the run builds cold.
    Nothing,
    /// The outputs are in the checkout; the timings kept with them.
    Restored {
        handed: HandedOver,
        timings: BTreeMap<String, f64>,
    },
    /// A cache was there but could not be trusted: removed, and the run builds cold.
    Discarded(String),
}

impl Store {
    /// The cache of the repository whose top folder is `repo`.
    pub fn for_repo(repo: &Path) -> Store {
        use std::os::unix::ffi::OsStrExt;
        let top = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
        // The first 8 bytes of the digest, as 16 hex digits.
        let key = manifests::Digest::of(top.as_os_str().as_bytes()).to_hex()[..16].to_string();
        let dir = runner::scratch::cache_dir().join("worktrees").join(key);
        let _ = fs::create_dir_all(&dir);
        // For a human looking in the folder: which repository this is.
        // Written whole by rename, never through a link planted at its name.
        let _ =
            files::atomic::write_bytes_atomic(&dir.join("repository"), top.as_os_str().as_bytes());
        Store { dir }
    }

    /// The folder of this repository's cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new staging folder for this run's snapshot (not made yet); staging folders of runs
    /// that are gone are removed first.
    pub fn staging(&self) -> PathBuf {
        self.clean_stale();
        static SEQ: AtomicU32 = AtomicU32::new(0);
        self.dir.join(format!(
            ".new-{}-{}",
            RunId::current().tag(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Moves the cached outputs for `paths` into `checkout` (a fresh checkout, before its
    /// baseline). The entry is taken out of the cache while it is used (a second run at the
    /// same time builds cold rather than share it), and is checked whole before anything is
    /// moved: a wrong version, other paths or a missing or resized file discards it.
    pub fn restore(&self, paths: &[String], checkout: &Path) -> Restored {
        self.clean_stale();
        let entry = self.dir.join("slot-0");
        if fs::symlink_metadata(&entry).is_err() {
            return Restored::Nothing;
        }
        let claimed = self.dir.join(format!(".used-{}", RunId::current().tag()));
        if fs::rename(&entry, &claimed).is_err() {
            return Restored::Nothing;
        }
        let result = restore_from(&claimed, paths, checkout);
        let _ = runner::scratch::remove_all(&claimed);
        match result {
            Ok(Some((handed, timings))) => Restored::Restored { handed, timings },
            Ok(None) => Restored::Nothing,
            Err(why) => {
                // Half-moved outputs are worse than none: the checkout goes back to cold.
                remove_outputs(checkout, paths);
                Restored::Discarded(why)
            }
        }
    }

    /// Makes `snapshot` the repository's cache: its `meta.json` written, then the folder
    /// renamed into place (the old entry, if any, moved aside first and removed).
    pub fn commit(&self, mut snapshot: Snapshot) -> io::Result<()> {
        report::json::write_atomic(&snapshot.dir.join("meta.json"), &snapshot.meta)?;
        let entry = self.dir.join("slot-0");
        if fs::symlink_metadata(&entry).is_ok() {
            let old = self.dir.join(format!(".old-{}", RunId::current().tag()));
            fs::rename(&entry, &old)?;
            let _ = runner::scratch::remove_all(&old);
        }
        fs::rename(&snapshot.dir, &entry)?;
        snapshot.committed = true;
        Ok(())
    }

    /// Removes staging and in-use folders whose run is gone (killed before it could).
    fn clean_stale(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            if let Some(owner) = run_of(&e.file_name()) {
                if owner != RunId::current() && !owner.alive() {
                    let _ = runner::scratch::remove_all(&e.path());
                }
            }
        }
    }
}

/// The run a staging, in-use or moved-aside folder (`.new-TAG-N`, `.used-TAG`, `.old-TAG`,
/// TAG = `PID.START`) belongs to; `None` for any other name.
fn run_of(name: &std::ffi::OsStr) -> Option<RunId> {
    let rest = name.to_str().and_then(|n| {
        n.strip_prefix(".new-")
            .or_else(|| n.strip_prefix(".used-"))
            .or_else(|| n.strip_prefix(".old-"))
    })?;
    let tag = rest.split('-').next().unwrap_or_default();
    let (pid, start) = tag.split_once('.')?;
    Some(RunId {
        pid: pid.parse().ok()?,
        start: start.parse().ok()?,
    })
}

/// What [`clean`] did with one repository's cache.
#[derive(Debug)]
pub struct Cleaned {
    pub dir: PathBuf,
    /// Runs still working in it (their staging or in-use folders were left): pids.
    pub live: Vec<u32>,
}

/// Removes every cache entry of `repo` (or of every repository with `None`), but never what a
/// running run is using: its staging, in-use and moved-aside folders (named for its pid and
/// start time, so a reused pid does not count) stay, and so does their folder. Returns each
/// repository's cache it cleaned.
pub fn clean(repo: Option<&Path>) -> io::Result<Vec<Cleaned>> {
    let root = runner::scratch::cache_dir().join("worktrees");
    let dirs: Vec<PathBuf> = match repo {
        Some(r) => vec![Store::for_repo(r).dir],
        None => match fs::read_dir(&root) {
            Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        },
    };
    let mut cleaned = Vec::new();
    for d in dirs {
        let Ok(meta) = fs::symlink_metadata(&d) else {
            continue;
        };
        let mut live = Vec::new();
        if meta.is_dir() {
            for e in fs::read_dir(&d)?.flatten() {
                match run_of(&e.file_name()) {
                    Some(owner) if owner == RunId::current() || owner.alive() => {
                        live.push(owner.pid)
                    }
                    _ => runner::scratch::remove_all(&e.path())?,
                }
            }
        }
        if live.is_empty() {
            runner::scratch::remove_all(&d)?;
        }
        cleaned.push(Cleaned { dir: d, live });
    }
    Ok(cleaned)
}

/// What a restore hands back: what it did, and the timings kept with the outputs.
type Taken = (HandedOver, BTreeMap<String, f64>);

/// The checked move of a claimed entry into `checkout`; `Err(why)` when it cannot be trusted.
fn restore_from(entry: &Path, paths: &[String], checkout: &Path) -> Result<Option<Taken>, String> {
    let text = fs::read(entry.join("meta.json")).map_err(|e| format!("meta.json: {e}"))?;
    let meta: Meta =
        serde_json::from_slice(&text).map_err(|e| format!("meta.json is not readable: {e}"))?;
    if meta.version != META_VERSION {
        return Err(format!(
            "format {} (this gatekit writes {META_VERSION})",
            meta.version
        ));
    }
    if meta.paths != paths {
        // The spec caches other folders now: not corrupt, just not this run's.
        return Ok(None);
    }
    // Every number read back has the bounds a command-line duration has.
    let most = report::duration::MAX.as_secs_f64();
    if let Some((k, v)) = meta
        .timings
        .iter()
        .find(|(_, v)| !(0.0..=most).contains(*v))
    {
        return Err(format!(
            "its time {} is {v}, not a number of seconds a run can take",
            files::escape::text(k)
        ));
    }
    let out = entry.join("out");
    for rel in paths {
        let from = out.join(rel);
        if fs::symlink_metadata(&from).is_err() {
            continue;
        }
        if let Some(why) = refusal(&from, &meta.built_at) {
            return Err(format!("{}: {why}", files::escape::text(rel)));
        }
        // A build folder other than Cargo's is reused only for the very sources it was built
        // from: an output of a source since deleted or changed (a compiled test that no longer
        // exists) would linger in it and decide verdicts. Cargo tracks its own inputs.
        if !cargo::is_build_folder(&from) {
            let now = stamps::take(checkout, paths).map_err(|e| format!("stamping: {e}"))?;
            if !stamps::same_sources(&now, &meta.sources) {
                return Err(format!(
                    "{} was built from other sources (only Cargo's build folder is reused across source changes)",
                    files::escape::text(rel)
                ));
            }
        }
    }
    let found = copy::listing(&out).map_err(|e| format!("listing it: {e}"))?;
    if found != meta.outputs {
        let missing = meta.outputs.iter().filter(|f| !found.contains(f)).count();
        return Err(format!(
            "{} of {} files missing or changed since it was saved",
            missing.max(1),
            meta.outputs.len()
        ));
    }
    for rel in paths {
        let from = entry.join("out").join(rel);
        if fs::symlink_metadata(&from).is_err() {
            continue;
        }
        let to = in_tree(checkout, rel).ok_or_else(|| format!("{rel}: a link on the way"))?;
        if fs::symlink_metadata(&to).is_ok() {
            runner::scratch::remove_all(&to).map_err(|e| format!("{rel}: {e}"))?;
        }
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{rel}: {e}"))?;
        }
        copy::move_tree(&from, &to).map_err(|e| format!("moving {rel}: {e}"))?;
    }
    Ok(Some((settle(checkout, &meta), meta.timings)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_committed_is_restored_and_a_changed_one_is_discarded() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store {
            dir: tmp.path().join("cache"),
        };
        fs::create_dir_all(&store.dir).unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        for d in [&a, &b, &c] {
            fs::create_dir_all(d.join("src")).unwrap();
            fs::write(d.join("src/lib.rs"), "x").unwrap();
        }
        fs::create_dir_all(a.join("target/debug")).unwrap();
        fs::write(a.join("target/debug/out"), "built").unwrap();
        let paths = vec!["target".to_string()];
        assert!(matches!(store.restore(&paths, &b), Restored::Nothing));

        let mut snap = Snapshot::take(&a, &paths, store.staging()).unwrap();
        snap.keep_timings(&BTreeMap::from([("unit".to_string(), 2.0)]));
        store.commit(snap).unwrap();
        match store.restore(&paths, &b) {
            Restored::Restored { handed, timings } => {
                assert_eq!(handed.stamped, 1);
                assert_eq!(timings["unit"], 2.0);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fs::read(b.join("target/debug/out")).unwrap(), b"built");
        // Used once: a second restore finds nothing until the next commit.
        assert!(matches!(store.restore(&paths, &c), Restored::Nothing));

        let snap = Snapshot::take(&a, &paths, store.staging()).unwrap();
        store.commit(snap).unwrap();
        fs::write(store.dir.join("slot-0/out/target/debug/out"), "truncated?").unwrap();
        assert!(matches!(store.restore(&paths, &c), Restored::Discarded(_)));
        assert!(!c.join("target").exists(), "nothing half-restored is left");
        assert!(
            !store.dir.join("slot-0").exists(),
            "a corrupt cache is removed"
        );
    }

    #[test]
    fn a_kept_entry_with_a_link_planted_or_an_absurd_time_is_discarded() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store {
            dir: tmp.path().join("cache"),
        };
        fs::create_dir_all(&store.dir).unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            fs::create_dir_all(d.join("src")).unwrap();
            fs::write(d.join("src/lib.rs"), "x").unwrap();
        }
        fs::create_dir_all(a.join("target/debug/.fingerprint")).unwrap();
        fs::write(a.join("target/debug/out"), "built").unwrap();
        let paths = vec!["target".to_string()];
        store
            .commit(Snapshot::take(&a, &paths, store.staging()).unwrap())
            .unwrap();
        // A link to a folder of this test's own, never followed.
        fs::create_dir_all(tmp.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(
            tmp.path().join("elsewhere"),
            store.dir.join("slot-0/out/target/debug/root"),
        )
        .unwrap();
        assert!(
            matches!(store.restore(&paths, &b), Restored::Discarded(why) if why.contains("not a plain file"))
        );

        let mut snap = Snapshot::take(&a, &paths, store.staging()).unwrap();
        snap.keep_timings(&BTreeMap::from([("run:unit".to_string(), 1e300)]));
        store.commit(snap).unwrap();
        assert!(
            matches!(store.restore(&paths, &b), Restored::Discarded(why) if why.contains("not a number of seconds"))
        );
        assert!(!b.join("target").exists());
    }
}
