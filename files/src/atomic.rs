//! Files written whole or not at all.
//!
//! A reader (a CI step, a dashboard, a reviewer's `cat`) must never see half a report, even when
//! the tool is killed mid-write, so each file is written to a temp file in the same folder and
//! renamed over the target, which is atomic on one filesystem. Every file is recorded in its
//! output folder first (see [`crate::outputs::claim`]).

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `text` to `path`, atomically.
pub fn write_text_atomic(path: &Path, text: &str) -> io::Result<()> {
    write_bytes_atomic(path, text.as_bytes())
}

/// Writes `bytes` to `path`, atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_all_atomic(&[(path, bytes)])
}

/// Writes several files so that each appears whole, and all of them at (nearly) the same
/// moment: every temp file is written and synced first, then they are renamed in order, so an
/// error or an interrupt before the renames leaves the old set untouched (a patch and its
/// manifest are a pair; one must never be replaced without the other).
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> io::Result<()> {
    // tempfile's temps are made with `O_EXCL` beside their target (so nothing planted under
    // the name is followed, and the rename stays on one file system), with the mode a plain
    // create would give (0666 less the umask, not tempfile's 0600), and removed when dropped,
    // so an error before the renames leaves neither a temp nor a changed target.
    let mut temps = Vec::new();
    for (path, bytes) in files {
        // Inside an output folder, recorded as this run's before it exists (and refused
        // when a file no run recorded is there): see `outputs`.
        crate::outputs::claim(path)?;
        let mut tmp = temp_beside(path)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_data()?;
        temps.push((tmp, path));
    }
    for (tmp, path) in temps {
        tmp.persist(path).map_err(|e| e.error)?;
        crate::outputs::note_written(path);
    }
    Ok(())
}

/// A new temp file `DIR/.NAME.XXXXXX.tmp` for `DIR/NAME`: in the same folder, so the rename is
/// atomic.
fn temp_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_text_atomic(&path, "{\n  \"a\": 1\n}\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\n  \"a\": 1\n}\n");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_written_file_has_the_mode_a_plain_create_gives() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        fs::write(&plain, "x").unwrap();
        let ours = dir.path().join("ours");
        write_bytes_atomic(&ours, b"x").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

    #[test]
    fn a_link_at_the_target_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("r.txt");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_bytes_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn an_error_before_the_renames_leaves_no_temp_and_no_target() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first");
        // The second target's folder does not exist: its temp cannot be made.
        let second = dir.path().join("missing/second");
        assert!(write_all_atomic(&[(&first, b"1"), (&second, b"2")]).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
