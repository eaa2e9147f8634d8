//! One line of a manifest, read as `sha256sum -c --strict` (coreutils 9.1) reads it:
//! - `HEX  PATH` (text), `HEX *PATH` (binary), `SHA256 (PATH) = HEX` (`--tag`), and `HEX PATH`
//!   with one blank (the BSD `md5 -r` order, which no sha256sum writes);
//! - a leading `\` on any of them means the name is escaped: `\\`, `\n` and `\r` stand for a
//!   backslash, newline and carriage return, and any other escape is malformed. Without the
//!   leading `\`, a backslash in a name is just a backslash;
//! - 64 hex digits in either case; spaces and tabs before the line are skipped, the gap after
//!   the digest is one space or tab, and spaces and tabs may surround a tagged line's `=`;
//! - a line of only blanks is malformed, and so is an empty name.
//!
//! The one-blank form follows GNU's rule to the letter, because a name's leading blank or `*`
//! would otherwise be ambiguous: the first untagged line decides the file's order. If it is
//! `HEX  NAME` or `HEX *NAME` (two marks and a name), every untagged line must be, and a
//! one-blank line is malformed; if it is a one-blank line (the byte after the gap is neither a
//! space nor `*`, or is the line's last), then every untagged line is read that way and its
//! name is everything after the one gap, leading blanks and stars included.
//! The order is the one thing a line cannot tell alone: reading the manifest finds it once for
//! the file ([`order_of`] on its first untagged line) and reads every line in it.

use crate::entry::{Digest, Entry, Form};
use crate::escape::unescape_name;

/// GNU's `ISWHITE`, a space or a tab: what it skips before a line, takes as the gap after a
/// digest and around a tagged line's `=` (a vertical tab, form feed or CR is none of them).
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// How a file's untagged lines are read; the first untagged line decides (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// `HEX  NAME` and `HEX *NAME`.
    Marked,
    /// `HEX NAME`: the name is all that follows the one gap.
    Reversed,
}

/// A line without its leading blanks and its escape mark: whether it was escaped and the rest.
fn head(line: &[u8]) -> (bool, &[u8]) {
    let start = line
        .iter()
        .position(|&b| !is_blank(b))
        .unwrap_or(line.len());
    let rest = &line[start..];
    match rest.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, rest),
    }
}

/// An untagged line's digest and what follows the one byte of gap after it, checked as GNU
/// checks them before it looks at the order: long enough, a gap, 64 hex digits.
fn digest_and_rest(rest: &[u8]) -> Result<(Digest, &[u8]), &'static str> {
    // The digest, a gap and at least one more byte.
    if rest.len() < 66 {
        return Err("line too short for a SHA256 digest and a file name");
    }
    if !is_blank(rest[64]) {
        return Err("digest is not 64 hex digits followed by a blank");
    }
    let digest = Digest::from_hex(&rest[..64]).ok_or("digest is not 64 hex digits")?;
    Ok((digest, &rest[65..]))
}

/// Whether what follows an untagged line's gap has the one-blank shape: its first byte is
/// neither a space nor `*`, or it is the only byte.
fn is_reversed(after_gap: &[u8]) -> bool {
    after_gap.len() == 1 || !matches!(after_gap[0], b' ' | b'*')
}

/// The order an untagged line sets, or `None` for a tagged line or one that fails before its
/// order is looked at (those decide nothing).
pub(crate) fn order_of(line: &[u8]) -> Option<Order> {
    let (_, rest) = head(line);
    if rest.starts_with(b"SHA256") {
        return None;
    }
    let (_, after) = digest_and_rest(rest).ok()?;
    Some(if is_reversed(after) {
        Order::Reversed
    } else {
        Order::Marked
    })
}

/// One non-empty, non-comment line without its line ending, its untagged form read in `order`.
pub(crate) fn parse_line(line: &[u8], order: Order) -> Result<Entry, &'static str> {
    if line.iter().all(|&b| is_blank(b)) {
        return Err("blank line");
    }
    let (escaped, rest) = head(line);
    if let Some(tagged) = rest.strip_prefix(b"SHA256") {
        return parse_tagged(tagged, escaped);
    }
    let (digest, after) = digest_and_rest(rest)?;
    let (form, name) = match order {
        Order::Reversed => (Form::Reversed, after),
        Order::Marked if is_reversed(after) => {
            return Err("a `HEX NAME` line (one blank) after `HEX  NAME` lines");
        }
        Order::Marked => match after.split_first() {
            Some((b'*', name)) => (Form::Binary, name),
            Some((_, name)) => (Form::Text, name),
            None => return Err("no file name after the digest"),
        },
    };
    if name.is_empty() {
        return Err("no file name after the digest");
    }
    let path = unescape_if(name, escaped)?;
    Ok(Entry { path, digest, form })
}

/// The part of a tagged line after `SHA256`: ` (NAME) = HEX`.
fn parse_tagged(rest: &[u8], escaped: bool) -> Result<Entry, &'static str> {
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let rest = rest
        .strip_prefix(b"(")
        .ok_or("expected `SHA256 (FILE) = DIGEST`")?;
    // The name ends at the *last* `)`: names may hold `)`, digests never do.
    let close = rest
        .iter()
        .rposition(|&b| b == b')')
        .ok_or("no `)` after the file name")?;
    let (name, after) = (&rest[..close], &rest[close + 1..]);
    let after = trim_blanks_start(after);
    let after = after
        .strip_prefix(b"=")
        .ok_or("expected `=` after the file name")?;
    let hex = trim_blanks_start(after);
    let digest = Digest::from_hex(hex).ok_or("digest is not 64 hex digits")?;
    if name.is_empty() {
        return Err("empty file name");
    }
    let path = unescape_if(name, escaped)?;
    Ok(Entry {
        path,
        digest,
        form: Form::Tagged,
    })
}

fn trim_blanks_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| is_blank(b)).count();
    &s[n..]
}

fn unescape_if(name: &[u8], escaped: bool) -> Result<Vec<u8>, &'static str> {
    if escaped {
        unescape_name(name)
    } else {
        Ok(name.to_vec())
    }
}
