//! Small text forms every tool prints with, defined once: counted nouns, clipped outside text,
//! short ids, file-name-safe slugs and words quoted for `sh`.

/// `1 path`, `3 paths`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// At most `max` characters of `s`, with `…` when some were cut (never cuts inside a char).
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// `s` cut to about `max` characters by leaving out its middle: its start and end stay, with
/// how many characters went between them (`start…[1048000 chars]…end`). For outside text an
/// error quotes (a name of a megabyte in a manifest or a patch): the line stays short and its
/// two ends still say which it was. Never cuts inside a char.
pub fn elide(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let count = s.chars().count();
    if count <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let (head, tail) = (max * 2 / 3, max / 3);
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(count - tail).collect();
    std::borrow::Cow::Owned(format!("{start}…[{} chars]…{end}", count - head - tail))
}

/// The first 12 characters of an id (a sha, a tree id) for text meant for people; an id read
/// from outside may hold anything, so this never cuts inside a char.
pub fn short_id(id: &str) -> &str {
    match id.char_indices().nth(12) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// A file-name-safe form of a name: lower-case ASCII letters, digits and single `-`s, at most
/// 48 characters, `fallback` when nothing is left.
pub fn slug(name: &str, fallback: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(48).collect();
    if s.is_empty() {
        fallback.to_string()
    } else {
        s
    }
}

/// `s` as one `sh` word: as it is when it holds only characters the shell never reads
/// specially, else in single quotes. `=` is quoted, so a word never reads as an assignment.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nouns_are_counted() {
        assert_eq!(plural(1, "path"), "1 path");
        assert_eq!(plural(0, "path"), "0 paths");
        assert_eq!(plural(3, "path"), "3 paths");
    }

    #[test]
    fn clipping_keeps_whole_chars_and_says_it_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("🦀🦀🦀🦀", 2), "🦀🦀…");
    }

    #[test]
    fn short_ids_are_twelve_chars_and_never_split_one() {
        assert_eq!(short_id("0123456789abcdef"), "0123456789ab");
        assert_eq!(short_id("abc"), "abc");
        assert_eq!(short_id("ééééééééééééé"), "éééééééééééé");
    }

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("Plus to Minus!", "x"), "plus-to-minus");
        assert_eq!(slug("../../etc", "x"), "etc");
        assert_eq!(slug("🦀", "mutant"), "mutant");
        assert_eq!(slug(&"a-".repeat(40), "x").len(), 48);
    }

    #[test]
    fn words_are_quoted_only_when_the_shell_would_read_them() {
        assert_eq!(shell_quote("scripts/test-a.sh"), "scripts/test-a.sh");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("x=y.sh"), "'x=y.sh'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
