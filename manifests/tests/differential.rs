//! Line by line against the real `sha256sum -c --strict` (coreutils 9.1 here): thousands of
//! manifest lines made from every shape a line can take (blanks before it, the gap after the
//! digest, one blank or two marks or a star, the escape mark, tagged spacing, digest case,
//! trailing blanks, CR endings, names with blanks, stars, parentheses, ` = `, backslashes,
//! newlines and CRs), each read by both. For every line both must accept or both refuse, and
//! for an accepted line both must come to the same result: OK, FAILED (content differs) or
//! FAILED open or read (nothing readable there).
//!
//! A line's reading can depend on the file's first untagged line (see `format.rs`), so every
//! line is read three ways: first in its file, after a `HEX  NAME` line, and after a
//! `HEX NAME` line.
//!
//! What is left out is what the path rules refuse on purpose, with sha256sum's answer for each
//! pinned in [`departures_are_lines_sha256sum_can_never_check_ok`]: an empty name, a name with
//! a NUL, `-` (stdin to sha256sum), absolute and `..` paths.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::common::sha256sum;
use manifests::{escape_name, parse, verify, Digest, ParseError, Status};

/// What a reader made of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// Refused as malformed.
    Refused,
    /// A comment: neither checked nor malformed.
    Comment,
    /// Accepted; the file's content has the digest.
    Ok,
    /// Accepted; the file is there and its content differs.
    Failed,
    /// Accepted; nothing readable at the name.
    Unreadable,
}

/// Names in the tree, each a file whose content is the name and a newline.
fn names() -> Vec<&'static [u8]> {
    vec![
        b"f", b" f", b"*f", b"f ", b"f\t", b"a b", b"p(q)", b"p) = q", b"x = y", b"a\\b", b"a\\nb",
        b"a\nb", b"a\rb", b"\tt", b"(", b")", b"=", b"SHA256", b"#h", b"\\", b"d/e", b"./dot",
    ]
}

fn digest_of_name(name: &[u8]) -> Digest {
    Digest::of(&[name, b"\n"].concat())
}

/// How a name is written into a line.
#[derive(Clone, Copy, Debug)]
enum Render {
    /// The bytes as they are, no escape mark.
    Raw,
    /// The escape mark and sha256sum's escapes.
    Escaped,
    /// The escape mark, the bytes as they are (a backslash in them is then an escape).
    MarkOnly,
}

/// The name's bytes in a line, and whether the line starts with the escape mark.
fn render(name: &[u8], how: Render) -> (bool, Vec<u8>) {
    match how {
        Render::Raw => (false, name.to_vec()),
        Render::Escaped => (true, escape_name(name)),
        Render::MarkOnly => (true, name.to_vec()),
    }
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    Text,
    Binary,
    OneBlank,
    /// `SHA256{sp}({name}){a}={b}{hex}`
    Tagged(&'static str, &'static str, &'static str),
}

const SHAPES: &[Shape] = &[
    Shape::Text,
    Shape::Binary,
    Shape::OneBlank,
    Shape::Tagged(" ", " ", " "),
    Shape::Tagged("", "", ""),
    Shape::Tagged("  ", " ", " "),
    Shape::Tagged(" ", "\t", "\t"),
    Shape::Tagged(" ", "  ", "  "),
    Shape::Tagged(" ", " ", "\x0b"),
];

const LEADS: &[&str] = &["", " ", "\t", "\x0b", "\x0c", "\r", " \t ", "#", " #"];
const GAPS: &[&str] = &[" ", "\t", "\x0b", "\x0c", "\r", "  "];
const TRAILS: &[&str] = &["", "\r", " ", "\t", "\r\r", "x"];

/// The digest as written: right in lower, upper or mixed case, wrong, or one digit short.
fn hex_variants(right: &Digest) -> Vec<String> {
    let lower = right.to_hex();
    let mixed: String = lower
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    vec![
        lower.clone(),
        lower.to_uppercase(),
        mixed,
        Digest::of(b"something else").to_hex(),
        lower[..63].to_string(),
    ]
}

/// A fixed pseudo-random choice among `len` for line `turn` and axis `salt` (splitmix64), so
/// every value of each axis meets every value of the others.
fn pick(turn: usize, salt: u64, len: usize) -> usize {
    let mut z = (turn as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ salt.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) % len as u64) as usize
}

/// Every line of the test: the name's shapes crossed with digest forms, and the blanks, gaps
/// and endings picked for each line apart (see [`pick`]).
fn lines() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut turn = 0usize;
    let mut names_and_missing = names();
    names_and_missing.push(b"gone");
    for name in names_and_missing {
        let right = digest_of_name(name);
        for hex in hex_variants(&right) {
            for how in [Render::Raw, Render::Escaped, Render::MarkOnly] {
                let (mark, body) = render(name, how);
                for &shape in SHAPES {
                    turn += 1;
                    let lead = LEADS[pick(turn, 1, LEADS.len())];
                    let gap = GAPS[pick(turn, 2, GAPS.len())];
                    let trail = TRAILS[pick(turn, 3, TRAILS.len())];
                    let mut line = lead.as_bytes().to_vec();
                    if mark {
                        line.push(b'\\');
                    }
                    match shape {
                        Shape::Text | Shape::Binary | Shape::OneBlank => {
                            line.extend_from_slice(hex.as_bytes());
                            line.extend_from_slice(gap.as_bytes());
                            match shape {
                                Shape::Text => line.push(b' '),
                                Shape::Binary => line.push(b'*'),
                                _ => {}
                            }
                            line.extend_from_slice(&body);
                        }
                        Shape::Tagged(sp, a, b) => {
                            line.extend_from_slice(format!("SHA256{sp}(").as_bytes());
                            line.extend_from_slice(&body);
                            line.extend_from_slice(format!("){a}={b}{hex}").as_bytes());
                        }
                    }
                    // A trailing blank or a CR only on some, so plain lines stay common.
                    if pick(turn, 4, 4) == 0 {
                        line.extend_from_slice(trail.as_bytes());
                    }
                    // A raw newline would split the line in two: a case of its own below.
                    if !line.contains(&b'\n') {
                        out.push(line);
                    }
                }
            }
        }
    }
    out
}

/// A tree with every name of [`names`].
fn tree(root: &Path) {
    for name in names() {
        let path = root.join(OsStr::from_bytes(name));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, [name, b"\n"].concat()).unwrap();
    }
}

/// What we make of the last line of `text` (the lines before it are known good).
fn ours(root: &Path, text: &[u8], lines_before: usize) -> Result<Read, String> {
    match parse(text) {
        Err(ParseError::Line { line, .. }) if line == lines_before + 1 => Ok(Read::Refused),
        Err(ParseError::NoEntries) if lines_before == 0 && text.first() == Some(&b'#') => {
            Ok(Read::Comment)
        }
        Err(e) => Err(format!("refused at the wrong line: {e}")),
        Ok(m)
            if m.len() == lines_before
                && text
                    .split(|&b| b == b'\n')
                    .nth(lines_before)
                    .and_then(|l| l.first())
                    == Some(&b'#') =>
        {
            Ok(Read::Comment)
        }
        Ok(m) => {
            if m.len() != lines_before + 1 {
                return Err(format!("{} entries", m.len()));
            }
            let v = verify(root, &m).map_err(|e| format!("verify: {e}"))?;
            let last = v.entries.last().unwrap();
            Ok(match last.status {
                Status::Ok => Read::Ok,
                Status::Failed if last.detail.as_deref() == Some("content differs") => Read::Failed,
                Status::Failed | Status::Missing => Read::Unreadable,
            })
        }
    }
}

/// What `sha256sum -c --strict --warn` made of the lines of the files `files` (each one line
/// after `prefix`), in the order given, from one run: `--warn` names each malformed line, and
/// each checked line prints one result line in order.
fn theirs(root: &Path, prefix: Option<&[u8]>, lines: &[Vec<u8>]) -> Vec<Read> {
    let list = root.join("list");
    let mut text = Vec::new();
    let first = usize::from(prefix.is_some()) + 1;
    if let Some(p) = prefix {
        text.extend_from_slice(p);
        text.push(b'\n');
    }
    for line in lines {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    fs::write(&list, &text).unwrap();
    let out = sha256sum(root, &[b"-c", b"--strict", b"--warn", b"list"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let malformed: std::collections::BTreeSet<usize> = stderr
        .lines()
        .filter(|l| l.ends_with("improperly formatted SHA256 checksum line"))
        .map(|l| l.split(": ").nth(2).unwrap().parse().unwrap())
        .collect();
    let mut results = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l.ends_with(b": OK") {
                Read::Ok
            } else if l.ends_with(b": FAILED open or read") {
                Read::Unreadable
            } else if l.ends_with(b": FAILED") {
                Read::Failed
            } else {
                panic!("sha256sum said {:?}", String::from_utf8_lossy(l))
            }
        });
    if prefix.is_some() {
        assert_eq!(results.next(), Some(Read::Ok), "the prefix line: {stderr}");
    }
    // Comment lines are neither malformed nor checked.
    let read: Vec<Read> = (0..lines.len())
        .map(|i| {
            if lines[i].first() == Some(&b'#') {
                Read::Comment
            } else if malformed.contains(&(first + i)) {
                Read::Refused
            } else {
                results.next().expect("a result for each checked line")
            }
        })
        .collect();
    assert_eq!(results.next(), None, "more results than lines");
    read
}

fn show(line: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(line))
}

#[test]
fn every_line_reads_as_sha256sum_strict_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tree(root);
    let lines = lines();
    assert!(lines.len() > 2000, "{} lines", lines.len());
    let f = digest_of_name(b"f").to_hex();
    let mut mismatches = Vec::new();
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    let marked = format!("{f}  f").into_bytes();
    let one_blank = format!("{f} f").into_bytes();
    for prefix in [Some(&marked), Some(&one_blank)] {
        // One run for all lines: after the prefix, the order is fixed.
        for chunk in lines.chunks(400) {
            let gnu = theirs(root, prefix.map(Vec::as_slice), chunk);
            for (line, gnu) in chunk.iter().zip(gnu) {
                let text = [prefix.unwrap().as_slice(), b"\n", line, b"\n"].concat();
                let we = ours(root, &text, 1);
                *seen.entry(format!("{gnu:?}")).or_default() += 1;
                if we != Ok(gnu) {
                    mismatches.push(format!(
                        "after {}: {}: sha256sum {gnu:?}, we {we:?}",
                        show(prefix.unwrap()),
                        show(line)
                    ));
                }
            }
        }
    }
    // First in its file: one run each, since the line decides the order. The untagged ones
    // only (a tagged line decides nothing and was read above), and every third of those.
    for line in lines
        .iter()
        .filter(|l| !l.windows(6).any(|w| w == b"SHA256"))
        .step_by(3)
    {
        let gnu = theirs(root, None, std::slice::from_ref(line))[0];
        let text = [line.as_slice(), b"\n"].concat();
        let we = ours(root, &text, 0);
        *seen.entry(format!("{gnu:?}")).or_default() += 1;
        if we != Ok(gnu) {
            mismatches.push(format!(
                "first: {}: sha256sum {gnu:?}, we {we:?}",
                show(line)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of the lines read differently, e.g.\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(25)].join("\n")
    );
    // Every outcome came up many times: the comparison has all its sides.
    for outcome in ["Ok", "Failed", "Unreadable", "Refused", "Comment"] {
        let n = seen.get(outcome).copied().unwrap_or(0);
        assert!(n >= 50, "{outcome} only {n} times: {seen:?}");
    }
}

/// A name with a raw newline is two lines to both, and the second is malformed to both.
#[test]
fn a_raw_newline_in_a_name_splits_the_line_for_both() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let hex = digest_of_name(b"a\nb").to_hex();
    let text = format!("{hex}  a\nb\n");
    fs::write(dir.path().join("list"), &text).unwrap();
    let gnu = sha256sum(dir.path(), &[b"-c", b"--strict", b"--warn", b"list"]);
    assert_eq!(gnu.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gnu.stderr).contains("list: 2: improperly formatted"));
    assert_eq!(parse(text.as_bytes()).unwrap_err().line(), Some(2));
}

/// The lines the path rules refuse on purpose. sha256sum takes each, and none can ever check
/// OK against the tree it names: an empty name and a `PATH_MAX` one cannot be opened, a NUL
/// cuts the name sha256sum opens (it checks `f` for `f\0x`, a file the line does not name).
/// And one line read differently without a refusal: `-` is sha256sum's standard input, here
/// a file named `-` in the tree.
#[test]
fn departures_are_lines_sha256sum_can_never_check_ok() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tree(root);
    let f = digest_of_name(b"f").to_hex();
    let long = "n".repeat(5000);
    let cases: Vec<(Vec<u8>, Read)> = vec![
        (format!("SHA256 () = {f}").into_bytes(), Read::Unreadable),
        (format!("{f}  {long}").into_bytes(), Read::Unreadable),
        (format!("{f}  f\0x").into_bytes(), Read::Ok),
        (format!("SHA256 (f\0x) = {f}").into_bytes(), Read::Ok),
    ];
    for (line, gnu_reads) in cases {
        // sha256sum's stdin here is empty, so `-` has the empty digest.
        assert_eq!(
            theirs(root, None, std::slice::from_ref(&line))[0],
            gnu_reads,
            "{}",
            show(&line)
        );
        let err = parse(&[line.as_slice(), b"\n"].concat());
        assert!(err.is_err(), "{}: {err:?}", show(&line));
    }
    // sha256sum's stdin here is empty, so it finds `-` to have the empty digest; we look for
    // a file named `-` and find none.
    let dash = format!("{}  -", Digest::of(b"").to_hex()).into_bytes();
    assert_eq!(theirs(root, None, std::slice::from_ref(&dash))[0], Read::Ok);
    assert_eq!(ours(root, &dash, 0), Ok(Read::Unreadable));
}
