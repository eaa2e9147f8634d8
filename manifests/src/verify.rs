//! Checking a tree against a manifest: one status per entry, in manifest order, and the
//! `N/N OK` summary line.
//!
//! The statuses split what `sha256sum -c` lumps together as "FAILED open or read":
//! - `OK`: a regular file (in-tree links followed) whose content has the digest;
//! - `FAILED`: something is there but does not match: different content, or it cannot be
//!   read as a file (a directory, a FIFO, no permission, a link loop), with the reason;
//! - `MISSING`: nothing is there (no such file, a parent is not a directory, or an in-tree
//!   link dangles).
//!
//! A path that breaks the rules (a link leading out of the tree) is not a status but an
//! error for the whole check: it is bad input, and no verdict is given on a manifest that
//! asks to read outside its tree.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::bulk::{hash_all, Found};
use crate::entry::{Digest, Entry, Manifest};
use crate::escape::{escape_name, needs_escape};
use crate::path::Links;
use crate::status::{Status, Summary};
use crate::tree::TreeError;

/// One entry's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The path from the manifest (raw bytes).
    pub path: Vec<u8>,
    /// The digest the manifest expects.
    pub expected: Digest,
    /// The digest found, when the file could be read.
    pub actual: Option<Digest>,
    /// The verdict.
    pub status: Status,
    /// Why, when not OK: `content differs`, `no such file`, `is a directory`, ...
    pub detail: Option<String>,
}

/// Prints as `sha256sum -c` prints a result line: `NAME: OK`, with the name escaped and the
/// line led by `\` when the name needs it, plus the reason in parentheses when not OK.
impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if needs_escape(&self.path) {
            f.write_str("\\")?;
        }
        let name = escape_name(&self.path);
        write!(f, "{}: {}", String::from_utf8_lossy(&name), self.status)?;
        match &self.detail {
            Some(detail) => write!(f, " ({detail})"),
            None => Ok(()),
        }
    }
}

impl Serialize for Checked {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Checked", 6)?;
        s.serialize_field("path", &String::from_utf8_lossy(&self.path))?;
        // The escaped form keeps newlines and CRs visible; lossy only for non-UTF-8 bytes.
        s.serialize_field(
            "path_escaped",
            &String::from_utf8_lossy(&escape_name(&self.path)),
        )?;
        s.serialize_field("status", &self.status)?;
        s.serialize_field("expected", &self.expected)?;
        s.serialize_field("actual", &self.actual)?;
        s.serialize_field("detail", &self.detail)?;
        s.end()
    }
}

/// The result of checking a tree: every entry in manifest order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verification {
    /// One result per manifest entry, in manifest order.
    pub entries: Vec<Checked>,
}

impl Verification {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            total: self.entries.len(),
            ..Summary::default()
        };
        for e in &self.entries {
            match e.status {
                Status::Ok => s.ok += 1,
                Status::Failed => s.failed += 1,
                Status::Missing => s.missing += 1,
            }
        }
        s
    }

    /// True when every entry is OK. A verification of no entries holds: [`crate::parse`]
    /// refuses a manifest of none, and the one caller that lets one through (a candidate whose
    /// patch leaves no file in place to list, see `candidate::apply`) has proved there was
    /// nothing to check; `gate check --ignore-missing` says so itself when it ignored them all.
    pub fn all_ok(&self) -> bool {
        self.summary().all_ok()
    }
}

/// Every entry's line, then the summary line.
impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            writeln!(f, "{e}")?;
        }
        write!(f, "{}", self.summary())
    }
}

/// `{"summary": "12/12 OK", "total": 12, "ok": 12, "failed": 0, "missing": 0, "entries": [...]}`
impl Serialize for Verification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let summary = self.summary();
        let mut s = serializer.serialize_struct("Verification", 6)?;
        s.serialize_field("summary", &summary.to_string())?;
        s.serialize_field("total", &summary.total)?;
        s.serialize_field("ok", &summary.ok)?;
        s.serialize_field("failed", &summary.failed)?;
        s.serialize_field("missing", &summary.missing)?;
        s.serialize_field("entries", &self.entries)?;
        s.end()
    }
}

/// Checks every entry of `manifest` against the files under `root`, hashing on every core.
///
/// A path the rules refuse (absolute, `..`, a symlink leading out of the tree, including
/// through a parent directory) makes the whole check an error, and nothing outside the tree is
/// ever opened: only regular files below the tree's real folders are read before every path
/// has been judged.
pub fn verify(root: &Path, manifest: &Manifest) -> Result<Verification, TreeError> {
    verify_with(root, Cow::Borrowed(manifest), Links::Follow)
}

/// [`verify`] with links judged as git records them ([`Links::AsRecorded`]): a link is OK when
/// its target's bytes have the digest, and is never followed. How a candidate is checked.
pub fn verify_as_recorded(root: &Path, manifest: &Manifest) -> Result<Verification, TreeError> {
    verify_with(root, Cow::Borrowed(manifest), Links::AsRecorded)
}

/// [`verify`] of a manifest the caller is done with: each result takes its entry's path rather
/// than a copy of it (on 100,000 small files, the copies were a fortieth of the check).
pub fn verify_owned(root: &Path, manifest: Manifest) -> Result<Verification, TreeError> {
    verify_with(root, Cow::Owned(manifest), Links::Follow)
}

fn verify_with(
    root: &Path,
    manifest: Cow<'_, Manifest>,
    links: Links,
) -> Result<Verification, TreeError> {
    let found = {
        let paths: Vec<&[u8]> = manifest.iter().map(|e| e.path.as_slice()).collect();
        hash_all(root, &paths, links)?
    };
    let entries: Box<dyn Iterator<Item = Entry>> = match manifest {
        Cow::Borrowed(manifest) => Box::new(manifest.iter().cloned()),
        Cow::Owned(manifest) => Box::new(manifest.entries.into_iter()),
    };
    let entries = entries
        .zip(found)
        .map(|(entry, found)| {
            let expected = entry.digest;
            let (actual, status, detail) = match found {
                Found::File(Ok(actual)) | Found::Link(actual) if actual == expected => {
                    (Some(actual), Status::Ok, None)
                }
                Found::File(Ok(actual)) => (Some(actual), Status::Failed, Some("content differs")),
                Found::Link(actual) => (Some(actual), Status::Failed, Some("link target differs")),
                Found::File(Err(e)) => {
                    return checked(entry, None, Status::Failed, Some(e.to_string()));
                }
                Found::Missing => (None, Status::Missing, Some("no such file")),
                Found::Unreadable(why) => return checked(entry, None, Status::Failed, Some(why)),
            };
            checked(entry, actual, status, detail.map(str::to_string))
        })
        .collect();
    Ok(Verification { entries })
}

fn checked(
    entry: Entry,
    actual: Option<Digest>,
    status: Status,
    detail: Option<String>,
) -> Checked {
    Checked {
        path: entry.path,
        expected: entry.digest,
        actual,
        status,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(status: Status) -> Checked {
        Checked {
            path: b"p".to_vec(),
            expected: Digest([0; 32]),
            actual: None,
            status,
            detail: None,
        }
    }

    #[test]
    fn summary_reads_n_of_n_ok_or_what_failed() {
        let mut v = Verification {
            entries: vec![checked(Status::Ok); 12],
        };
        assert_eq!(v.summary().to_string(), "12/12 OK");
        assert!(v.all_ok());
        v.entries[3].status = Status::Failed;
        v.entries[7].status = Status::Missing;
        assert_eq!(v.summary().to_string(), "10/12 OK, 1 FAILED, 1 MISSING");
        v.entries[7].status = Status::Failed;
        assert_eq!(v.summary().to_string(), "10/12 OK, 2 FAILED");
        assert!(!v.all_ok());
    }

    #[test]
    fn result_lines_escape_names_like_sha256sum() {
        let mut c = checked(Status::Ok);
        c.path = b"a\nb".to_vec();
        assert_eq!(c.to_string(), "\\a\\nb: OK");
        c.status = Status::Missing;
        c.detail = Some("no such file".into());
        assert_eq!(c.to_string(), "\\a\\nb: MISSING (no such file)");
    }
}
