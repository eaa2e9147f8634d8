//! Reading a whole manifest: its lines, each read by [`crate::line`] in the order the first
//! untagged line sets, and the errors that name the first bad one.
//!
//! What is read is what `sha256sum -c --strict` (coreutils 9.1) reads, checked line by line
//! against the real binary in `tests/gnu.rs` and `tests/differential.rs`. Around the lines:
//! - lines are split on `\n` and then lose one `\r`, so CRLF manifests read the same (a name
//!   really ending in CR is written escaped, so nothing is lost);
//! - a line is a comment only when `#` is its first byte; empty lines are skipped;
//! - a manifest of no entries is an error, as sha256sum says it is.
//!
//! Deliberate departures, all lines whose check could never come out OK (sha256sum takes them
//! and reports `FAILED open or read`, or checks a different name): an empty name, a name with
//! a NUL byte (sha256sum silently checks the name cut at the NUL), and a path longer than
//! Linux's `PATH_MAX` are refused as bad input. Every path read is also put through
//! [`crate::check_path`], so an absolute or `..` path is refused while the line number is
//! still known.
//!
//! A large manifest is read in pieces on every core (see [`parse`]).

use thiserror::Error;

use crate::cores::cores;
use crate::entry::{Entry, Manifest};
use crate::line::{order_of, parse_line, Order};
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
    parse_pieces(&pieces(bytes, PIECE_BYTES, cores()))
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

/// The order the first untagged line of `bytes` sets, if any line does.
fn first_order(bytes: &[u8]) -> Option<Order> {
    content_lines(bytes).find_map(|(_, line)| order_of(line))
}

#[cfg(test)]
mod tests;
