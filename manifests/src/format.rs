//! The manifest's bytes: reading and writing GNU `sha256sum` lines.
//!
//! What is read is what `sha256sum -c --strict` (coreutils 9.x) reads, checked line by line
//! against the real binary in `tests/gnu.rs`:
//! - `HEX  PATH` (text), `HEX *PATH` (binary) and `SHA256 (PATH) = HEX` (`--tag`);
//! - a leading `\` on any of them means the name is escaped: `\\`, `\n` and `\r` stand for a
//!   backslash, newline and carriage return, and any other escape is malformed. Without the
//!   leading `\`, a backslash in a name is just a backslash;
//! - 64 hex digits in either case; leading spaces and tabs before the line are skipped, and
//!   the gap after the digest may be a space or a tab, as GNU allows;
//! - lines are split on `\n` and then lose one `\r`, so CRLF manifests read the same (a name
//!   really ending in CR is written escaped, so nothing is lost);
//! - a line is a comment only when `#` is its first byte; empty lines are skipped; a line of
//!   only blanks is malformed.
//!
//! One deliberate departure: GNU also takes `HEX PATH` with a single space (the BSD `md5 -r`
//! order) when it is the first line's form. No version of sha256sum writes it, and reading it
//! would make a name's leading space ambiguous, so here it is malformed.
//!
//! Every path read is also put through [`crate::check_path`], so an absolute or `..` path is
//! refused while the line number is still known.

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
    let read: Vec<Result<Piece, PieceError>> = if let [one] = pieces {
        vec![parse_piece(one)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = pieces
                .iter()
                .map(|&piece| scope.spawn(move || parse_piece(piece)))
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

/// Reads a run of whole lines (the last may lack its `\n`).
fn parse_piece(bytes: &[u8]) -> Result<Piece, PieceError> {
    let mut entries = Vec::with_capacity(bytes.len() / SHORTEST_LINE + 1);
    let mut lines = 0;
    let mut split = bytes.split(|&b| b == b'\n').peekable();
    while let Some(raw) = split.next() {
        // The piece after a final `\n` is not a line.
        if raw.is_empty() && split.peek().is_none() {
            break;
        }
        lines += 1;
        if raw.first() == Some(&b'#') {
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            continue;
        }
        let problem = |problem| PieceError {
            line: lines,
            problem,
        };
        let entry = parse_line(line).map_err(|m| problem(LineProblem::Malformed(m)))?;
        check_path(&entry.path).map_err(|e| problem(LineProblem::Path(e)))?;
        entries.push(entry);
    }
    Ok(Piece { entries, lines })
}

/// The bytes of the shortest line that holds an entry (64 digits, two marks, a one-byte name,
/// its `\n`): a piece's entries are sized for the most it can hold, once, rather than grown a
/// dozen times. Room never used costs address space, not memory.
const SHORTEST_LINE: usize = 68;

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// One non-empty, non-comment line without its line ending.
fn parse_line(line: &[u8]) -> Result<Entry, &'static str> {
    let start = line
        .iter()
        .position(|&b| !is_blank(b))
        .ok_or("blank line")?;
    let mut rest = &line[start..];
    let escaped = rest.first() == Some(&b'\\');
    if escaped {
        rest = &rest[1..];
    }
    if let Some(tagged) = rest.strip_prefix(b"SHA256") {
        return parse_tagged(tagged, escaped);
    }

    let hex = rest.get(..64).ok_or("line too short for a SHA256 digest")?;
    let digest = Digest::from_hex(hex).ok_or("digest is not 64 hex digits")?;
    let rest = &rest[64..];
    let (&gap, rest) = rest.split_first().ok_or("no file name after the digest")?;
    if !is_blank(gap) {
        return Err("digest is not 64 hex digits followed by a space");
    }
    let (&marker, name) = rest.split_first().ok_or("no file name after the digest")?;
    let form = match marker {
        b' ' => Form::Text,
        b'*' => Form::Binary,
        _ => return Err("expected two spaces or ` *` between digest and file name"),
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
        Form::Text | Form::Binary => {
            out.extend_from_slice(hex.as_bytes());
            out.extend_from_slice(if entry.form == Form::Text {
                b"  "
            } else {
                b" *"
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
            format!("{HEX} f"),
            format!("{HEX} name"),                  // BSD reversed, one space
            format!("{HEX}f"),                      // no gap
            format!("{HEX}  "),                     // no name
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
        for line in bad {
            let e = err(format!("{line}\n").as_bytes());
            assert!(
                matches!(
                    e,
                    ParseError::Line {
                        line: 1,
                        problem: LineProblem::Malformed(_)
                    }
                ),
                "{line:?}: {e:?}"
            );
        }
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
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        #[test]
        fn a_manifest_read_in_pieces_reads_as_it_does_whole(
            picks in proptest::collection::vec(0usize..9, 0..40),
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
