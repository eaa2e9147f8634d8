//! The reading of whole manifests: every line form, the order the first untagged line sets,
//! the numbering of the first bad line, and a manifest cut into pieces reading as it does whole.

use super::*;
use crate::entry::{Digest, Form};
use crate::line::Order;
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
    let m =
        parse(format!("SHA256 (t) = {HEX}\n{HEX} a\n{HEX}  b\n{HEX} *c\n{HEX}\td\n").as_bytes())
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
        first_order(format!("# c\nSHA256 (t) = {HEX}\n{}  x\n{HEX} y\n", &HEX[..63]).as_bytes()),
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
