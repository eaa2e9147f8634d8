//! The folders a gatekit process makes for itself, recorded as its own, and the clean-up of
//! what a dead process left.
//!
//! Everything a run needs only while it runs (the repositories it checks candidates out into,
//! the scratch `TMPDIR` of every suite) lives in one folder per process, the *session*:
//! `$TMPDIR/gatekit-<pid>-<start>/`, whose `owner` file names that pid and the process's start
//! time (in clock ticks since boot, from `/proc`). The pid alone would not do: pids are reused,
//! and a live stranger with a dead run's pid must not keep its folder alive, nor lose its own.
//! The start time makes the pair unique for the machine's uptime.
//!
//! Clean-up never goes by a name pattern alone. [`dead_sessions`] names a folder only when it
//! is a real directory (not a link), owned by this user, holding an `owner` file that matches
//! its name, and that owner is no longer running. Before `stale::clean_stale` removes it, it
//! kills every process still carrying the dead session's run tag (the runner's tags start with
//! the session's id), so a run killed with SIGKILL, which could clean nothing, is cleaned by
//! the next start of any gatekit tool on the machine.
//!
//! Folders a suite left read-only (Go's module cache does this) are made writable before they
//! are removed, and a removal reports whether it really happened, so no output says
//! `(removed)` of a folder that is still there.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The name every session folder starts with.
const SESSION_PREFIX: &str = "gatekit-";
/// The file in a session folder that names its owner.
const OWNER_FILE: &str = "owner";

/// One process's identity for the machine's uptime: its pid and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunId {
    pub pid: u32,
    /// Clock ticks since boot when the process started (field 22 of `/proc/PID/stat`).
    pub start: u64,
}

impl RunId {
    /// This process.
    pub fn current() -> RunId {
        static ME: OnceLock<RunId> = OnceLock::new();
        *ME.get_or_init(|| {
            let pid = std::process::id();
            RunId {
                pid,
                start: start_ticks(pid).unwrap_or(0),
            }
        })
    }

    /// `PID.START`: the prefix of every run tag this process hands out, so a dead session's
    /// processes can be told from a live one's even when the pid was reused.
    pub fn tag(&self) -> String {
        format!("{}.{}", self.pid, self.start)
    }

    /// Whether this process is still running (the same pid with the same start time).
    pub fn alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.start)
    }

    fn folder_name(&self) -> String {
        format!("{SESSION_PREFIX}{}-{}", self.pid, self.start)
    }

    fn parse_folder_name(name: &str) -> Option<RunId> {
        let rest = name.strip_prefix(SESSION_PREFIX)?;
        let (pid, start) = rest.split_once('-')?;
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(pid) || !all_digits(start) {
            return None;
        }
        Some(RunId {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }

    fn owner_text(&self) -> String {
        format!("gatekit session pid {} start {}\n", self.pid, self.start)
    }
}

/// A process's start time from `/proc/PID/stat`, `None` when there is no such process.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 3 (state) is the first after the name; starttime is field 22.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The folder sessions are made in: the temp dir, as the user set it.
fn base() -> PathBuf {
    std::env::temp_dir()
}

/// gatekit's state folder, for what must outlive a run (the registry of kept checkouts that
/// `gate clean` reads): `$GATEKIT_STATE_DIR`, else `$XDG_STATE_HOME/gatekit`, else
/// `~/.local/state/gatekit`, else a folder in the temp dir.
pub fn state_dir() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = from("GATEKIT_STATE_DIR") {
        return dir;
    }
    if let Some(dir) = from("XDG_STATE_HOME") {
        return dir.join("gatekit");
    }
    if let Some(home) = from("HOME") {
        return home.join(".local/state/gatekit");
    }
    base().join(format!("gatekit-state-{}", nix::unistd::geteuid()))
}

/// Where gatekit keeps what is worth keeping between runs but may be deleted at any time
/// (`[worktree] cache`: build outputs): `$GATEKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/gatekit`,
/// else `~/.cache/gatekit`, else a per-user folder in the temp dir. Unlike [`state_dir`], nothing
/// here is ever needed to clean up: deleting it only makes the next run build cold.
pub fn cache_dir() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = from("GATEKIT_CACHE_DIR") {
        return dir;
    }
    if let Some(dir) = from("XDG_CACHE_HOME") {
        return dir.join("gatekit");
    }
    if let Some(home) = from("HOME") {
        return home.join(".cache/gatekit");
    }
    base().join(format!("gatekit-cache-{}", nix::unistd::geteuid()))
}

static SESSION: OnceLock<PathBuf> = OnceLock::new();

/// This process's session folder, made (mode 0700, with its `owner` file) on first use.
pub fn session() -> io::Result<&'static Path> {
    if let Some(p) = SESSION.get() {
        return Ok(p);
    }
    // Threads (mutants' jobs) ask at once: one makes it, the others wait and find it made.
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = files::sync::lock(&MAKING);
    if let Some(p) = SESSION.get() {
        return Ok(p);
    }
    let me = RunId::current();
    let dir = base().join(me.folder_name());
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        // A folder by our name that we did not make in this process: a leftover of a dead
        // process with our pid and start time cannot exist, so only trust it when it is ours.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if !is_owned_session(&dir, &me) {
                return Err(io::Error::other(format!(
                    "{} exists and is not this process's session folder",
                    dir.display()
                )));
            }
        }
        Err(e) => return Err(e),
    }
    fs::write(dir.join(OWNER_FILE), me.owner_text())?;
    Ok(SESSION.get_or_init(|| dir))
}

/// Whether `meta` is of a real folder (not a link) that this user owns: the first test of
/// anything gatekit would remove as its own.
pub fn is_my_folder(meta: &fs::Metadata) -> bool {
    meta.file_type().is_dir() && meta.uid() == nix::unistd::geteuid().as_raw()
}

/// Whether `dir` is a real folder of this user whose `owner` file names `id`.
fn is_owned_session(dir: &Path, id: &RunId) -> bool {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return false;
    };
    if !is_my_folder(&meta) {
        return false;
    }
    let owner = dir.join(OWNER_FILE);
    match fs::symlink_metadata(&owner) {
        Ok(m) if m.file_type().is_file() => {}
        _ => return false,
    }
    fs::read_to_string(owner).is_ok_and(|text| text == id.owner_text())
}

/// A folder inside this process's session, removed when dropped.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    removed: bool,
}

impl ScratchDir {
    /// Makes `SESSION/LABEL-N` (mode 0700).
    pub fn new(label: &str) -> io::Result<ScratchDir> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let label: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        let path = session()?.join(format!("{label}-{}", SEQ.fetch_add(1, Ordering::Relaxed)));
        fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(ScratchDir {
            path,
            removed: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the folder now, read-only folders included; `Ok` only when it is gone.
    pub fn remove(mut self) -> io::Result<()> {
        self.removed = true;
        remove_all(&self.path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.removed {
            let _ = remove_all(&self.path);
        }
    }
}

/// Removes `path` and everything under it without following links, first giving the owner
/// write access to every folder in it (a suite may leave read-only ones). `Ok` only when
/// nothing is left at `path`.
pub fn remove_all(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_dir() {
        make_writable(path);
        fs::remove_dir_all(path)?;
    } else {
        fs::remove_file(path)?;
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        _ => Err(io::Error::other(format!(
            "{} is still there",
            path.display()
        ))),
    }
}

/// Gives the owner rwx on `dir` and every folder under it; links are not followed.
fn make_writable(dir: &Path) {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.file_type().is_dir() {
        return;
    }
    let mut perms = meta.permissions();
    if perms.mode() & 0o700 != 0o700 {
        perms.set_mode(perms.mode() | 0o700);
        let _ = fs::set_permissions(dir, perms);
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&e.path());
        }
    }
}

/// Removes this process's session folder; tools call it when their last run has ended.
pub fn finish() {
    // Only a folder that was made: a command that ran no child never had one.
    if let Some(dir) = SESSION.get() {
        let _ = remove_all(dir);
    }
}

/// The session folders of gatekit processes that are gone (killed, even with SIGKILL), each
/// with the id of its dead owner: only folders that pass every ownership check (see the module
/// docs). What to do with them is the `stale` module's business.
pub fn dead_sessions() -> Vec<(RunId, PathBuf)> {
    let Ok(entries) = fs::read_dir(base()) else {
        return Vec::new();
    };
    let me = RunId::current();
    let mut dead = Vec::new();
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(id) = RunId::parse_folder_name(&name) else {
            continue;
        };
        if id == me || id.alive() || !is_owned_session(&entry.path(), &id) {
            continue;
        }
        dead.push((id, entry.path()));
    }
    dead
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_round_trip_and_refuse_lookalikes() {
        let id = RunId {
            pid: 42,
            start: 777,
        };
        assert_eq!(RunId::parse_folder_name(&id.folder_name()), Some(id));
        for name in [
            "gatekit-42",
            "gatekit-42-",
            "gatekit--7",
            "gatekit-4x-7",
            "gatekit-run-42-0",
            "gatekit-apply-abc",
            "gatekit-42-7-1",
        ] {
            assert_eq!(RunId::parse_folder_name(name), None, "{name}");
        }
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = RunId::current();
        assert!(me.alive());
        let reused = RunId {
            start: me.start + 1,
            ..me
        };
        assert!(!reused.alive());
    }

    #[test]
    fn a_read_only_tree_is_removed_and_removal_tells_the_truth() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        fs::create_dir_all(top.join("ro/deeper")).unwrap();
        fs::write(top.join("ro/deeper/f"), "x").unwrap();
        for d in ["ro/deeper", "ro"] {
            fs::set_permissions(top.join(d), fs::Permissions::from_mode(0o555)).unwrap();
        }
        remove_all(&top).unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn removal_never_follows_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("keep"), "x").unwrap();
        let top = tmp.path().join("t");
        fs::create_dir(&top).unwrap();
        std::os::unix::fs::symlink(&victim, top.join("link")).unwrap();
        remove_all(&top).unwrap();
        assert!(victim.join("keep").exists());
    }
}
