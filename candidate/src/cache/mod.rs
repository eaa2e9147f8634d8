//! Build outputs (`target/` for Cargo) handed from one checkout to another: from a run's first
//! working copy to the others, and from one run to the next through gatekit's cache folder.
//!
//! Within a run, the first copy builds (its baseline) and the others get its build folders
//! instead of N cold builds fighting for the cores. Between runs, a snapshot of the first
//! copy's folders taken right after its green baseline (the unmutated tree, built) is kept
//! under `cache_dir()/worktrees/KEY/`, and put into the next run's first copy before its
//! baseline, so a repeat run builds only what changed.
//!
//! The one thing to know: build tools judge staleness by times and some outputs hold the
//! absolute path they were built at. So a hand-over keeps every output's mtime (`copy`),
//! gives each source file of the new checkout its twin's mtime back only when its bytes are
//! the same (`stamps`), and makes Cargo rebuild every unit that baked in the old path
//! (`cargo`). The build tool still runs in every copy and decides for itself; the cache only
//! saves work it agrees is the same. That, and the baseline run again cold when it fails on a
//! cache, is why a cache never changes a verdict.
//!
//! The cache is keyed by the repository's path (its top folder, canonical): the outputs are
//! this checkout's, built by this user's toolchain; a root commit would merge unrelated clones
//! of one project (a CI workspace and a reviewer's clone) into one cache they would overwrite
//! in turn, and a shallow clone has no stable root. Saving is atomic: a snapshot is written
//! into a staging folder named for its run and renamed into place only when whole, so a killed
//! run leaves a staging folder the next run removes, never a half cache that is used.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use runner::scratch::RunId;

use crate::git::Git;
use crate::setup::WorktreeSetup;

mod cargo;
mod copy;
mod stamps;

/// The format of `meta.json` in a cache entry; another is discarded.
const META_VERSION: u32 = 1;

/// The build folders `setup` caches in checkouts of `repo`: its `cache` list when it says one
/// (`cache = []` is none), else the ecosystem's default, when git ignores it: `target` for a
/// Cargo project (`Cargo.toml` at the root).
pub fn paths_for(setup: &WorktreeSetup, repo: &Git) -> Vec<String> {
    if let Some(paths) = &setup.cache {
        return paths.clone();
    }
    let cargo = repo.dir().join("Cargo.toml").is_file();
    if cargo
        && !crate::setup::is_not_ignored(repo, "target")
        && !setup.link.iter().any(|l| l == "target")
    {
        vec!["target".into()]
    } else {
        Vec::new()
    }
}

/// `checkout/rel` when no folder on the way there is a link (nor `rel` itself): a cached path
/// is only ever read, written or removed inside the checkout, even when a tracked link sits
/// where its parent should be.
fn in_tree(checkout: &Path, rel: &str) -> Option<PathBuf> {
    use files::walk::End;
    match files::walk::below(checkout, Path::new(rel)) {
        // A link or a file at the end is not a folder of ours either.
        Ok(r) if matches!(r.end, End::Folder | End::Missing) => Some(r.path),
        _ => None,
    }
}

/// Removes the cached `paths` from `checkout` (a restore that is not trusted after all).
pub fn remove_outputs(checkout: &Path, paths: &[String]) {
    for rel in paths {
        if let Some(p) = in_tree(checkout, rel) {
            let _ = runner::scratch::remove_all(&p);
        }
    }
}

/// What a hand-over did in a checkout, for the run's notes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandedOver {
    /// Source files given their twin's mtime (unchanged since the outputs were built).
    pub stamped: usize,
    /// Cargo units made to rebuild because they baked in the old checkout's path.
    pub forgotten: usize,
    /// Build folders not handed over, and why (see [`refusal`]): the checkout builds them cold.
    pub refused: Vec<(String, String)>,
}

/// Why the build folder `from`, built in the checkout `built_at`, may not be handed to another
/// checkout or kept: it holds a link or a special file (a link may name the other checkout's
/// files; the rest are not data), or (for a build folder other than Cargo's, whose units
/// [`cargo`] makes safe) a file that names `built_at`, as a configure step writes absolute
/// paths: the other checkout would build or test the first one's files.
fn refusal(from: &Path, built_at: &Path) -> Option<String> {
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
    dir: PathBuf,
    meta: Meta,
    committed: bool,
    /// Paths left out, and why (see [`refusal`]).
    refused: Vec<(String, String)>,
}

/// `meta.json` of a cache entry.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    version: u32,
    /// The checkout the outputs were built in.
    built_at: PathBuf,
    paths: Vec<String>,
    sources: Vec<stamps::Stamp>,
    /// Every output file (path under `out/`, length): a cache that does not match is corrupt.
    outputs: Vec<(String, u64)>,
    /// Facts the caller keeps with the outputs (the slowest cold build and run of each suite,
    /// so a warm baseline never makes a derived timeout tighter than a cold one).
    timings: BTreeMap<String, f64>,
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
fn settle(checkout: &Path, meta: &Meta) -> HandedOver {
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
        let store = Store {
            dir: tmp.path().join("cache"),
        };
        fs::create_dir_all(&store.dir).unwrap();
        let snap = Snapshot::take(&a, &paths, store.staging()).unwrap();
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

    #[test]
    fn a_cached_path_behind_a_link_is_never_followed_out_of_the_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        let (checkout, outside) = (tmp.path().join("co"), tmp.path().join("outside"));
        fs::create_dir_all(&checkout).unwrap();
        fs::create_dir_all(outside.join("target")).unwrap();
        fs::write(outside.join("target/keep"), "mine").unwrap();
        std::os::unix::fs::symlink(&outside, checkout.join("out")).unwrap();
        assert_eq!(in_tree(&checkout, "out/target"), None);
        assert_eq!(in_tree(&checkout, "out"), None);
        assert_eq!(in_tree(&checkout, "target"), Some(checkout.join("target")));
        remove_outputs(&checkout, &["out/target".into()]);
        assert!(outside.join("target/keep").exists());
    }
}
