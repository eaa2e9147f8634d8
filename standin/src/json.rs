//! Reading a request body as the JavaScript clients write JSON.
//!
//! A JavaScript string may hold a lone surrogate, and `JSON.stringify` writes one as an escape
//! (`"\ude47"`). Clients send them: a client that cuts a long result inside a surrogate pair
//! (Gemini CLI 0.61.0 keeps the head and tail of an `astral` fill) hands the model half a pair.
//! serde_json refuses such an escape, as a Rust string cannot hold it, so the body is read
//! again with each lone surrogate as U+FFFD: one UTF-16 unit for one, so the units the log
//! counts stay what the client sent. Bytes that are not UTF-8 are read the same way.

use serde_json::Value;

/// The body as JSON; lone surrogate escapes and bytes that are not UTF-8 read as U+FFFD.
pub(crate) fn parse(body: &[u8]) -> serde_json::Result<Value> {
    match serde_json::from_slice(body) {
        Ok(value) => Ok(value),
        Err(e) => match repaired(body) {
            Some(fixed) => serde_json::from_slice(&fixed),
            None => Err(e),
        },
    }
}

/// The UTF-16 unit a `\uXXXX` escape at `at` writes, if there is one there.
fn escape_at(body: &[u8], at: usize) -> Option<u16> {
    let escape = body.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
}

fn is_high(unit: u16) -> bool {
    (0xD800..0xDC00).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..0xE000).contains(&unit)
}

/// `body` with every lone surrogate escape written as `\ufffd` and invalid UTF-8 replaced;
/// `None` when there was nothing to repair.
fn repaired(body: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(body);
    let bytes = text.as_bytes();
    let mut changed = matches!(text, std::borrow::Cow::Owned(_));
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            out.push(bytes[at]);
            at += 1;
            continue;
        }
        let Some(unit) = escape_at(bytes, at) else {
            // Another escape: it and the character it escapes, so `\\u` is no `\u`.
            let end = (at + 2).min(bytes.len());
            out.extend_from_slice(&bytes[at..end]);
            at = end;
            continue;
        };
        let paired = is_high(unit) && escape_at(bytes, at + 6).is_some_and(is_low);
        if paired {
            out.extend_from_slice(&bytes[at..at + 12]);
            at += 12;
        } else if is_high(unit) || is_low(unit) {
            out.extend_from_slice(b"\\ufffd");
            changed = true;
            at += 6;
        } else {
            out.extend_from_slice(&bytes[at..at + 6]);
            at += 6;
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lone_surrogate_reads_as_one_replacement_unit() {
        // What JSON.stringify writes for "x" + the low half of 😇 + "y", and for a high half at
        // the end of a string.
        let value = parse(br#"{"a": "x\ude47y", "b": "\ud83d", "c": "\ud83d\ude47"}"#).unwrap();
        assert_eq!(
            value,
            json!({"a": "x\u{FFFD}y", "b": "\u{FFFD}", "c": "\u{1F647}"})
        );
    }

    #[test]
    fn escaped_backslashes_and_other_escapes_are_kept() {
        let body = br#"{"a": "\\ude47 \"\ud83d\" \n \u00e9"}"#;
        assert_eq!(
            parse(body).unwrap(),
            json!({"a": "\\ude47 \"\u{FFFD}\" \n é"})
        );
        // Nothing to repair: the original error stands.
        assert!(parse(b"{\"a\": ").is_err());
        assert_eq!(repaired(br#"{"a": "\ud83d\ude47 \\ude47"}"#), None);
    }

    #[test]
    fn bytes_that_are_not_utf8_read_as_replacement_characters() {
        assert_eq!(
            parse(b"{\"a\": \"x\xffy\"}").unwrap(),
            json!({"a": "x\u{FFFD}y"})
        );
    }
}
