//! A change read back as lines: which lines of each file a diff adds or changes, and its hunks
//! (for showing a reviewer the change a finding is about).
//!
//! The diff is git's own (`diff-index -p`), made with every option that changes its text pinned
//! on the command line ([`DIFF_ARGS`], on top of the hermetic config every call gets), so the
//! user's `diff.noprefix`, `diff.mnemonicPrefix`, colour, external diff driver or textconv can
//! neither break the reading nor change which lines count as changed. Renames are followed, as
//! `git diff` does by default: a moved file's unchanged lines are not changes. Binary files,
//! links, submodules and deletions have no lines.
//!
//! File names are read as git writes them: C-quoted (`"a/\303\274.rs"`) when they hold
//! anything unusual (`core.quotePath=true` is pinned), otherwise raw, with the tab git adds
//! after a name that holds a space.

use std::collections::BTreeSet;

use crate::git::{Git, GitError};

/// `diff-index -p` options: the hunks with three lines of context (the changed lines are the
/// same as with `-U0`; the context is what a reviewer reads), prefixes, order and renames fixed.
pub const DIFF_ARGS: &[&str] = &[
    "-p",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--find-renames=50%",
    "--no-relative",
    "--ignore-submodules=none",
    "--submodule=short",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--unified=3",
    "--inter-hunk-context=0",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-O/dev/null",
];

/// The rename limit, pinned before the subcommand (it is config only): the repository's
/// could turn inexact rename detection off and make a moved file look wholly new.
const RENAME_LIMIT: [&str; 2] = ["-c", "diff.renameLimit=1000"];

/// What kind of line a hunk row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Context,
    Added,
    Removed,
    /// `\ No newline at end of file`, about the row before it.
    NoNewline,
}

/// One hunk: where it sits in the old and new file, and its rows (text without the newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub rows: Vec<(Row, Vec<u8>)>,
}

/// One file of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDiff {
    /// The path the file has after the change (before it, for a deletion), relative to the
    /// repository root, as raw bytes.
    pub path: Vec<u8>,
    /// The path before a rename.
    pub renamed_from: Option<Vec<u8>>,
    pub deleted: bool,
    /// Binary content: git shows no lines.
    pub binary: bool,
    /// The new mode (`100644`, `120000` for a link, `160000` for a submodule), when git says.
    pub mode: Option<String>,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// Whether the new side is a regular file's text (not deleted, binary, a link or a
    /// submodule): only then do its lines mean anything.
    pub fn has_lines(&self) -> bool {
        !self.deleted
            && !self.binary
            && self
                .mode
                .as_deref()
                .is_none_or(|m| m == "100644" || m == "100755")
    }

    /// The 1-based lines of the new file the diff adds or changes.
    pub fn changed_lines(&self) -> BTreeSet<usize> {
        if !self.has_lines() {
            return BTreeSet::new();
        }
        let mut lines = BTreeSet::new();
        for h in &self.hunks {
            let mut new = h.new_start;
            for (row, _) in &h.rows {
                match row {
                    Row::Added => {
                        lines.insert(new);
                        new = new.saturating_add(1);
                    }
                    Row::Context => new = new.saturating_add(1),
                    Row::Removed | Row::NoNewline => {}
                }
            }
        }
        lines
    }

    /// The hunk whose new side covers `line` (every changed line has one).
    pub fn hunk_at(&self, line: usize) -> Option<&Hunk> {
        self.hunks
            .iter()
            .find(|h| line >= h.new_start && line < h.new_start.saturating_add(h.new_len.max(1)))
    }
}

impl Hunk {
    /// A hunk of a wholly new file (an untracked one): every line added.
    pub fn new_file(text: &[u8]) -> Hunk {
        let rows: Vec<(Row, Vec<u8>)> = split_lines(text)
            .map(|l| (Row::Added, l.to_vec()))
            .collect();
        Hunk {
            old_start: 0,
            old_len: 0,
            new_start: usize::from(!rows.is_empty()),
            new_len: rows.len(),
            rows,
        }
    }

    /// The lines `from..=to` (1-based) of an unchanged file, as context only: what a finding
    /// in a file that no diff names (`--dir`) shows around its line.
    pub fn context(text: &[u8], from: usize, to: usize) -> Hunk {
        let from = from.max(1);
        let rows: Vec<(Row, Vec<u8>)> = split_lines(text)
            .enumerate()
            .filter(|(i, _)| (from..=to).contains(&(i + 1)))
            .map(|(_, l)| (Row::Context, l.to_vec()))
            .collect();
        Hunk {
            old_start: from,
            old_len: rows.len(),
            new_start: from,
            new_len: rows.len(),
            rows,
        }
    }

    /// The part of the hunk within `radius` lines of the new file's `line` (removed rows sit
    /// at the new line that follows them), with its header counted again: a long hunk shown
    /// around one finding.
    pub fn around(&self, line: usize, radius: usize) -> Hunk {
        let (lo, hi) = (line.saturating_sub(radius), line.saturating_add(radius));
        let (mut old, mut new) = (self.old_start, self.new_start);
        let mut kept: Vec<(Row, Vec<u8>)> = Vec::new();
        let (mut old_start, mut new_start) = (None, None);
        let (mut old_len, mut new_len) = (0, 0);
        let mut last_kept = false;
        for (row, text) in &self.rows {
            let keep = match row {
                Row::NoNewline => last_kept,
                _ => (lo..=hi).contains(&new),
            };
            if keep {
                if *row != Row::NoNewline {
                    old_start.get_or_insert(old);
                    new_start.get_or_insert(new);
                }
                match row {
                    Row::Context => (old_len, new_len) = (old_len + 1, new_len + 1),
                    Row::Added => new_len += 1,
                    Row::Removed => old_len += 1,
                    Row::NoNewline => {}
                }
                kept.push((*row, text.clone()));
            }
            last_kept = keep;
            match row {
                Row::Context => (old, new) = (old.saturating_add(1), new.saturating_add(1)),
                Row::Added => new = new.saturating_add(1),
                Row::Removed => old = old.saturating_add(1),
                Row::NoNewline => {}
            }
        }
        Hunk {
            // git writes an empty side as starting at the line before it.
            old_start: old_start
                .map_or(old, |s| if old_len == 0 { s.saturating_sub(1) } else { s }),
            old_len,
            new_start: new_start
                .map_or(new, |s| if new_len == 0 { s.saturating_sub(1) } else { s }),
            new_len,
            rows: kept,
        }
    }

    /// The hunk as unified diff text (`@@ -a,b +c,d @@` and its rows), each row's bytes as
    /// UTF-8 (invalid bytes replaced), ending in a newline.
    pub fn text(&self) -> String {
        let mut out = format!(
            "@@ -{},{} +{},{} @@\n",
            self.old_start, self.old_len, self.new_start, self.new_len
        );
        for (row, text) in &self.rows {
            out.push_str(match row {
                Row::Context => " ",
                Row::Added => "+",
                Row::Removed => "-",
                Row::NoNewline => "\\",
            });
            out.push_str(&String::from_utf8_lossy(text));
            out.push('\n');
        }
        out
    }
}

/// The lines of `text` without their line ends (`\n`; a last line without one counts).
fn split_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let empty = text.is_empty();
    body.split(|b| *b == b'\n').filter(move |_| !empty)
}

/// The diff from the commit `rev` to the work tree of `repo` (every tracked file as it is on
/// disk, staged or not; untracked files are not in it), read through the index without
/// writing it (`diff-index`, not `diff`, which refreshes the index).
pub fn worktree_since(repo: &Git, rev: &str) -> Result<Vec<FileDiff>, GitError> {
    diff(repo, rev, false)
}

/// The diff from the commit `rev` to the index of `repo` (a checkout with a candidate applied).
pub fn index_since(repo: &Git, rev: &str) -> Result<Vec<FileDiff>, GitError> {
    diff(repo, rev, true)
}

fn diff(repo: &Git, rev: &str, cached: bool) -> Result<Vec<FileDiff>, GitError> {
    let mut args: Vec<&str> = RENAME_LIMIT.to_vec();
    args.push("diff-index");
    args.extend(DIFF_ARGS);
    if cached {
        args.push("--cached");
    }
    args.extend([rev, "--"]);
    Ok(parse(&repo.bytes(args)?))
}

/// Reads git's patch text (as [`DIFF_ARGS`] make it) into files and hunks. Never panics: a
/// line it does not know is passed over.
pub fn parse(text: &[u8]) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut lines = text.split(|b| *b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let Some(header) = line.strip_prefix(b"diff --git ") else {
            continue;
        };
        let mut file = FileDiff {
            path: header_path(header).unwrap_or_default(),
            renamed_from: None,
            deleted: false,
            binary: false,
            mode: None,
            hunks: Vec::new(),
        };
        // The extended header, up to the first hunk or the next file.
        while let Some(l) =
            lines.next_if(|l| !l.starts_with(b"@@") && !l.starts_with(b"diff --git "))
        {
            if let Some(m) = l.strip_prefix(b"new file mode ") {
                file.mode = Some(String::from_utf8_lossy(m).into_owned());
            } else if let Some(m) = l.strip_prefix(b"new mode ") {
                file.mode = Some(String::from_utf8_lossy(m).into_owned());
            } else if l.starts_with(b"deleted file mode ") {
                file.deleted = true;
            } else if let Some(rest) = l.strip_prefix(b"index ") {
                // `index abc..def 100644`: the mode when it did not change.
                if let Some(m) = rest.split(|b| *b == b' ').nth(1) {
                    file.mode
                        .get_or_insert_with(|| String::from_utf8_lossy(m).into_owned());
                }
            } else if let Some(p) = l.strip_prefix(b"rename from ") {
                file.renamed_from = Some(unquote(p));
            } else if let Some(p) = l.strip_prefix(b"rename to ") {
                file.path = unquote(p);
            } else if let Some(p) = l.strip_prefix(b"+++ ") {
                if p == b"/dev/null" {
                    file.deleted = true;
                } else if let Some(p) = name_after_prefix(p, b"b/") {
                    file.path = p;
                }
            } else if l.starts_with(b"--- ") {
                // The old name: a deletion's is the header's already.
            } else if l.starts_with(b"Binary files ") || l == b"GIT binary patch" {
                file.binary = true;
            }
        }
        while let Some(l) = lines.next_if(|l| l.starts_with(b"@@")) {
            let Some(mut hunk) = hunk_header(l) else {
                continue;
            };
            let (mut old_left, mut new_left) = (hunk.old_len, hunk.new_len);
            while let Some(r) = lines.next_if(|r| {
                (old_left > 0 || new_left > 0 || r.starts_with(b"\\"))
                    && matches!(r.first(), Some(b' ' | b'+' | b'-' | b'\\') | None)
                    && !r.starts_with(b"diff --git ")
            }) {
                let (row, text) = match r.split_first() {
                    Some((b'+', t)) => (Row::Added, t),
                    Some((b'-', t)) => (Row::Removed, t),
                    Some((b'\\', t)) => (Row::NoNewline, t),
                    Some((_, t)) => (Row::Context, t),
                    // An empty context line (`diff.suppressBlankEmpty`): pinned off, read anyway.
                    None => (Row::Context, &b""[..]),
                };
                match row {
                    Row::Added => new_left = new_left.saturating_sub(1),
                    Row::Removed => old_left = old_left.saturating_sub(1),
                    Row::Context => {
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    Row::NoNewline => {}
                }
                hunk.rows.push((row, text.to_vec()));
            }
            file.hunks.push(hunk);
        }
        files.push(file);
    }
    files
}

/// `@@ -a[,b] +c[,d] @@ ...` as a hunk with no rows yet.
fn hunk_header(line: &[u8]) -> Option<Hunk> {
    let text = std::str::from_utf8(line).ok()?;
    let mut parts = text.strip_prefix("@@ ")?.split(' ');
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(parts.next()?.strip_prefix('-')?)?;
    let (new_start, new_len) = range(parts.next()?.strip_prefix('+')?)?;
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        rows: Vec::new(),
    })
}

/// The path of a `diff --git a/X b/X` header (quoted names, or an unquoted pair split in the
/// middle: the two names are the same unless the file was renamed, and then `rename to` says).
fn header_path(header: &[u8]) -> Option<Vec<u8>> {
    if header.first() == Some(&b'"') {
        let (_, rest) = c_unquote(header)?;
        let rest = rest.strip_prefix(b" ")?;
        return name_after_prefix(rest, b"b/");
    }
    // `a/X b/X`: X is (len - 5) / 2 bytes.
    let n = header.len().checked_sub(5)? / 2;
    header.get(2 + n + 3..).map(<[u8]>::to_vec)
}

/// A name after `prefix` (`b/`), quoted or raw (the tab git adds after a name that holds a
/// space dropped).
fn name_after_prefix(p: &[u8], prefix: &[u8]) -> Option<Vec<u8>> {
    if p.first() == Some(&b'"') {
        let (name, _) = c_unquote(p)?;
        return name.strip_prefix(prefix).map(<[u8]>::to_vec);
    }
    let p = p.strip_suffix(b"\t").unwrap_or(p);
    p.strip_prefix(prefix).map(<[u8]>::to_vec)
}

/// A name as `rename from/to` writes it: quoted or raw.
fn unquote(p: &[u8]) -> Vec<u8> {
    if p.first() == Some(&b'"') {
        if let Some((name, _)) = c_unquote(p) {
            return name;
        }
    }
    p.to_vec()
}

/// A C-quoted string at the start of `s` (`"a\tb\303\274"`): its bytes and what follows it.
fn c_unquote(s: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        match *s.get(i)? {
            b'"' => return Some((out, &s[i + 1..])),
            b'\\' => {
                let c = *s.get(i + 1)?;
                i += 2;
                out.push(match c {
                    b'a' => 7,
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 11,
                    b'f' => 12,
                    b'r' => b'\r',
                    b'0'..=b'3' => {
                        let digits = s.get(i - 1..i + 2)?;
                        i += 2;
                        digits.iter().try_fold(0u8, |v, d| {
                            (b'0'..=b'7').contains(d).then(|| v * 8 + (d - b'0'))
                        })?
                    }
                    other => other,
                });
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
