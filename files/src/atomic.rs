//! Files written whole or not at all.
//!
//! A reader (a CI step, a dashboard, a reviewer's `cat`) must never see half a report, even when
//! the tool is killed mid-write, so each file is written to a temp file in the same folder and
//! renamed over the target, which is atomic on one filesystem. Every file is recorded in its
//! output folder first (see [`crate::outputs::claim`]).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
    let mut temps: Vec<(PathBuf, &Path)> = Vec::new();
    let result = (|| {
        for (path, bytes) in files {
            // Inside an output folder, recorded as this run's before it exists (and refused
            // when a file no run recorded is there): see `outputs`.
            crate::outputs::claim(path)?;
            let tmp = temp_beside(path)?;
            temps.push((tmp.clone(), path));
            // A stale temp of ours, or a link someone planted under its name, goes first:
            // `create_new` then refuses to follow anything that appears in its place.
            let _ = fs::remove_file(&tmp);
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_data()?;
        }
        for (tmp, path) in &temps {
            fs::rename(tmp, path)?;
        }
        Ok(())
    })();
    if result.is_err() {
        for (tmp, _) in &temps {
            let _ = fs::remove_file(tmp);
        }
    }
    result
}

/// `DIR/.NAME.tmpPID` for `DIR/NAME`: in the same folder, so the rename is atomic.
fn temp_beside(path: &Path) -> io::Result<PathBuf> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    Ok(dir.join(tmp_name))
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
}
