//! Modification times that no build tool can mistake for an earlier content of the same file:
//! the one rule every writer of a checkout's files follows (a mutant's swap, its restore, the
//! repair of a checkout a suite changed, a source the cache finds changed).
//!
//! Tools trust times. Python reuses a `.pyc` whose recorded source size and whole-second mtime
//! match the source; make, ninja and `tsc -b` rebuild only what is newer than its output. A
//! mutant is the same size as the original more often than not, and a fast suite writes it in
//! the same second as the previous mutant or restore: with the kernel's own times, Python would
//! run the bytecode of the previous content and the verdict would describe that content.
//!
//! So each write gets a time from [`stamp`], which for that path is:
//! - at least now, so it is newer than anything built from an earlier content (make, ninja);
//! - in a whole second that no *other* content of the path ever had from us, and above every
//!   second of a write we did not make (the file's mtime and ctime when we came to write it:
//!   the checkout's creation, a suite's edit, the cache's stamp), so Python never matches an
//!   old `.pyc`. The same bytes may get a second they had before (the original, restored after
//!   each mutant): the stamp then names those very bytes, which is all a tool compares;
//! - never more than 2 s ahead of the clock, so make and cargo see no clock skew.
//!
//! Within those bounds there are two or three seconds to hand out; they run out only when one
//! file is written with new bytes more often than once a second for a while (a suite that runs
//! in a fraction of a second, many mutants of one file in a row). Then [`stamp`] waits (under a
//! second per mutant, past the burst) rather than give a time a tool could misread: a slower
//! run beats a wrong verdict, and a suite that takes a second or more never waits at all.
//!
//! What was handed out is remembered per file for the whole process (keyed by the canonical
//! path), across checkouts, so a fresh checkout made where a spoiled one was cannot reuse a
//! second either.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use manifests::Digest;

/// How far ahead of the clock a time may be.
const AHEAD: Duration = Duration::from_secs(2);

/// What was handed out for one file.
#[derive(Debug, Default)]
struct Seen {
    /// Whole seconds we gave, and the bytes they named (only seconds from now on matter: older
    /// ones are dropped).
    ours: Vec<(i64, Digest)>,
    /// The latest second a write we did not make may have happened in.
    foreign: i64,
    /// The file's (mtime, ctime) in nanoseconds right after our last write: a file still
    /// showing them has not been touched since.
    last: Option<(i128, i128)>,
}

fn clock() -> &'static Mutex<HashMap<PathBuf, Seen>> {
    static CLOCK: std::sync::OnceLock<Mutex<HashMap<PathBuf, Seen>>> = std::sync::OnceLock::new();
    CLOCK.get_or_init(Default::default)
}

fn ns(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

fn secs(t: SystemTime) -> i64 {
    ns(t).div_euclid(1_000_000_000) as i64
}

fn times(meta: &fs::Metadata) -> (i128, i128) {
    let m = meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128;
    let c = meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128;
    (m, c)
}

fn key(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Gives the file just written at `path` (open as `file`, holding the bytes `digest` names) a
/// modification time under this module's rule, and returns it.
///
/// `before` is what stood at the path just before the write (`None`: nothing, or unknown): a
/// time we did not give there is a write we did not make, and the new time goes above it.
pub fn stamp(
    path: &Path,
    file: &File,
    digest: Digest,
    before: Option<&fs::Metadata>,
) -> io::Result<SystemTime> {
    let key = key(path);
    let (second, at) = {
        let mut all = files::sync::lock(clock());
        let seen = all.entry(key.clone()).or_default();
        let now = SystemTime::now();
        let today = secs(now);
        match before {
            Some(meta) => {
                let (m, c) = times(meta);
                if seen.last != Some((m, c)) {
                    let latest = m.max(c).div_euclid(1_000_000_000) as i64;
                    seen.foreign = seen.foreign.max(latest);
                }
            }
            // Something may have stood there and gone this very second.
            None => seen.foreign = seen.foreign.max(today),
        }
        seen.ours.retain(|(s, _)| *s >= today);
        let mut second = today.max(seen.foreign + 1);
        while seen.ours.iter().any(|(s, d)| *s == second && *d != digest) {
            second += 1;
        }
        // Reserved now, so a write to the same path from another thread cannot take it.
        if !seen.ours.contains(&(second, digest)) {
            seen.ours.push((second, digest));
        }
        let at = if second == today {
            now
        } else {
            UNIX_EPOCH + Duration::from_secs(second as u64)
        };
        (second, at)
    };
    // The rare case: wait, outside the lock, until the time is no more than AHEAD away.
    let earliest = UNIX_EPOCH + Duration::from_secs(second as u64) - AHEAD;
    if let Ok(wait) = earliest.duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
    file.set_modified(at)?;
    let after = file.metadata()?;
    let mut all = files::sync::lock(clock());
    all.entry(key).or_default().last = Some(times(&after));
    Ok(at)
}

/// Notes that an earlier content of `path` had the time `at` (a build output the cache brought
/// names it), so no other content of the path gets that second from [`stamp`].
pub fn note(path: &Path, at: SystemTime) {
    let mut all = files::sync::lock(clock());
    let seen = all.entry(key(path)).or_default();
    seen.foreign = seen.foreign.max(secs(at));
}

/// [`stamp`] for a file written by someone else just now (git's `checkout-index`): read back,
/// opened without following a link; links and other non-files are left alone (no tool reads a
/// link's own time).
pub fn stamp_written(path: &Path, before: Option<&fs::Metadata>) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(());
    }
    let digest = manifests::hash_reader(&file)?;
    stamp(path, &file, digest, before).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, bytes: &[u8]) -> SystemTime {
        let before = fs::symlink_metadata(path).ok();
        fs::write(path, bytes).unwrap();
        let f = File::options().write(true).open(path).unwrap();
        let d = Digest::of(bytes);
        stamp(path, &f, d, before.as_ref()).unwrap()
    }

    #[test]
    fn other_bytes_never_share_a_second_and_no_time_is_past_the_bound() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("m.py");
        fs::write(&p, "x = 1\n").unwrap();
        let made = secs(fs::metadata(&p).unwrap().modified().unwrap());
        let start = SystemTime::now();
        let mut by_second: HashMap<i64, Vec<u8>> = HashMap::new();
        let mut last_time = None;
        for k in 0..5u8 {
            for bytes in [format!("x = {k}\n").into_bytes(), b"x = 1\n".to_vec()] {
                let t = write(&p, &bytes);
                let got = fs::metadata(&p).unwrap().modified().unwrap();
                assert_eq!(got, t);
                let s = secs(t);
                assert!(s > made, "above the checkout's own second");
                assert!(t <= SystemTime::now() + AHEAD, "at most 2 s ahead");
                assert!(t >= start, "never in the past");
                let prior = by_second.entry(s).or_insert_with(|| bytes.clone());
                assert_eq!(*prior, bytes, "second {s} named two contents");
                last_time = Some(t);
            }
        }
        // Ten writes, six contents: at least four seconds went by, the rest was waited.
        assert!(last_time.unwrap() > start);
    }

    #[test]
    fn a_write_we_did_not_make_pushes_the_next_time_above_it() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.txt");
        fs::write(&p, "one").unwrap();
        let t1 = write(&p, b"two");
        // A suite rewrites it and sets its time ahead by a second: foreign, and above ours.
        fs::write(&p, "tri").unwrap();
        let ahead = t1 + Duration::from_secs(1);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(ahead)
            .unwrap();
        let t2 = write(&p, b"one");
        assert!(secs(t2) > secs(ahead), "{t2:?} vs {ahead:?}");
    }
}
