//! The manifest's bytes: reading and writing GNU `sha256sum` lines.
//!
//! What is read is what `sha256sum -c --strict` (coreutils 9.1) reads, checked line by line
//! against the real binary in `tests/gnu.rs` and `tests/differential.rs`:
//! - `HEX  PATH` (text), `HEX *PATH` (binary), `SHA256 (PATH) = HEX` (`--tag`), and `HEX PATH`
//!   with one blank (the BSD `md5 -r` order, which no sha256sum writes);
//! - a leading `\` on any of them means the name is escaped: `\\`, `\n` and `\r` stand for a
//!   backslash, newline and carriage return, and any other escape is malformed. Without the
//!   leading `\`, a backslash in a name is just a backslash;
//! - 64 hex digits in either case; spaces and tabs before the line are skipped, the gap after
//!   the digest is one space or tab, and spaces and tabs may surround a tagged line's `=`;
//! - lines are split on `\n` and then lose one `\r`, so CRLF manifests read the same (a name
//!   really ending in CR is written escaped, so nothing is lost);
//! - a line is a comment only when `#` is its first byte; empty lines are skipped; a line of
//!   only blanks is malformed.
//!
//! The one-blank form follows GNU's rule to the letter, because a name's leading blank or `*`
//! would otherwise be ambiguous: the first untagged line decides the file's order. If it is
//! `HEX  NAME` or `HEX *NAME` (two marks and a name), every untagged line must be, and a
//! one-blank line is malformed; if it is a one-blank line (the byte after the gap is neither a
//! space nor `*`, or is the line's last), then every untagged line is read that way and its
//! name is everything after the one gap, leading blanks and stars included.
//!
//! Deliberate departures, all lines whose check could never come out OK (sha256sum takes them
//! and reports `FAILED open or read`, or checks a different name): an empty name, a name with
//! a NUL byte (sha256sum silently checks the name cut at the NUL), and a path longer than
//! Linux's `PATH_MAX` are refused as bad input. Every path read is also put through
//! [`crate::check_path`], so an absolute or `..` path is refused while the line number is
//! still known.

use thiserror::Error;

use crate::entry::{Digest, Entry, Form, Manifest};
use crate::path::{check_path, PathError};

/// Why a manifest could not be read. Displays as `line 3: ...`; the caller adds the file name.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseError {
    /// One line is bad.
    #[error("line {line}: {problem}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: LineProblem,
    },
    /// No line held an entry (only blanks and comments, or an empty file).
    #[error("no properly formatted SHA256 checksum lines found")]
    NoEntries,
}

impl ParseError {
    /// The 1-based line number, when one line is to blame.
    pub fn line(&self) -> Option<usize> {
        match self {
            ParseError::Line { line, .. } => Some(*line),
            ParseError::NoEntries => None,
        }
    }
}

/// What is wrong with one line.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LineProblem {
    /// Not a sha256sum line; the text says which part is off.
    #[error("improperly formatted SHA256 checksum line ({0})")]
    Malformed(&'static str),
    /// A well-formed line whose path breaks the path rules.
    #[error(transparent)]
    Path(PathError),
}

/// Reads a manifest. Strict: the first bad line is an error naming it, and a manifest with no
/// entries is an error too.
///
/// A large manifest is read in pieces on every core, each piece a run of whole lines: on
/// 100,000 lines, reading them was a tenth of `gate check`'s time, all of it on one core while
/// the others waited. The first bad line is still the one named: a piece's error counts the
/// lines of the pieces before it, and an earlier piece's error wins.
pub fn parse(bytes: &[u8]) -> Result<Manifest, ParseError> {
    parse_pieces(&pieces(bytes, PIECE_BYTES, crate::cores()))
}

/// [`parse`] of the bytes `pieces` hold together, each piece (a run of whole lines) on its own
/// thread when there are several.
fn parse_pieces(pieces: &[&[u8]]) -> Result<Manifest, ParseError> {
    // The first untagged line decides how every other is read, so it is found before the
    // pieces are read apart; it is nearly always the first line.
    let order = pieces
        .iter()
        .find_map(|piece| first_order(piece))
        .unwrap_or(Order::Marked);
    let read: Vec<Result<Piece, PieceError>> = if let [one] = pieces {
        vec![parse_piece(one, order)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = pieces
                .iter()
                .map(|&piece| scope.spawn(move || parse_piece(piece, order)))
                .collect();
            running
                .into_iter()
                .map(|piece| {
                    piece
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e))
                })
                .collect()
        })
    };
    let total: usize = read
        .iter()
        .map(|r| r.as_ref().map_or(0, |p| p.entries.len()))
        .sum();
    let mut entries: Vec<Entry> = Vec::new();
    let mut lines_before = 0;
    for piece in read {
        match piece {
            Ok(piece) => {
                // The first piece's entries are kept, the others moved in after them.
                if entries.is_empty() {
                    entries = piece.entries;
                    entries.reserve(total - entries.len());
                } else {
                    entries.extend(piece.entries);
                }
                lines_before += piece.lines;
            }
            Err(PieceError { line, problem }) => {
                return Err(ParseError::Line {
                    line: lines_before + line,
                    problem,
                })
            }
        }
    }
    if entries.is_empty() {
        return Err(ParseError::NoEntries);
    }
    Ok(Manifest { entries })
}

/// The least a piece holds, so a manifest under twice this is read on one core: a thread
/// costs more than it saves on fewer lines.
const PIECE_BYTES: usize = 1 << 20;

/// `bytes` cut into at most `threads` pieces of at least `least` bytes each, every cut just
/// after a `\n`, so each piece holds whole lines and together they are `bytes`.
fn pieces(bytes: &[u8], least: usize, threads: usize) -> Vec<&[u8]> {
    let count = (bytes.len() / least.max(1)).clamp(1, threads.max(1));
    let size = bytes.len().div_ceil(count);
    let mut pieces = Vec::with_capacity(count);
    let mut rest = bytes;
    while pieces.len() + 1 < count && rest.len() > size {
        let Some(newline) = rest[size..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let (piece, after) = rest.split_at(size + newline + 1);
        pieces.push(piece);
        rest = after;
    }
    pieces.push(rest);
    pieces
}

/// What a run of whole lines held: its entries and how many lines it was.
struct Piece {
    entries: Vec<Entry>,
    lines: usize,
}

/// The first bad line of a piece, counted from the piece's start (1-based).
struct PieceError {
    line: usize,
    problem: LineProblem,
}

/// The lines of a run of whole lines (the last may lack its `\n`) that can hold an entry,
/// each with its 1-based number in the run and without its line ending: comments and empty
/// lines are counted but not given.
fn content_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut split = bytes.split(|&b| b == b'\n').peekable();
    let mut number = 0;
    std::iter::from_fn(move || loop {
        let raw = split.next()?;
        // The piece after a final `\n` is not a line.
        if raw.is_empty() && split.peek().is_none() {
            return None;
        }
        number += 1;
        if raw.first() == Some(&b'#') {
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if !line.is_empty() {
            return Some((number, line));
        }
    })
}

/// Reads a run of whole lines (the last may lack its `\n`).
fn parse_piece(bytes: &[u8], order: Order) -> Result<Piece, PieceError> {
    let mut entries = Vec::with_capacity(bytes.len() / SHORTEST_LINE + 1);
    for (number, line) in content_lines(bytes) {
        let problem = |problem| PieceError {
            line: number,
            problem,
        };
        let entry = parse_line(line, order).map_err(|m| problem(LineProblem::Malformed(m)))?;
        check_path(&entry.path).map_err(|e| problem(LineProblem::Path(e)))?;
        entries.push(entry);
    }
    // Every `\n` ends a line, and so does the end of a last line without one.
    let lines = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    Ok(Piece { entries, lines })
}

/// The bytes of the shortest line that holds an entry (64 digits, two marks, a one-byte name,
/// its `\n`): a piece's entries are sized for the most it can hold, once, rather than grown a
/// dozen times. Room never used costs address space, not memory.
const SHORTEST_LINE: usize = 68;

/// GNU's `ISWHITE`, a space or a tab: what it skips before a line, takes as the gap after a
/// digest and around a tagged line's `=` (a vertical tab, form feed or CR is none of them).
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// How a file's untagged lines are read; the first untagged line decides (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
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

/// The order the first untagged line of `bytes` sets, if any line does.
fn first_order(bytes: &[u8]) -> Option<Order> {
    content_lines(bytes).find_map(|(_, line)| {
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
    })
}

/// One non-empty, non-comment line without its line ending, its untagged form read in `order`.
fn parse_line(line: &[u8], order: Order) -> Result<Entry, &'static str> {
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

/// Undoes [`escape_name`]. Only `\\`, `\n` and `\r` are escapes; any other, or a lone
/// trailing backslash, is malformed (GNU refuses them too).
fn unescape_name(name: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(name.len());
    let mut bytes = name.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(_) => return Err("unknown escape in file name (only \\\\, \\n and \\r)"),
            None => return Err("file name ends with a lone backslash"),
        }
    }
    Ok(out)
}

/// Whether a name must be written in the escaped form (the line then starts with `\`).
pub(crate) fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// A name as sha256sum 9.x prints it inside an escaped line: `\` -> `\\`, newline -> `\n`,
/// CR -> `\r`; every other byte as is (unchanged for a name holding none of the three).
pub fn escape_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 2);
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out
}

/// Writes one line, newline included, exactly as `sha256sum` (`-b`, `--tag`) would.
pub fn write_entry(out: &mut Vec<u8>, entry: &Entry) {
    let escaped = needs_escape(&entry.path);
    if escaped {
        out.push(b'\\');
    }
    let name = if escaped {
        escape_name(&entry.path)
    } else {
        entry.path.clone()
    };
    let hex = entry.digest.to_hex();
    match entry.form {
        Form::Text | Form::Binary | Form::Reversed => {
            out.extend_from_slice(hex.as_bytes());
            out.extend_from_slice(match entry.form {
                Form::Text => b"  ",
                Form::Binary => b" *",
                _ => b" ",
            });
            out.extend_from_slice(&name);
        }
        Form::Tagged => {
            out.extend_from_slice(b"SHA256 (");
            out.extend_from_slice(&name);
            out.extend_from_slice(b") = ");
            out.extend_from_slice(hex.as_bytes());
        }
    }
    out.push(b'\n');
}

/// The bytes `sha256sum` writes for these entries, each in its own [`Form`]: a manifest
/// written here is read back by `sha256sum -c --strict`, and one sha256sum wrote comes back
/// out byte for byte after [`parse`].
pub fn write(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 80);
    for entry in entries {
        write_entry(&mut out, entry);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::PathProblem;

    const HEX: &str = "50e721e49c013f00c62cf59f2163542a9d8df02464efeb615d31051b0fddc326";

    fn digest() -> Digest {
        Digest::from_hex(HEX.as_bytes()).unwrap()
    }

    fn one(line: &str) -> Entry {
        let m = parse(line.as_bytes()).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(m.len(), 1);
        m.entries[0].clone()
    }

    fn err(text: &[u8]) -> ParseError {
        match parse(text) {
            Ok(m) => panic!("{:?} parsed as {m:?}", String::from_utf8_lossy(text)),
            Err(e) => e,
        }
    }

    #[test]
    fn text_form_reads_path_after_two_spaces() {
        let e = one(&format!("{HEX}  sp ace\n"));
        assert_eq!(
            (e.path.as_slice(), e.digest, e.form),
            (&b"sp ace"[..], digest(), Form::Text)
        );
    }

    #[test]
    fn binary_form_reads_path_after_star() {
        let e = one(&format!("{HEX} *bin/x\n"));
        assert_eq!((e.path.as_slice(), e.form), (&b"bin/x"[..], Form::Binary));
    }

    #[test]
    fn tagged_form_reads_path_in_parentheses() {
        let e = one(&format!("SHA256 (a b) = {HEX}\n"));
        assert_eq!(
            (e.path.as_slice(), e.digest, e.form),
            (&b"a b"[..], digest(), Form::Tagged)
        );
    }

    #[test]
    fn tagged_form_takes_the_last_parenthesis_and_loose_spacing() {
        assert_eq!(one(&format!("SHA256 (p) = q) = {HEX}")).path, b"p) = q");
        assert_eq!(one(&format!("SHA256(x)={HEX}")).path, b"x");
        assert_eq!(one(&format!("SHA256 (x)\t=\t{HEX}")).path, b"x");
    }

    #[test]
    fn upper_case_hex_is_read() {
        assert_eq!(one(&format!("{}  f", HEX.to_uppercase())).digest, digest());
    }

    #[test]
    fn escaped_forms_unescape_backslash_newline_and_cr() {
        assert_eq!(one(&format!("\\{HEX}  a\\\\b\\nc\\rd")).path, b"a\\b\nc\rd");
        assert_eq!(one(&format!("\\{HEX} *a\\nb")).path, b"a\nb");
        assert_eq!(one(&format!("\\SHA256 (a\\nb)) = {HEX}")).path, b"a\nb)");
    }

    #[test]
    fn a_backslash_without_the_escape_marker_is_literal() {
        assert_eq!(one(&format!("{HEX}  a\\b")).path, b"a\\b");
        assert_eq!(one(&format!("SHA256 (a\\nb) = {HEX}")).path, b"a\\nb");
    }

    #[test]
    fn crlf_loses_exactly_one_cr() {
        assert_eq!(one(&format!("{HEX}  f\r\n")).path, b"f");
        assert_eq!(one(&format!("{HEX}  f\r")).path, b"f");
        assert_eq!(one(&format!("{HEX}  f\r\r\n")).path, b"f\r");
        assert_eq!(one(&format!("SHA256 (f) = {HEX}\r\n")).path, b"f");
    }

    #[test]
    fn blank_and_comment_lines_are_skipped_and_numbering_counts_them() {
        let text = format!("# made by hand\n\n\r\n{HEX}  a\n#{HEX}  b\n{HEX}  c");
        let m = parse(text.as_bytes()).unwrap();
        let paths: Vec<_> = m.iter().map(|e| e.path.clone()).collect();
        assert_eq!(paths, vec![b"a".to_vec(), b"c".to_vec()]);
        assert_eq!(
            err(format!("#\n\n{HEX}  a\nbad\n").as_bytes()).line(),
            Some(4)
        );
    }

    #[test]
    fn leading_blanks_and_a_tab_gap_are_read_as_gnu_does() {
        assert_eq!(one(&format!("  \t{HEX}  f")).path, b"f");
        assert_eq!(one(&format!("{HEX}\t f")).path, b"f");
        assert_eq!(one(&format!("{HEX}\t*f")).form, Form::Binary);
    }

    #[test]
    fn names_keep_leading_and_trailing_spaces_and_stars() {
        assert_eq!(one(&format!("{HEX}   f ")).path, b" f ");
        assert_eq!(one(&format!("{HEX}  *f")).path, b"*f");
        assert_eq!(one(&format!("{HEX} **f")).path, b"*f");
    }

    #[test]
    fn error_display_names_the_line() {
        let e = err(format!("{HEX}  a\nnonsense\n").as_bytes());
        assert_eq!(e.line(), Some(2));
        assert!(
            e.to_string()
                .starts_with("line 2: improperly formatted SHA256 checksum line"),
            "{e}"
        );
    }

    #[test]
    fn every_malformed_shape_is_an_error() {
        let bad = [
            format!("{HEX} f"),                     // one blank after marked lines
            format!("{HEX}\tname"),                 // the same, with a tab
            format!("{HEX}f"),                      // no gap
            format!("{HEX}  "),                     // one blank and a name ` `, after marked
            format!("{HEX} "),                      // no name
            HEX.to_string(),                        // digest only
            format!("{}  f", &HEX[..63]),           // short digest
            format!("{HEX}0  f"),                   // long digest
            format!("{}g  f", &HEX[..63]),          // not hex
            " # indented comment".to_string(),      // comments start at column 1
            "   ".to_string(),                      // only blanks
            format!("SHA256 (f) = {HEX}0"),         // long tagged digest
            format!("SHA256 (f) = {}", &HEX[..62]), // short tagged digest
            format!("SHA256 (f) = {HEX} "),         // trailing blank
            format!("SHA256 (f) {HEX}"),            // no `=`
            format!("SHA256 f) = {HEX}"),           // no `(`
            format!("SHA256 (f = {HEX}"),           // no `)`
            format!("SHA256 () = {HEX}"),           // empty name
            format!("MD5 (f) = {HEX}"),             // other algorithm
            format!("SHA2566 (f) = {HEX}"),         // other algorithm
            format!("\\{HEX}  a\\qb"),              // unknown escape
            format!("\\{HEX}  a\\"),                // lone backslash
            format!("\\SHA256 (a\\) = {HEX}"),      // lone backslash, tagged
            "\\".to_string(),                       // marker only
        ];
        // After a `HEX  NAME` line, so the one-blank lines are out of order too.
        for line in bad {
            let e = err(format!("{HEX}  ok\n{line}\n").as_bytes());
            assert!(
                matches!(
                    e,
                    ParseError::Line {
                        line: 2,
                        problem: LineProblem::Malformed(_)
                    }
                ),
                "{line:?}: {e:?}"
            );
        }
    }

    #[test]
    fn the_first_untagged_line_decides_the_order_of_every_other() {
        // One blank first: every untagged line's name is all after its one gap.
        let m = parse(
            format!("SHA256 (t) = {HEX}\n{HEX} a\n{HEX}  b\n{HEX} *c\n{HEX}\td\n").as_bytes(),
        )
        .unwrap();
        let got: Vec<(&[u8], Form)> = m.iter().map(|e| (e.path.as_slice(), e.form)).collect();
        assert_eq!(
            got,
            vec![
                (&b"t"[..], Form::Tagged),
                (b"a", Form::Reversed),
                (b" b", Form::Reversed),
                (b"*c", Form::Reversed),
                (b"d", Form::Reversed),
            ]
        );
        assert_eq!(
            m.to_bytes(),
            format!("SHA256 (t) = {HEX}\n{HEX} a\n{HEX}  b\n{HEX} *c\n{HEX} d\n").into_bytes()
        );
        // A lone byte after the gap is a one-blank name, even a space.
        assert_eq!(one(&format!("{HEX}  ")).path, b" ");
        assert_eq!(one(&format!("\\{HEX} a\\nb")).path, b"a\nb");
        // Marked first: a one-blank line is malformed.
        assert_eq!(
            err(format!("{HEX}  a\n{HEX} b\n").as_bytes()).line(),
            Some(2)
        );
        // Lines that fail before the order is looked at decide nothing.
        assert_eq!(
            first_order(
                format!("# c\nSHA256 (t) = {HEX}\n{}  x\n{HEX} y\n", &HEX[..63]).as_bytes()
            ),
            Some(Order::Reversed)
        );
    }

    #[test]
    fn a_nul_in_a_name_is_refused() {
        let e = err(format!("{HEX}  a\0b").as_bytes());
        assert!(matches!(
            e,
            ParseError::Line {
                problem: LineProblem::Path(PathError {
                    problem: PathProblem::Nul,
                    ..
                }),
                ..
            }
        ));
    }

    #[test]
    fn unsafe_paths_are_refused_with_their_line() {
        for (name, want) in [
            ("/etc/passwd", PathProblem::Absolute),
            ("../up", PathProblem::ParentDir),
            ("a/../../up", PathProblem::ParentDir),
            ("dir/", PathProblem::TrailingSlash),
            (".", PathProblem::NoFileName),
        ] {
            let e = err(format!("{HEX}  ok\n{HEX}  {name}\n").as_bytes());
            match e {
                ParseError::Line {
                    line: 2,
                    problem: LineProblem::Path(p),
                } => {
                    assert_eq!(p.problem, want, "{name}");
                    assert_eq!(p.path, name.as_bytes());
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn no_entries_is_an_error() {
        assert_eq!(err(b""), ParseError::NoEntries);
        assert_eq!(err(b"# only a comment\n\n"), ParseError::NoEntries);
        assert_eq!(
            err(b"\n").to_string(),
            "no properly formatted SHA256 checksum lines found"
        );
    }

    #[test]
    fn writing_matches_sha256sum_byte_for_byte() {
        let d = digest();
        let mut tagged = Entry::new(&b"p)q"[..], d);
        tagged.form = Form::Tagged;
        let mut binary = Entry::new(&b"b"[..], d);
        binary.form = Form::Binary;
        let mut tagged_escaped = Entry::new(&b"n\nl"[..], d);
        tagged_escaped.form = Form::Tagged;
        let out = write(&[
            Entry::new(&b"sp ace"[..], d),
            Entry::new(&b"a\\b"[..], d),
            Entry::new(&b"c\rr"[..], d),
            binary,
            tagged,
            tagged_escaped,
        ]);
        let want = format!(
            "{HEX}  sp ace\n\\{HEX}  a\\\\b\n\\{HEX}  c\\rr\n{HEX} *b\nSHA256 (p)q) = {HEX}\n\\SHA256 (n\\nl) = {HEX}\n"
        );
        assert_eq!(String::from_utf8_lossy(&out), want);
        assert_eq!(parse(&out).unwrap().to_bytes(), out);
    }

    /// Lines of every kind a piece boundary could fall beside.
    fn line_kinds() -> Vec<String> {
        vec![
            format!("{HEX}  a/b.txt"),
            format!("{HEX} *bin"),
            format!("SHA256 (tag) = {HEX}"),
            format!("\\{HEX}  new\\nline"),
            format!("{HEX}  crlf\r"),
            "# a comment".into(),
            String::new(),
            format!("{HEX}  ../out"),
            "not a line".into(),
            // One blank: it decides the order when it is the first untagged line.
            format!("{HEX} rev"),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        #[test]
        fn a_manifest_read_in_pieces_reads_as_it_does_whole(
            picks in proptest::collection::vec(0usize..10, 0..40),
            final_newline: bool,
            least in 1usize..200,
            threads in 2usize..6,
        ) {
            let kinds = line_kinds();
            let mut text = picks.iter().map(|&k| kinds[k].as_str()).collect::<Vec<_>>().join("\n");
            if final_newline {
                text.push('\n');
            }
            let bytes = text.as_bytes();
            let cut = pieces(bytes, least, threads);
            proptest::prop_assert_eq!(cut.concat(), bytes.to_vec());
            proptest::prop_assert!(cut.len() <= threads);
            for piece in &cut[..cut.len() - 1] {
                proptest::prop_assert_eq!(piece.last(), Some(&b'\n'));
            }
            // Whole, line by line, is what parse has always done; any cut must agree with it,
            // the first bad line's number included.
            proptest::prop_assert_eq!(parse_pieces(&cut), parse_pieces(&[bytes]));
        }
    }

    #[test]
    fn the_first_bad_line_is_named_across_pieces() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!("{HEX}  f{i}\n"));
        }
        text.push_str("bad line\n");
        for i in 0..50 {
            text.push_str(&format!("{HEX}  ../g{i}\n"));
        }
        let cut = pieces(text.as_bytes(), 64, 4);
        assert_eq!(
            cut.len(),
            4,
            "the test needs the bad line past the first piece"
        );
        assert_eq!(parse_pieces(&cut).unwrap_err().line(), Some(51));
        // A large manifest takes the same path through `parse`.
        let big = text.repeat(1 + PIECE_BYTES * 2 / text.len());
        assert_eq!(parse(big.as_bytes()).unwrap_err().line(), Some(51));
        assert_eq!(pieces(b"", 64, 4), vec![&b""[..]]);
    }
}
