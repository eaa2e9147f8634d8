//! Every file a gatekit run writes, guarded in one place: the rules a path must pass before any
//! suite runs, and the record of what a run wrote in its output folder.
//!
//! A run declares its inputs (patch, manifest, gate.toml, spec) and its outputs (`--out` and the
//! files in it, `--junit`, `--log`, ...) in one [`Plan`], and [`Plan::check`] refuses, as one
//! line naming the path and the reason (exit 2), any output that:
//!
//! - is a link, or reaches its place through a link gatekit would have to follow. The rule: a
//!   link is followed only where the user typed it as a folder (the folders on the way to
//!   `--out DIR` or `--junit FILE`, and `--out DIR` itself, may be links the user set up); the
//!   file an output is written to, and every file or folder gatekit picks inside an output
//!   folder (`logs/`, `gate.json`), never is;
//! - is, is inside, or holds one of the run's inputs (compared by canonical path, and by device
//!   and inode for existing files, so a hard link counts);
//! - is another output of the same run, or a user-named file inside a folder the run fills;
//! - is inside the user's repository's `.git`, or inside a gatekit checkout (a folder whose
//!   `.git/gatekit-owner` marks it as one, the checkout under test included);
//! - already exists inside an output folder without an earlier run having recorded it as its
//!   own: a user's file is never overwritten.
//!
//! Ownership of an output folder's contents lives in its record, `DIR/.gatekit-written`: every
//! file a run writes there is listed before it is created (so a killed run's files are listed
//! too), and a fresh run removes only what the record lists ([`clear_previous`]), never a file
//! by its name pattern. Writes go through [`create`] (logs, opened with `O_NOFOLLOW` so a link
//! raced in is not followed) or `atomic::write_all_atomic` (reports: a temp file made
//! with `O_EXCL` in the same folder, then renamed), both of which record the file first.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

/// The record of what gatekit wrote in an output folder (NUL-separated relative paths).
pub const RECORD_FILE: &str = ".gatekit-written";

/// A path the guard refuses: `PATH: REASON`.
#[derive(Debug, Error)]
#[error("{path}: {reason}")]
pub struct Refused {
    pub path: String,
    pub reason: String,
}

fn refuse(path: &Path, reason: impl Into<String>) -> Refused {
    Refused {
        path: crate::escape::path(path),
        reason: reason.into(),
    }
}

#[derive(Clone, Debug)]
struct Named {
    what: String,
    path: PathBuf,
}

/// An output file: named by the user, or picked by gatekit inside one of its output folders.
#[derive(Clone, Debug)]
struct OutFile {
    what: String,
    path: PathBuf,
    /// For a file gatekit picks: the output folder it is in, and the path below it.
    within: Option<(PathBuf, PathBuf)>,
}

/// The inputs and outputs of one run, checked together before anything is written.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    inputs: Vec<Named>,
    folders: Vec<Named>,
    files: Vec<OutFile>,
    /// Folders gatekit makes inside an output folder (`logs/`): (folder, path below it).
    subfolders: Vec<(PathBuf, PathBuf)>,
    forbidden: Vec<Named>,
}

impl Plan {
    pub fn new() -> Plan {
        Plan::default()
    }

    /// A file the run reads (`what`: `patch`, `gate.toml`, ...).
    pub fn input(&mut self, what: &str, path: &Path) -> &mut Plan {
        self.inputs.push(Named {
            what: what.into(),
            path: path.to_path_buf(),
        });
        self
    }

    /// An output folder the user named (`--out`).
    pub fn folder(&mut self, what: &str, path: &Path) -> &mut Plan {
        self.folders.push(Named {
            what: what.into(),
            path: path.to_path_buf(),
        });
        self
    }

    /// An output file the user named (`--junit`, `--log`).
    pub fn file(&mut self, what: &str, path: &Path) -> &mut Plan {
        self.files.push(OutFile {
            what: what.into(),
            path: path.to_path_buf(),
            within: None,
        });
        self
    }

    /// A file gatekit writes at `rel` inside output folder `dir` (`gate.json`, `logs/x.log`).
    pub fn file_in(&mut self, dir: &Path, rel: &str) -> &mut Plan {
        self.files.push(OutFile {
            what: rel.into(),
            path: dir.join(rel),
            within: Some((dir.to_path_buf(), PathBuf::from(rel))),
        });
        self
    }

    /// A folder gatekit makes at `rel` inside output folder `dir` (`logs`).
    pub fn folder_in(&mut self, dir: &Path, rel: &str) -> &mut Plan {
        self.subfolders
            .push((dir.to_path_buf(), PathBuf::from(rel)));
        self
    }

    /// A place no output may be inside (`what`: "the repository's .git", "the checkout").
    pub fn forbid(&mut self, what: &str, path: &Path) -> &mut Plan {
        self.forbidden.push(Named {
            what: what.into(),
            path: path.to_path_buf(),
        });
        self
    }

    /// Every rule of the module docs, or the first path that breaks one.
    pub fn check(&self) -> Result<(), Refused> {
        let inputs: Vec<(&Named, PathBuf, Option<FileId>)> = self
            .inputs
            .iter()
            .map(|i| (i, resolve(&i.path), identity(&i.path)))
            .collect();
        let forbidden: Vec<(&Named, PathBuf)> = self
            .forbidden
            .iter()
            .map(|f| (f, resolve(&f.path)))
            .collect();
        let common = |path: &Path, real: &Path| -> Result<(), Refused> {
            for (f, zone) in &forbidden {
                if real.starts_with(zone) {
                    return Err(refuse(
                        path,
                        format!("is inside {}; gatekit never writes there", f.what),
                    ));
                }
            }
            if let Some(checkout) = gatekit_checkout_around(real) {
                return Err(refuse(
                    path,
                    format!(
                        "is inside a gatekit checkout ({}); gatekit never writes there",
                        crate::escape::path(&checkout)
                    ),
                ));
            }
            Ok(())
        };
        for d in &self.folders {
            if let Ok(meta) = fs::metadata(&d.path) {
                if !meta.is_dir() {
                    return Err(refuse(&d.path, format!("{} is not a folder", d.what)));
                }
            } else if fs::symlink_metadata(&d.path).is_ok() {
                return Err(refuse(
                    &d.path,
                    "is a link to nothing; gatekit never writes through one",
                ));
            }
            let real = resolve(&d.path);
            for (i, at, _) in &inputs {
                if at.starts_with(&real) {
                    return Err(refuse(
                        &d.path,
                        format!(
                            "holds the run's {} ({}); pick a {} of its own",
                            i.what,
                            crate::escape::path(&i.path),
                            d.what
                        ),
                    ));
                }
                if real.starts_with(at) {
                    return Err(refuse(&d.path, format!("is the run's {}", i.what)));
                }
            }
            common(&d.path, &real)?;
            Record::read(&d.path).map_err(|e| refuse(&d.path.join(RECORD_FILE), e.to_string()))?;
            for (dir, rel) in self.subfolders.iter().filter(|(dir, _)| dir == &d.path) {
                no_links_below(dir, rel, true)?;
            }
        }
        let mut seen: Vec<(&OutFile, PathBuf, Option<FileId>)> = Vec::new();
        for f in &self.files {
            match &f.within {
                Some((dir, rel)) => no_links_below(dir, rel, false)?,
                None => match fs::symlink_metadata(&f.path) {
                    Ok(m) if m.file_type().is_symlink() => {
                        return Err(refuse(
                            &f.path,
                            "is a link; gatekit never writes through one",
                        ))
                    }
                    Ok(m) if m.is_dir() => {
                        return Err(refuse(&f.path, "is a folder, not a file to write"))
                    }
                    _ => {}
                },
            }
            let real = resolve(&f.path);
            let id = identity(&f.path);
            for (i, at, their) in &inputs {
                if real == *at || real.starts_with(at) || (id.is_some() && id == *their) {
                    return Err(refuse(
                        &f.path,
                        format!(
                            "is the run's {} ({}); {} would overwrite it",
                            i.what,
                            crate::escape::path(&i.path),
                            f.what
                        ),
                    ));
                }
            }
            for (other, at, their) in &seen {
                if real == *at || (id.is_some() && id == *their) {
                    return Err(refuse(
                        &f.path,
                        format!(
                            "is also the run's {}; each output needs a path of its own",
                            other.what
                        ),
                    ));
                }
            }
            if f.within.is_none() {
                for (dir, rel) in &self.subfolders {
                    if real.starts_with(resolve(&dir.join(rel))) {
                        return Err(refuse(
                            &f.path,
                            format!(
                                "is inside {}, which the run fills",
                                crate::escape::path(&dir.join(rel))
                            ),
                        ));
                    }
                }
            }
            common(&f.path, &real)?;
            // A file already in an output folder is overwritten only when a run recorded it.
            for d in &self.folders {
                let top = resolve(&d.path);
                let Ok(rel) = real.strip_prefix(&top) else {
                    continue;
                };
                if fs::symlink_metadata(&f.path).is_err() {
                    continue;
                }
                let record = Record::read(&d.path)
                    .map_err(|e| refuse(&d.path.join(RECORD_FILE), e.to_string()))?;
                if !record.listed.contains(rel) {
                    return Err(refuse(&f.path, NOT_OURS));
                }
            }
            seen.push((f, real, id));
        }
        // What the user named as outputs, so that a write there counts as the run's work
        // having begun (see [`written`]); gatekit's own scratch never does.
        let mut planned = planned();
        for p in self.folders.iter().map(|f| &f.path) {
            planned.push(std::path::absolute(p).unwrap_or_else(|_| p.clone()));
        }
        for f in self.files.iter().filter(|f| f.within.is_none()) {
            planned.push(std::path::absolute(&f.path).unwrap_or_else(|_| f.path.clone()));
        }
        Ok(())
    }
}

const NOT_OURS: &str = "exists and no earlier gatekit run recorded it as its own; it is left \
     alone: move it, or pick another output path";

/// Refuses a link (or a file where a folder goes) on the way from `dir` to `dir/rel`.
fn no_links_below(dir: &Path, rel: &Path, last_is_folder: bool) -> Result<(), Refused> {
    use crate::walk::{below, Blocked, End, Reached};
    const LINK: &str = "is a link; gatekit never writes through one";
    match below(dir, rel) {
        Err(Blocked::NotPlain) => Err(refuse(&dir.join(rel), "leaves its output folder")),
        Err(Blocked::Link(at)) => Err(refuse(&at, LINK)),
        Err(Blocked::NotFolder(at)) => Err(refuse(&at, "is not a folder")),
        Ok(Reached { path, end }) => match end {
            End::Missing => Ok(()),
            End::Link => Err(refuse(&path, LINK)),
            End::Folder if !last_is_folder => {
                Err(refuse(&path, "is a folder, not a file to write"))
            }
            End::Folder => Ok(()),
            End::File | End::Other if last_is_folder => Err(refuse(&path, "is not a folder")),
            End::File | End::Other => Ok(()),
        },
    }
}

/// `path` absolute, with its existing part canonical (links the user put on the way followed)
/// and the rest made lexically plain.
pub fn resolve(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut tail = Vec::new();
    let mut head = abs.as_path();
    loop {
        if let Ok(real) = head.canonicalize() {
            let mut out = real;
            for part in tail.iter().rev() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (head.parent(), head.components().next_back()) {
            (Some(parent), Some(last)) => {
                tail.push(last);
                head = parent;
            }
            _ => return abs,
        }
    }
}

/// Device and inode: one file, whatever its names.
type FileId = (u64, u64);

/// Device and inode of an existing file (following links), so two names of one file match.
fn identity(path: &Path) -> Option<FileId> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The nearest folder around `real` (itself included) that is a gatekit checkout.
fn gatekit_checkout_around(real: &Path) -> Option<PathBuf> {
    real.ancestors()
        .find(|a| {
            fs::symlink_metadata(a.join(".git").join("gatekit-owner"))
                .is_ok_and(|m| m.file_type().is_file())
        })
        .map(Path::to_path_buf)
}

/// What the record of one output folder lists.
#[derive(Debug, Default)]
struct Record {
    /// The folder, canonical.
    dir: PathBuf,
    /// The folder as the user named it, made absolute (links in it not followed).
    given: PathBuf,
    listed: BTreeSet<PathBuf>,
}

impl Record {
    /// Reads `dir`'s record; none yet is an empty one. A record that is not a regular file (a
    /// planted link) is refused rather than trusted.
    fn read(dir: &Path) -> io::Result<Record> {
        let path = dir.join(RECORD_FILE);
        let mut listed = BTreeSet::new();
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
            Ok(m) if !m.file_type().is_file() => {
                return Err(io::Error::other("is not a regular file"))
            }
            Ok(_) => {
                let mut bytes = Vec::new();
                OpenOptions::new()
                    .read(true)
                    .custom_flags(nix::libc::O_NOFOLLOW)
                    .open(&path)?
                    .read_to_end(&mut bytes)?;
                for name in bytes.split(|b| *b == 0).filter(|n| !n.is_empty()) {
                    let rel = PathBuf::from(std::ffi::OsStr::from_bytes(name));
                    // Only plain relative paths below the folder: a record cannot point outside.
                    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
                        listed.insert(rel);
                    }
                }
            }
        }
        Ok(Record {
            dir: resolve(dir),
            given: std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
            listed,
        })
    }

    fn append(&mut self, rel: &Path) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(self.dir.join(RECORD_FILE))?;
        let mut line = rel.as_os_str().as_bytes().to_vec();
        line.push(0);
        f.write_all(&line)?;
        self.listed.insert(rel.to_path_buf());
        Ok(())
    }
}

/// The output folders this process writes in, each with its record.
static OWNED: Mutex<Vec<Record>> = Mutex::new(Vec::new());

/// Set once this process wrote a file among its outputs: from then on a failure is no longer
/// "nothing was written or changed" (see [`written`]).
static WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process has begun to write its outputs: a file made or replaced inside an
/// output folder it took, or at a path the user named in a checked [`Plan`] (making the
/// folders is not yet writing). The exit policy reads it: an error before is bad input (exit
/// 2, nothing written or changed); an error of the same kind after is an I/O failure after work
/// began (exit 74), whose reports may be incomplete.
pub fn written() -> bool {
    WRITTEN.load(std::sync::atomic::Ordering::Relaxed)
}

fn mark_written() {
    WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The outputs the user named in a checked [`Plan`] (folders and files), absolute.
static PLANNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn planned() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    crate::sync::lock(&PLANNED)
}

/// Notes that `path` was written (made or replaced): when it is an output of this run (inside
/// an output folder it owns, or a path the user named in a checked plan), the run's work has
/// begun (see [`written`]). A file in gatekit's own scratch or checkouts is not an output.
pub fn note_written(path: &Path) {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let real =
        resolve(abs.parent().unwrap_or(Path::new("/"))).join(abs.file_name().unwrap_or_default());
    let output = owned()
        .iter()
        .any(|r| abs.starts_with(&r.given) || real.starts_with(&r.dir))
        || planned().iter().any(|p| abs.starts_with(p));
    if output {
        mark_written();
    }
}

fn owned() -> std::sync::MutexGuard<'static, Vec<Record>> {
    crate::sync::lock(&OWNED)
}

/// Makes `dir` (if missing) and takes it as an output folder of this process: every file
/// written in it from now on is recorded, and one that is there unrecorded is refused.
pub fn own(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let record = Record::read(dir)
        .map_err(|e| io::Error::other(format!("{}: {e}", dir.join(RECORD_FILE).display())))?;
    let mut all = owned();
    all.retain(|r| r.dir != record.dir);
    all.push(record);
    Ok(())
}

/// Removes from `dir` every file an earlier run recorded as its own (never a folder, never
/// through a link, never a file the record does not list), and empties the record: what a
/// fresh run does instead of clearing by name. Returns how many files it removed.
pub fn clear_previous(dir: &Path) -> io::Result<usize> {
    let real = resolve(dir);
    let mut all = owned();
    let Some(record) = all.iter_mut().find(|r| r.dir == real) else {
        return Err(io::Error::other(format!(
            "{}: not an output folder of this run",
            dir.display()
        )));
    };
    let mut removed = 0;
    for rel in std::mem::take(&mut record.listed) {
        let path = record.dir.join(&rel);
        // A listed path reached through a link (a folder replaced since) is not ours to follow.
        if no_links_below(&record.dir, &rel, false).is_err() {
            continue;
        }
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) && fs::remove_file(&path).is_ok()
        {
            removed += 1;
        }
    }
    let path = record.dir.join(RECORD_FILE);
    match fs::remove_file(&path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    Ok(removed)
}

/// Records `path` as written by this run when it is inside an owned output folder: refused
/// when a file is already there that no run recorded, or when a link is on the way.
pub fn claim(path: &Path) -> io::Result<()> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut all = owned();
    // Named below an owned folder: every step below it must still be a real folder (a link
    // raced in since the checks is refused, not followed).
    // The most specific owned folder holds the record (`probe clients` owns --out, and each
    // client's bracket run the folder of its own inside it).
    if let Some(record) = all
        .iter()
        .filter(|r| abs.starts_with(&r.given))
        .max_by_key(|r| r.given.as_os_str().len())
    {
        let rel = abs.strip_prefix(&record.given).unwrap_or(Path::new(""));
        no_links_below(&record.given, rel, false).map_err(io::Error::other)?;
    }
    let real =
        resolve(abs.parent().unwrap_or(Path::new("/"))).join(abs.file_name().unwrap_or_default());
    let Some(record) = all
        .iter_mut()
        .filter(|r| real.starts_with(&r.dir))
        .max_by_key(|r| r.dir.as_os_str().len())
    else {
        return Ok(());
    };
    let rel = real
        .strip_prefix(&record.dir)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if rel.as_os_str().is_empty() || rel == Path::new(RECORD_FILE) {
        return Err(io::Error::other(format!(
            "{}: not a file gatekit writes",
            path.display()
        )));
    }
    if record.listed.contains(&rel) {
        return Ok(());
    }
    if fs::symlink_metadata(&real).is_ok() {
        return Err(io::Error::other(format!("{}: {NOT_OURS}", path.display())));
    }
    record.append(&rel)
}

/// Opens `path` for writing (made or emptied), recorded first ([`claim`]); a link at `path` is
/// refused by the kernel (`O_NOFOLLOW`), so one raced in after the checks is not followed.
pub fn create(path: &Path) -> io::Result<File> {
    claim(path)?;
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)?;
    note_written(path);
    Ok(file)
}
