//! The shards' logs, copied into `OUT/logs`: every path checked before anything is opened
//! (`logs/NAME`, a regular file right inside the shard's own `logs/`, no link on the way), and
//! every copy a write-and-rename that replaces what is at the name rather than writing
//! through it.

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};

use files::escape;

use crate::record::RunReport;

/// The one rule for a log path read from a shard: `logs/NAME`, NAME one plain component.
/// Returns NAME.
pub(super) fn log_name(log: &str) -> Result<&str, &'static str> {
    if log.contains('\0') {
        return Err("holds a NUL byte");
    }
    let path = Path::new(log);
    if path.is_absolute() {
        return Err("is absolute");
    }
    let parts: Vec<Component> = path.components().collect();
    match parts.as_slice() {
        [Component::Normal(dir), Component::Normal(file)] if *dir == "logs" => {
            file.to_str().ok_or("is not UTF-8")
        }
        _ if parts.iter().any(|c| matches!(c, Component::ParentDir)) => Err("climbs out with `..`"),
        _ => Err("is not of the form logs/NAME"),
    }
}

/// Refuses an `--out` that is one of the shard folders (by canonical path and by device and
/// inode), so a log can never be copied onto itself.
pub(super) fn refuse_out_among_shards(out: &Path, dirs: &[PathBuf]) -> Result<()> {
    let Ok(out_meta) = fs::metadata(out) else {
        return Ok(()); // Not there yet: it cannot be a shard folder.
    };
    let out_real = out.canonicalize().ok();
    for dir in dirs {
        let same_inode =
            fs::metadata(dir).is_ok_and(|m| m.dev() == out_meta.dev() && m.ino() == out_meta.ino());
        if same_inode || (out_real.is_some() && dir.canonicalize().ok() == out_real) {
            bail!(
                "--out {} is the shard folder {}: merge into a folder of its own",
                escape::path(out),
                escape::path(dir)
            );
        }
    }
    Ok(())
}

/// Every log to copy, as (source file, name in `OUT/logs`), each checked: the path's form, then
/// the file it leads to (a regular file right inside the shard's own `logs/`, no link on the
/// way). The rows' logs from every shard, the baseline's from the first (whose baseline the
/// merged report shows). A log that is not there is not copied.
pub(super) fn plan_copies(shards: &[(PathBuf, RunReport)]) -> Result<Vec<(PathBuf, String)>> {
    let mut copies = Vec::new();
    for (i, (dir, report)) in shards.iter().enumerate() {
        let json = escape::path(&dir.join("mutants.json"));
        let rows = report.mutants.iter().enumerate().flat_map(|(r, row)| {
            row.run
                .iter()
                .map(move |s| (format!("mutants[{r}].run.log"), s.log.as_str()))
                .chain(
                    row.also
                        .iter()
                        .enumerate()
                        .map(move |(a, s)| (format!("mutants[{r}].also[{a}].log"), s.log.as_str())),
                )
        });
        let baselines = report
            .baseline
            .iter()
            .enumerate()
            .filter(|_| i == 0)
            .map(|(b, base)| (format!("baseline[{b}].log"), base.log.as_str()));
        let shard_root = dir.canonicalize().with_context(|| escape::path(dir))?;
        for (field, log) in rows.chain(baselines) {
            let file = log_name(log).map_err(|why| {
                anyhow::anyhow!(
                    "{json}: field `{field}` {:?} {why}; a log must be logs/NAME inside the shard folder",
                    escape::text(log)
                )
            })?;
            let from = dir.join("logs").join(file);
            let meta = match fs::symlink_metadata(&from) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| escape::path(&from)),
            };
            let real = from.canonicalize().ok();
            if !meta.file_type().is_file()
                || real.as_deref().and_then(Path::parent) != Some(&shard_root.join("logs"))
            {
                bail!(
                    "{json}: field `{field}` {:?} is not a regular file inside the shard's logs/ (a link or a folder): refused",
                    escape::text(log)
                );
            }
            copies.push((from, file.to_string()));
        }
    }
    Ok(copies)
}

/// Copies `from` to `logs/name` by writing a temporary file beside it and renaming it into
/// place: whatever was at the name (a link, a file) is replaced, never written through.
pub(super) fn copy_log(from: &Path, logs: &Path, name: &str) -> Result<()> {
    let to = logs.join(name);
    if let (Ok(a), Ok(b)) = (fs::metadata(from), fs::symlink_metadata(&to)) {
        if a.dev() == b.dev() && a.ino() == b.ino() {
            bail!(
                "{} and {} are the same file: refused to copy it onto itself",
                escape::path(from),
                escape::path(&to)
            );
        }
    }
    let bytes = crate::swap::read_regular(from)
        .with_context(|| format!("reading {}", escape::path(from)))?
        .bytes;
    files::atomic::write_bytes_atomic(&to, &bytes)
        .with_context(|| format!("writing {}", escape::path(&to)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_paths_must_be_one_name_under_logs() {
        assert_eq!(log_name("logs/001-a.log"), Ok("001-a.log"));
        for bad in [
            "../victim",
            "logs/../../victim",
            "/abs/victim",
            "logs",
            "other/x.log",
            "logs/sub/x.log",
            "",
            "logs/\0x",
        ] {
            assert!(log_name(bad).is_err(), "{bad:?}");
        }
    }
}
