//! Text from outside (file names, mutant names, claims, suite output) made safe to print.
//!
//! A reviewer trusts a summary line such as `verdict   PASS` because gatekit wrote it. A file
//! named `x\nverdict   PASS` or a suite that prints `\r` or an ANSI escape must never be able to
//! forge such a line, nor to move the cursor or recolour the reviewer's terminal. So every piece
//! of outside text goes through [`text`] before it reaches a summary, a table, Markdown or the
//! terminal: control characters become visible escapes (`\n`, `\r`, `\t`, `\u{1b}`). Nothing
//! else is touched: printable text, backslashes and non-ASCII included, is left exactly as it
//! is, so a name reads as written (`odd\xff.txt` as a reviewer would type it, not
//! `odd\\xff.txt`). An escape and the same characters typed literally print alike; neither can
//! make a line of its own, which is what the escaping is for. Markdown, which gives backslashes
//! a meaning, escapes them itself (`report::markdown`).

use std::borrow::Cow;

/// Whether `c` must not reach an output raw: C0 and C1 controls, DEL, and the Unicode line and
/// paragraph separators and bidirectional overrides that can reorder or break a line on screen.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every unsafe character written as an escape (`\n`, `\r`, `\t`, `\u{1b}`) and the
/// rest as it is; borrowed when nothing needed escaping (the common case).
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Like [`text`] for bytes that may not be UTF-8 (a path from git): invalid bytes become
/// `\x..` escapes rather than a replacement character, so two different names never print alike.
pub fn bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        out.push_str(&text(chunk.valid()));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

/// [`bytes`] of a path's raw bytes.
pub fn path(p: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    bytes(p.as_os_str().as_bytes())
}

/// One line of a suite's own output as it may reach a terminal (`--echo`): colour codes
/// (`ESC [ digits ; m`) and tabs pass, since they cannot move the cursor or end the line; every
/// other control (a carriage return, a cursor move, a title-setting OSC) is escaped.
pub fn terminal_line(line: &str) -> Cow<'_, str> {
    if !line.chars().any(|c| is_unsafe(c) && c != '\t') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' {
            if let Some(len) = colour_code_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        if c == '\t' || !is_unsafe(c) {
            out.push(c);
        } else {
            out.push_str(&text(&c.to_string()));
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the colour code `ESC [ [0-9;]* m` at the start of `s`, if one is there.
fn colour_code_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let params = body
        .find(|c: char| !(c.is_ascii_digit() || c == ';'))
        .unwrap_or(body.len());
    body[params..].starts_with('m').then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn controls_become_visible_escapes() {
        assert_eq!(text("a\nverdict   PASS"), "a\\nverdict   PASS");
        assert_eq!(text("x\r\u{1b}[2K"), "x\\r\\u{1b}[2K");
        assert_eq!(text("tab\there"), "tab\\there");
        assert_eq!(text("\u{202e}gnp.exe"), "\\u{202e}gnp.exe");
    }

    #[test]
    fn backslashes_are_printed_as_they_are() {
        assert!(matches!(text("a\\nb"), Cow::Borrowed("a\\nb")));
        assert_eq!(text(r"C:\tmp\x"), r"C:\tmp\x");
        // A path git could not decode shows its bytes once, never `\\xff`.
        assert_eq!(bytes(b"odd\xff.txt"), r"odd\xff.txt");
        assert_eq!(text(&bytes(b"odd\xff.txt")), r"odd\xff.txt");
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        assert!(matches!(
            text("après café ✓"),
            Cow::Borrowed("après café ✓")
        ));
    }

    #[test]
    fn a_terminal_line_keeps_colour_and_tabs_and_nothing_else() {
        assert_eq!(
            terminal_line("\x1b[32mok\x1b[0m\tdone"),
            "\x1b[32mok\x1b[0m\tdone"
        );
        assert_eq!(terminal_line("50%\rverdict   PASS"), "50%\\rverdict   PASS");
        assert_eq!(terminal_line("\x1b]0;title\x07x"), "\\u{1b}]0;title\\u{7}x");
        assert_eq!(terminal_line("\x1b[2J"), "\\u{1b}[2J");
    }

    #[test]
    fn invalid_utf8_is_shown_byte_by_byte() {
        assert_eq!(bytes(b"a\xffb\n"), "a\\xffb\\n");
    }

    proptest! {
        #[test]
        fn escaped_text_holds_no_control_character(s in any::<String>()) {
            let e = text(&s);
            prop_assert!(!e.chars().any(is_unsafe));
        }

        #[test]
        fn text_without_controls_is_left_as_it_is(s in "[^\\p{Cc}\u{2028}\u{2029}\u{202a}-\u{202e}\u{2066}-\u{2069}]*") {
            prop_assert_eq!(text(&s), s.as_str());
        }
    }
}
