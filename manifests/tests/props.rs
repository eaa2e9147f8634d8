//! Properties of the format: any file name survives write-then-parse in every form, and the
//! parser never panics, whatever the bytes.

use manifests::{parse, write, Digest, Entry, Form};
use proptest::prelude::*;

/// One path component: any bytes but NUL and `/`, and not `.` or `..`.
fn component() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        any::<u8>().prop_filter("no NUL or /", |b| *b != 0 && *b != b'/'),
        1..12,
    )
    .prop_filter("not . or ..", |c| c != b"." && c != b"..")
}

/// Names biased towards the bytes the format treats specially.
fn tricky_component() -> impl Strategy<Value = Vec<u8>> {
    let special = prop_oneof![
        Just(b'\\'),
        Just(b'\n'),
        Just(b'\r'),
        Just(b' '),
        Just(b'\t'),
        Just(b'*'),
        Just(b'('),
        Just(b')'),
        Just(b'='),
        Just(b'#'),
        Just(0xffu8),
        b'a'..=b'z',
    ];
    proptest::collection::vec(special, 1..12)
        .prop_filter("not . or ..", |c| c != b"." && c != b"..")
}

fn path() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop_oneof![component(), tricky_component()], 1..4)
        .prop_map(|parts| parts.join(&b'/'))
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        path(),
        any::<[u8; 32]>(),
        prop_oneof![Just(Form::Text), Just(Form::Binary), Just(Form::Tagged)],
    )
        .prop_map(|(path, digest, form)| Entry {
            path,
            digest: Digest(digest),
            form,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_name_survives_write_then_parse(entries in proptest::collection::vec(entry(), 1..8)) {
        let bytes = write(&entries);
        let back = parse(&bytes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&back.entries, &entries);
        prop_assert_eq!(write(&back.entries), bytes);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn parse_never_panics_on_damaged_manifests(
        entries in proptest::collection::vec(entry(), 1..4),
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = write(&entries);
        for (at, byte) in cuts {
            let i = at.index(bytes.len());
            match byte % 3 {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        if let Ok(m) = parse(&bytes) {
            // Whatever is accepted is a manifest that writes and reads back the same.
            prop_assert_eq!(parse(&write(&m.entries)).ok(), Some(m));
        }
    }
}
