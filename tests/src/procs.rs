//! Processes and folders as a test sees them: whether a pid lives, which processes carry a
//! run's tag, and a byte-for-byte snapshot of a folder.

use std::fs;
use std::path::{Path, PathBuf};

/// Whether a process with this pid exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Every entry under `dir` (not following links) with its kind, mode and bytes (a link's
/// target for a link), so a test can prove a folder, `.git` say, is byte-for-byte as it was.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode();
            let t = meta.file_type();
            if t.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    ("link".into(), mode, target.as_os_str().as_bytes().to_vec()),
                );
            } else if t.is_dir() {
                out.insert(rel, ("dir".into(), mode, Vec::new()));
                stack.push(path);
            } else {
                out.insert(
                    rel,
                    ("file".into(), mode, fs::read(&path).unwrap_or_default()),
                );
            }
        }
    }
    out
}

/// The live processes whose `GATEKIT_RUN` tag has a run that starts with `fragment` (a gatekit
/// process's `PID.` prefix, say):
/// how a test finds, and kills, only what its own run started.
pub fn tagged_pids(fragment: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return pids;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        let tagged = env
            .split(|b| *b == 0)
            .filter_map(|v| v.strip_prefix(b"GATEKIT_RUN="))
            .any(|v| {
                v.split(|b| *b == b':')
                    .any(|part| part.starts_with(fragment.as_bytes()))
            });
        if tagged && !zombie {
            pids.push(pid);
        }
    }
    pids
}
