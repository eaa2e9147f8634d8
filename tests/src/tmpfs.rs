//! A small tmpfs mounted inside a test's own temp dir, for the full-disk tests: unmounted when
//! dropped, and a skip (never a silent pass) where this machine cannot mount one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted on a folder of the test's own; unmounted when dropped.
#[derive(Debug)]
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`512k`, `1m`) on `dir`, made first; `None`, with the skip
    /// logged, when this machine cannot mount one.
    pub fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                crate::skip(
                    "tmpfs",
                    &format!(
                        "cannot mount a tmpfs here: {}",
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                );
                None
            }
            Err(e) => {
                crate::skip("tmpfs", &format!("cannot run mount: {e}"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}
