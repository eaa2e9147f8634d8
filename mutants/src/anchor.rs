//! Finding and swapping an anchor in a file's bytes.
//!
//! Everything here works on `&[u8]`, never `&str`: a file under test need not be UTF-8 (a
//! Latin-1 fixture, a binary blob with one text field), and an anchor may span lines. An anchor
//! is only used when it occurs exactly once, so a swap can never land on the wrong occurrence;
//! occurrences are counted without overlap, the way a reader counts them. The diff a report
//! shows of a swap is `similar`'s unified diff (the field's well-kept line differ).

/// Byte offsets of every non-overlapping occurrence.
fn occurrences(haystack: &[u8], anchor: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    if anchor.is_empty() || anchor.len() > haystack.len() {
        return found;
    }
    let mut i = 0;
    while i + anchor.len() <= haystack.len() {
        if haystack[i..].starts_with(anchor) {
            found.push(i);
            i += anchor.len();
        } else {
            i += 1;
        }
    }
    found
}

/// Where a unique anchor sits, as 1-based line and column (columns in characters, as editors
/// and Stryker's viewers count them), start and end.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub(crate) struct Span {
    pub offset: usize,
    pub len: usize,
    #[schemars(range(min = 1))]
    pub start_line: usize,
    #[schemars(range(min = 1))]
    pub start_column: usize,
    #[schemars(range(min = 1))]
    pub end_line: usize,
    #[schemars(range(min = 1))]
    pub end_column: usize,
}

/// The outcome of looking for an anchor: its span when it occurs exactly once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    Once(Span),
    /// Zero, or more than one.
    Not(usize),
}

/// Looks for `anchor` in `haystack`.
pub(crate) fn find_anchor(haystack: &[u8], anchor: &[u8]) -> Found {
    let all = occurrences(haystack, anchor);
    if all.len() != 1 {
        return Found::Not(all.len());
    }
    let offset = all[0];
    let (start_line, start_column) = line_column(haystack, offset);
    let (end_line, end_column) = line_column(haystack, offset + anchor.len());
    Found::Once(Span {
        offset,
        len: anchor.len(),
        start_line,
        start_column,
        end_line,
        end_column,
    })
}

/// 1-based line and column of byte `offset`.
fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    let column = String::from_utf8_lossy(&bytes[line_start..offset])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// The file's bytes with the span replaced by `replace`.
pub(crate) fn swap(original: &[u8], span: &Span, replace: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(original.len() + replace.len());
    out.extend_from_slice(&original[..span.offset]);
    out.extend_from_slice(replace);
    out.extend_from_slice(&original[span.offset + span.len..]);
    out
}

/// A small unified diff of the swap: the lines the anchor touches, before and after, with up to
/// two lines of context either side, as `similar` writes a unified diff. Lossy for display
/// only (the bytes of a non-UTF-8 file are shown with replacement characters).
pub(crate) fn diff(path: &str, original: &[u8], span: &Span, replace: &[u8]) -> String {
    let before = String::from_utf8_lossy(original);
    let after = String::from_utf8_lossy(&swap(original, span, replace)).into_owned();
    similar::TextDiff::from_lines(before.as_ref(), after.as_str())
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts_without_overlap() {
        assert_eq!(find_anchor(b"aaaa", b"aa"), Found::Not(2));
        assert_eq!(
            find_anchor(b"ref > after; ref > after", b"ref > after"),
            Found::Not(2)
        );
        assert_eq!(find_anchor(b"abc", b"x"), Found::Not(0));
        assert_eq!(find_anchor(b"abc", b""), Found::Not(0));
        assert!(matches!(find_anchor(b"aaa", b"aa"), Found::Once(_)));
    }

    #[test]
    fn finds_a_multi_line_anchor_in_non_utf8_bytes() {
        let file = b"\xff\xfeone\nif (x) {\n  return 1;\n}\n";
        let Found::Once(span) = find_anchor(file, b"{\n  return 1;") else {
            panic!("not found once");
        };
        assert_eq!((span.start_line, span.start_column), (2, 8));
        assert_eq!((span.end_line, span.end_column), (3, 12));
        let swapped = swap(file, &span, b"{\n  return 2;");
        assert_eq!(&swapped[..], b"\xff\xfeone\nif (x) {\n  return 2;\n}\n");
        assert_eq!(find_anchor(file, b"one\n\xff"), Found::Not(0));
    }

    #[test]
    fn diff_shows_the_touched_lines() {
        let file = b"a\nb\nref > after\nc\nd\ne\n";
        let Found::Once(span) = find_anchor(file, b">") else {
            panic!()
        };
        let d = diff("x.js", file, &span, b">=");
        assert_eq!(
            d,
            "--- a/x.js\n+++ b/x.js\n@@ -1,5 +1,5 @@\n a\n b\n-ref > after\n+ref >= after\n c\n d\n"
        );
    }

    #[test]
    fn a_multi_line_swap_diffs_only_the_lines_it_changes() {
        let file = b"one\nif (x) {\n  return 1;\n}\n";
        let Found::Once(span) = find_anchor(file, b"{\n  return 1;") else {
            panic!()
        };
        assert_eq!(
            diff("f.js", file, &span, b"{\n  return 2;"),
            "--- a/f.js\n+++ b/f.js\n@@ -1,4 +1,4 @@\n one\n if (x) {\n-  return 1;\n+  return 2;\n }\n"
        );
    }

    proptest! {
        #[test]
        fn swapping_back_restores_the_bytes(
            prefix in proptest::collection::vec(any::<u8>(), 0..64),
            suffix in proptest::collection::vec(any::<u8>(), 0..64),
            replace in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let anchor = b"\x00ANCHOR\n\x01";
            let mut file = prefix.clone();
            file.extend_from_slice(anchor);
            file.extend_from_slice(&suffix);
            match find_anchor(&file, anchor) {
                Found::Once(span) => {
                    let mutated = swap(&file, &span, &replace);
                    prop_assert_eq!(&mutated[..span.offset], &prefix[..]);
                    let _ = diff("f", &file, &span, &replace);
                }
                Found::Not(n) => prop_assert!(n == 0 || n > 1),
            }
        }
    }
}
