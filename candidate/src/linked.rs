//! `[worktree] link`: the user's installed folders (`node_modules`, `.venv`) given to each
//! checkout as a private copy, and the proof that the user's own folder came out of the run
//! unchanged.
//!
//! A symlink to the user's folder shares it for writing too: `npm ci` empties `node_modules`
//! (it removes each entry through the link), vitest rewrites `node_modules/.vite`, a setup's
//! `pip install` writes into `.venv`, and the user's own install is changed or gone while the
//! run reports verdicts. A normal user cannot mount a read-only view (bind mounts need root),
//! and a farm of hard links would still let a tool that rewrites a file in place (vitest's
//! `results.json`) write into the user's inode. So each checkout gets a copy of its own:
//! folders made anew, files copied with `copy_file_range` (extents shared on btrfs and XFS,
//! an in-kernel copy elsewhere) keeping their mode and mtime, links made again; an absolute
//! link into the folder itself, and the `#!` line of a console script in a `bin` folder that
//! names the folder's interpreter, are pointed at the copy. Whatever setup and suites do to the
//! copy (remove it, install into it, write caches under it) stays in the checkout, and the
//! copy is a real folder, so a `node_modules/` line in `.gitignore` ignores it as it does the
//! user's.
//!
//! What a copy cannot stop is a program that writes into the user's folder by an absolute
//! path found elsewhere (a path baked into a config, a variable naming the user's checkout).
//! So a [`Fingerprint`] of each linked folder (every entry's kind, size, mode, mtime, inode and
//! link target) is taken before the first checkout is set up and compared at the end of the
//! run: a folder that changed fails the run loudly, naming what changed.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Copies the linked folder `rel` of `source` (the user's checkout) into `checkout`, where
/// nothing may stand yet. A link at `source/rel` itself (a `.venv` kept elsewhere) is
/// followed: the copy holds what it names. The folders on the way in the checkout must be real
/// folders: a tracked link there would take the copy outside the checkout.
pub fn copy_into(source: &Path, checkout: &Path, rel: &str) -> Result<(), String> {
    let from = source.join(rel);
    let real = fs::canonicalize(&from).map_err(|_| {
        format!(
            "worktree.link {rel:?}: not in the source checkout {} (install it there first)",
            files::escape::path(source)
        )
    })?;
    let to = match files::walk::below(checkout, Path::new(rel)) {
        Ok(files::walk::Reached {
            end: files::walk::End::Missing,
            path,
        }) => path,
        Ok(_) => {
            return Err(format!(
                "worktree.link {rel:?}: the checkout already has it (is it tracked by git?)"
            ))
        }
        Err(_) => {
            return Err(format!(
            "worktree.link {rel:?}: a folder on the way to it in the checkout is a link or a file"
        ))
        }
    };
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("worktree.link {rel:?}: {e}"))?;
    }
    let names = Names {
        real: real.clone(),
        spelled: std::path::absolute(&from).unwrap_or(from.clone()),
        copy: to.clone(),
    };
    copy_tree(&names, &real, &to).map_err(|e| {
        format!(
            "worktree.link {rel:?}: copying {} into the checkout: {e}",
            files::escape::path(&from)
        )
    })
}

/// The linked folder's names in the user's checkout (its real path, and as `link` spells it
/// from there) and its copy's: an absolute path to the former found in the copy is pointed at
/// the latter.
struct Names {
    real: PathBuf,
    spelled: PathBuf,
    copy: PathBuf,
}

impl Names {
    /// `path` with the user's folder swapped for the copy, when it lies inside it.
    fn moved(&self, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            return None;
        }
        [&self.real, &self.spelled]
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .map(|inside| self.copy.join(inside))
    }
}

/// Copies `from` (inside the user's folder) to `to`, which does not exist.
fn copy_tree(names: &Names, from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = fs::read_link(from)?;
        // An absolute link into the folder itself would lead writes back to the user's copy.
        let target = names.moved(&target).unwrap_or(target);
        std::os::unix::fs::symlink(target, to)?;
    } else if kind.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(names, &entry.path(), &to.join(entry.file_name()))?;
        }
        fs::set_permissions(to, meta.permissions())?;
        set_mtime(to, &meta);
    } else if kind.is_file() {
        match script_pointed_at_copy(names, from, &meta) {
            Some(bytes) => {
                fs::write(to, bytes)?;
                fs::set_permissions(to, meta.permissions())?;
            }
            None => {
                fs::copy(from, to)?;
            }
        }
        set_mtime(to, &meta);
    }
    // A socket or a FIFO is left out: nothing installs one for a suite to read.
    Ok(())
}

/// A console script in a `bin` folder (`.venv/bin/pytest`, `.venv/bin/pip`) whose `#!` line
/// names an interpreter inside the user's folder, with that line naming the copy's instead:
/// run as it was installed, it would import from (and write into) the user's virtualenv.
fn script_pointed_at_copy(names: &Names, from: &Path, meta: &fs::Metadata) -> Option<Vec<u8>> {
    let in_bin = from
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "bin");
    if !in_bin || meta.len() > 1 << 20 {
        return None;
    }
    let bytes = fs::read(from).ok()?;
    let rest = bytes.strip_prefix(b"#!")?;
    let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
    let line = std::str::from_utf8(&rest[..end]).ok()?.trim_start();
    let (program, args) = match line.split_once(' ') {
        Some((p, a)) => (p, Some(a)),
        None => (line, None),
    };
    let moved = names.moved(Path::new(program))?;
    let mut out = b"#!".to_vec();
    out.extend_from_slice(moved.as_os_str().as_bytes());
    if let Some(args) = args {
        out.push(b' ');
        out.extend_from_slice(args.as_bytes());
    }
    out.extend_from_slice(&rest[end..]);
    Some(out)
}

/// Gives `path` the modification time `meta` records (runners decide staleness by it), best
/// effort.
fn set_mtime(path: &Path, meta: &fs::Metadata) {
    if let (Ok(file), Ok(time)) = (fs::File::open(path), meta.modified()) {
        let _ = file.set_modified(time);
    }
}

/// One entry of a folder as the fingerprint sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    kind: u32,
    len: u64,
    mode: u32,
    mtime: (i64, i64),
    ino: u64,
    target: Option<PathBuf>,
}

/// Every entry below a folder, by its path from there (the folder itself is the empty path).
type Entries = Vec<(Vec<u8>, Stamp)>;

/// The state of the user's linked folders: each as written in `link`, its real path, and
/// every entry below it.
#[derive(Clone, Debug, Default)]
pub struct Fingerprint {
    folders: Vec<(String, PathBuf, Entries)>,
}

impl Fingerprint {
    /// Reads each of `links` (paths in `source`) now; a folder that cannot be read is recorded
    /// as empty (its copy fails with the reason).
    pub fn take(source: &Path, links: &[String]) -> Fingerprint {
        let folders = links
            .iter()
            .map(|rel| {
                let root = fs::canonicalize(source.join(rel)).unwrap_or_else(|_| source.join(rel));
                let entries = stamps(&root);
                (rel.clone(), root, entries)
            })
            .collect();
        Fingerprint { folders }
    }

    /// `None` when every folder is as it was; else one line naming the folder, how many
    /// entries differ, and the first of them.
    pub fn changed(&self) -> Option<String> {
        for (rel, root, before) in &self.folders {
            let now = stamps(root);
            if &now == before {
                continue;
            }
            let (mut gone, mut new, mut altered) = (Vec::new(), Vec::new(), Vec::new());
            let (mut i, mut j) = (0, 0);
            while i < before.len() || j < now.len() {
                match (before.get(i), now.get(j)) {
                    (Some(a), Some(b)) if a.0 == b.0 => {
                        if a.1 != b.1 {
                            altered.push(&a.0);
                        }
                        i += 1;
                        j += 1;
                    }
                    (Some(a), Some(b)) if a.0 < b.0 => {
                        gone.push(&a.0);
                        i += 1;
                    }
                    (Some(a), None) => {
                        gone.push(&a.0);
                        i += 1;
                    }
                    (_, Some(b)) => {
                        new.push(&b.0);
                        j += 1;
                    }
                    (None, None) => break,
                }
            }
            let mut parts = Vec::new();
            for (list, word) in [(&altered, "changed"), (&new, "new"), (&gone, "gone")] {
                if let Some(first) = list.first() {
                    let name = String::from_utf8_lossy(first);
                    let shown = if name.is_empty() {
                        rel.clone()
                    } else {
                        format!("{rel}/{name}")
                    };
                    parts.push(format!(
                        "{} {word} (first: {})",
                        list.len(),
                        files::escape::text(&shown)
                    ));
                }
            }
            return Some(format!(
                "worktree.link {:?}: your own folder {} changed during the run ({}): a setup or suite wrote into it by its path (or another program did meanwhile), so the run cannot be trusted and your install may need repairing",
                files::escape::text(rel),
                files::escape::path(root),
                parts.join(", ")
            ));
        }
        None
    }
}

/// Every entry below `root` (itself as the empty path), sorted by path, links not followed.
fn stamps(root: &Path) -> Entries {
    let mut out = Vec::new();
    walk(root, Vec::new(), &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn walk(path: &Path, rel: Vec<u8>, out: &mut Entries) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    let kind = meta.file_type();
    out.push((
        rel.clone(),
        Stamp {
            kind: meta.mode() & 0o170000,
            len: if kind.is_dir() { 0 } else { meta.len() },
            mode: meta.mode(),
            // A folder's own mtime moves when an entry is added or removed: those show as
            // entries; a file's says its bytes were written.
            mtime: if kind.is_dir() {
                (0, 0)
            } else {
                (meta.mtime(), meta.mtime_nsec())
            },
            ino: meta.ino(),
            target: kind
                .is_symlink()
                .then(|| fs::read_link(path).ok())
                .flatten(),
        },
    ));
    if !kind.is_dir() {
        return;
    }
    let Ok(entries) = fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let mut child = rel.clone();
        if !child.is_empty() {
            child.push(b'/');
        }
        child.extend_from_slice(entry.file_name().as_bytes());
        walk(&entry.path(), child, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let nm = t.path().join("src/node_modules");
        fs::create_dir_all(nm.join("a/lib")).unwrap();
        fs::write(nm.join("a/lib/index.js"), "x").unwrap();
        std::os::unix::fs::symlink("../a/lib/index.js", nm.join("rel")).unwrap();
        std::os::unix::fs::symlink(nm.join("a"), nm.join("abs")).unwrap();
        fs::create_dir(nm.join("bin")).unwrap();
        let script = format!("#!{}/bin/python -E\nimport sys\n", nm.display());
        fs::write(nm.join("bin/tool"), script).unwrap();
        fs::write(nm.join("bin/other"), "#!/usr/bin/python3\n").unwrap();
        fs::create_dir(t.path().join("co")).unwrap();
        t
    }

    #[test]
    fn the_copy_is_a_real_folder_and_removing_it_leaves_the_users_untouched() {
        let t = tree();
        let (src, co) = (t.path().join("src"), t.path().join("co"));
        let print = Fingerprint::take(&src, &["node_modules".into()]);
        copy_into(&src, &co, "node_modules").unwrap();
        let copy = co.join("node_modules");
        assert!(fs::symlink_metadata(&copy).unwrap().is_dir());
        assert_eq!(fs::read(copy.join("a/lib/index.js")).unwrap(), b"x");
        assert_eq!(
            fs::read_link(copy.join("rel")).unwrap(),
            Path::new("../a/lib/index.js")
        );
        // The absolute link into the folder now names the copy, not the user's folder.
        assert_eq!(fs::read_link(copy.join("abs")).unwrap(), copy.join("a"));
        // So does a console script's interpreter; other scripts are copied as they are.
        assert_eq!(
            fs::read_to_string(copy.join("bin/tool")).unwrap(),
            format!("#!{}/bin/python -E\nimport sys\n", copy.display())
        );
        assert_eq!(
            fs::read(copy.join("bin/other")).unwrap(),
            b"#!/usr/bin/python3\n"
        );
        fs::write(copy.join("a/lib/index.js"), "changed in place").unwrap();
        fs::remove_dir_all(&copy).unwrap();
        assert_eq!(
            fs::read(src.join("node_modules/a/lib/index.js")).unwrap(),
            b"x"
        );
        assert_eq!(print.changed(), None);
    }

    #[test]
    fn a_write_into_the_users_folder_is_named_by_the_fingerprint() {
        let t = tree();
        let src = t.path().join("src");
        let print = Fingerprint::take(&src, &["node_modules".into()]);
        fs::write(src.join("node_modules/a/lib/index.js"), "y").unwrap();
        let said = print.changed().expect("a changed file is seen");
        assert!(
            said.contains("1 changed (first: node_modules/a/lib/index.js)"),
            "{said}"
        );
        fs::remove_dir_all(src.join("node_modules/a")).unwrap();
        let said = print.changed().unwrap();
        assert!(said.contains("3 gone (first: node_modules/a)"), "{said}");
    }

    #[test]
    fn a_checkout_folder_on_the_way_that_is_a_link_is_refused() {
        let t = tree();
        let (src, co) = (t.path().join("src"), t.path().join("co"));
        fs::create_dir(t.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(t.path().join("elsewhere"), co.join("web")).unwrap();
        fs::create_dir(src.join("web")).unwrap();
        fs::rename(src.join("node_modules"), src.join("web/node_modules")).unwrap();
        let err = copy_into(&src, &co, "web/node_modules").unwrap_err();
        assert!(err.contains("is a link or a file"), "{err}");
        assert!(fs::read_dir(t.path().join("elsewhere"))
            .unwrap()
            .next()
            .is_none());
    }
}
