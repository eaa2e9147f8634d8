//! The manifest parser under hostile input: whatever the bytes (random, or a valid manifest
//! damaged line by line), it never panics, an error names a line that exists and the very line
//! that was damaged, its message is one printable line, and whatever it accepts prints and
//! parses back to the same manifest.

use manifests::{check_path, parse, write, Digest, Entry, Form, ParseError};
use proptest::prelude::*;

/// Bytes biased towards what a manifest is made of, so random input reaches deep branches.
fn manifest_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => prop::sample::select(b"0123456789abcdefABCDEF".to_vec()),
        2 => prop::sample::select(b" \t*\\\n\r()=#/.-SHA256".to_vec()),
        1 => any::<u8>(),
    ]
}

fn name() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            4 => prop::sample::select(b"abcxyz019_-. ".to_vec()),
            1 => prop::sample::select(b"\\\n\r*()=#\x1b\x7f".to_vec()),
            1 => any::<u8>().prop_filter("no NUL or /", |b| *b != 0 && *b != b'/'),
        ],
        1..10,
    )
    .prop_filter("not . or ..", |c| c != b"." && c != b"..")
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        proptest::collection::vec(name(), 1..3).prop_map(|p| p.join(&b'/')),
        any::<[u8; 32]>(),
        prop_oneof![Just(Form::Text), Just(Form::Binary), Just(Form::Tagged)],
    )
        .prop_map(|(path, digest, form)| Entry {
            path,
            digest: Digest(digest),
            form,
        })
}

/// The lines of `bytes` as `parse` counts them (split on LF).
fn line_count(bytes: &[u8]) -> usize {
    bytes.split(|&b| b == b'\n').count()
}

/// What every outcome of `parse` must satisfy, whatever the input.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    match parse(bytes) {
        Ok(m) => {
            prop_assert!(!m.entries.is_empty());
            for e in &m.entries {
                prop_assert!(check_path(&e.path).is_ok());
            }
            let printed = write(&m.entries);
            let again = parse(&printed).map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(&again, &m);
            prop_assert_eq!(write(&again.entries), printed);
        }
        Err(e) => {
            if let ParseError::Line { line, .. } = &e {
                prop_assert!(*line >= 1 && *line <= line_count(bytes), "line {line}");
            }
            let text = e.to_string();
            prop_assert!(
                !text.chars().any(char::is_control),
                "the message holds a control character: {text:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..1200)) {
        check(&bytes)?;
    }

    #[test]
    fn manifest_like_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(manifest_byte(), 0..240)) {
        check(&bytes)?;
    }

    #[test]
    fn valid_manifests_roundtrip_and_read_the_same_with_crlf_blanks_and_uppercase(
        entries in proptest::collection::vec(entry(), 1..8),
        indent in proptest::collection::vec(prop::sample::select(vec![b' ', b'\t']), 0..3),
    ) {
        let bytes = write(&entries);
        let m = parse(&bytes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&m.entries, &entries);
        prop_assert_eq!(write(&m.entries), bytes.clone());
        // CRLF line ends, leading blanks and upper-case digests read as the same entries.
        let mut variant = Vec::new();
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            variant.extend_from_slice(&indent);
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            // The digest's place: the last 64 bytes of a tagged line, else the 64 after an
            // optional leading `\`.
            let tagged = body.starts_with(b"SHA256") || body.starts_with(b"\\SHA256");
            let hex = if tagged {
                body.len() - 64..body.len()
            } else {
                let at = usize::from(body.first() == Some(&b'\\'));
                at..at + 64
            };
            let mut body = body.to_vec();
            body[hex].make_ascii_uppercase();
            variant.extend_from_slice(&body);
            variant.extend_from_slice(b"\r\n");
        }
        let again = parse(&variant).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&again.entries, &entries);
    }

    #[test]
    fn damaged_manifests_fail_at_the_damaged_line_or_roundtrip(
        entries in proptest::collection::vec(entry(), 1..6),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8, proptest::collection::vec(manifest_byte(), 0..12)), 1..5),
    ) {
        let mut lines: Vec<Vec<u8>> = write(&entries)
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        lines.pop(); // the piece after the last newline
        for (at, kind, bytes) in edits {
            let i = at.index(lines.len());
            match kind {
                0 => { let l = lines[i].clone(); lines.insert(i, l); }
                1 => { let j = (i + 1) % lines.len(); lines.swap(i, j); }
                2 => lines[i].push(b'\r'),
                3 => lines.insert(i, [b"#".as_slice(), &bytes].concat()),
                4 => lines.insert(i, bytes.iter().copied().filter(|&b| b != b'\n').collect()),
                5 => { let k = at.index(lines[i].len().max(1)).min(lines[i].len()); lines[i].truncate(k); }
                6 => { let k = at.index(lines[i].len() + 1); lines[i].splice(k..k, bytes.iter().copied().filter(|&b| b != b'\n')); }
                _ => { let k = at.index(lines[i].len().max(1)).min(lines[i].len().saturating_sub(1)); if let Some(b) = lines[i].get_mut(k) { *b = bytes.first().copied().unwrap_or(b'!'); } }
            }
            if lines.is_empty() { lines.push(Vec::new()); }
        }
        let bytes: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        check(&bytes)?;
    }

    #[test]
    fn an_error_names_the_line_that_was_broken(
        entries in proptest::collection::vec(entry(), 2..6),
        which in any::<prop::sample::Index>(),
        garbage in prop_oneof![Just(b"zz".to_vec()), Just(b"SHA256 (x) = 12".to_vec()), Just(b"  ".to_vec()), Just(b"\\0123".to_vec())],
    ) {
        let mut lines: Vec<Vec<u8>> = entries.iter().map(|e| write(std::slice::from_ref(e))).collect();
        let k = which.index(lines.len());
        lines[k] = [garbage.as_slice(), b"\n"].concat();
        // Lines before k are valid and one line each, so the broken one is line k+1 ...
        let before: usize = lines[..k].iter().map(|l| l.iter().filter(|&&b| b == b'\n').count()).sum();
        let bytes = lines.concat();
        let e = parse(&bytes).expect_err("a broken line is refused");
        prop_assert_eq!(e.line(), Some(before + 1));
    }

    #[test]
    fn check_path_accepts_only_paths_inside_the_tree(path in proptest::collection::vec(prop_oneof![Just(b'/'), Just(b'.'), Just(0u8), Just(b'a')], 0..10)) {
        let ok = check_path(&path).is_ok();
        let parts: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
        let inside = !path.is_empty()
            && !path.contains(&0)
            && path[0] != b'/'
            && !path.ends_with(b"/")
            && !parts.contains(&&b".."[..])
            && parts.iter().any(|p| !p.is_empty() && *p != b".");
        prop_assert_eq!(ok, inside, "{:?}", String::from_utf8_lossy(&path));
    }
}

#[test]
fn a_path_error_shows_control_characters_escaped() {
    let bytes = format!("{}  ../x\x1b[2Jx\n", "0".repeat(64));
    let e = parse(bytes.as_bytes()).unwrap_err();
    let text = e.to_string();
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(text.contains("\\u{1b}[2J"), "{text:?}");
    let e = parse(format!("{}  ../\u{202e}x\n", "0".repeat(64)).as_bytes()).unwrap_err();
    assert!(!e.to_string().contains('\u{202e}'), "{e}");
    let e = parse(&[b"0".repeat(64).as_slice(), b"  ../\xffx\n"].concat()).unwrap_err();
    assert!(e.to_string().contains("\\xff"), "{e}");
}
