//! A small reader for the XML a test runner writes (JUnit reports): elements, attributes, text,
//! CDATA and the five predefined entities with character references.
//!
//! It is bounded and safe by construction: no DTD is read, so no entity is ever defined or
//! expanded beyond those five (a "billion laughs" file stays its own size), no external file
//! is fetched, and nesting is kept in a list, never by recursion, so a deep file cannot
//! overflow the stack (it is refused past [`MAX_DEPTH`]). Comments, processing instructions
//! and the doctype are skipped. What is not well-formed is an error naming the byte offset,
//! never a panic; a reader of the events decides what the elements mean.

/// One thing found in the file, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `<name a="v">` (with `empty` for `<name/>`, which has no `End`).
    Start {
        name: String,
        attrs: Vec<(String, String)>,
        empty: bool,
    },
    End(String),
    /// Text and CDATA, entities replaced.
    Text(String),
}

/// How deep elements may nest before the file is refused.
pub const MAX_DEPTH: usize = 256;

/// Why a file could not be read as XML: what, and at which byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not well-formed XML at byte {at}: {what}")]
pub struct XmlError {
    pub at: usize,
    pub what: String,
}

fn err<T>(at: usize, what: &str) -> Result<T, XmlError> {
    Err(XmlError {
        at,
        what: what.to_string(),
    })
}

/// Reads `text` into its events, checking that every element closes in order.
pub fn events(text: &str) -> Result<Vec<Event>, XmlError> {
    let mut out = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let end = text[i..].find('<').map_or(text.len(), |n| i + n);
            let raw = &text[i..end];
            if !open.is_empty() && !raw.trim().is_empty() {
                out.push(Event::Text(unescape(raw, i)?));
            }
            i = end;
            continue;
        }
        let rest = &text[i..];
        if let Some(body) = rest.strip_prefix("<!--") {
            i += 4 + body.find("-->").ok_or_else(|| eof(i, "a comment"))? + 3;
        } else if let Some(body) = rest.strip_prefix("<![CDATA[") {
            let n = body.find("]]>").ok_or_else(|| eof(i, "CDATA"))?;
            out.push(Event::Text(body[..n].to_string()));
            i += 9 + n + 3;
        } else if let Some(body) = rest.strip_prefix("<?") {
            i += 2
                + body
                    .find("?>")
                    .ok_or_else(|| eof(i, "a processing instruction"))?
                + 2;
        } else if rest.starts_with("<!") {
            // A doctype: skipped whole, its internal subset (entity definitions) never read.
            if rest.contains('[') && rest.find('[') < rest.find('>') {
                return err(i, "a DOCTYPE with an internal subset is not read");
            }
            i += rest.find('>').ok_or_else(|| eof(i, "a doctype"))? + 1;
        } else if let Some(body) = rest.strip_prefix("</") {
            let n = body.find('>').ok_or_else(|| eof(i, "a closing tag"))?;
            let name = body[..n].trim();
            match open.pop() {
                Some(o) if o == name => out.push(Event::End(o)),
                _ => return err(i, &format!("`</{name}>` closes nothing open")),
            }
            i += 2 + n + 1;
        } else {
            let (event, len) = start_tag(text, i)?;
            if let Event::Start { name, empty, .. } = &event {
                if !*empty {
                    if open.len() >= MAX_DEPTH {
                        return err(i, "elements nest too deep");
                    }
                    open.push(name.clone());
                }
            }
            out.push(event);
            i += len;
        }
    }
    if let Some(name) = open.last() {
        return err(text.len(), &format!("`<{name}>` is never closed"));
    }
    Ok(out)
}

fn eof(at: usize, what: &str) -> XmlError {
    XmlError {
        at,
        what: format!("{what} that never ends"),
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// A start tag at `at` (`<name a="v" b='w'/>`): the event and how many bytes it took.
fn start_tag(text: &str, at: usize) -> Result<(Event, usize), XmlError> {
    let name_len: usize = text[at + 1..]
        .chars()
        .take_while(|c| is_name_char(*c))
        .map(char::len_utf8)
        .sum();
    if name_len == 0 {
        return err(at, "`<` starts no tag");
    }
    let name = text[at + 1..at + 1 + name_len].to_string();
    let mut pos = at + 1 + name_len;
    let mut attrs = Vec::new();
    loop {
        let rest = &text[pos..];
        let trimmed = rest.trim_start();
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with("/>") {
            let event = Event::Start {
                name,
                attrs,
                empty: true,
            };
            return Ok((event, pos + 2 - at));
        }
        if trimmed.starts_with('>') {
            let event = Event::Start {
                name,
                attrs,
                empty: false,
            };
            return Ok((event, pos + 1 - at));
        }
        let key_len: usize = trimmed
            .chars()
            .take_while(|c| is_name_char(*c))
            .map(char::len_utf8)
            .sum();
        if key_len == 0 {
            return err(pos, "a tag that never ends, or a stray character in it");
        }
        let key = trimmed[..key_len].to_string();
        let after = trimmed[key_len..].trim_start();
        let Some(after) = after.strip_prefix('=') else {
            return err(pos, "an attribute without `=`");
        };
        let after = after.trim_start();
        let quote = match after.chars().next() {
            Some(q @ ('"' | '\'')) => q,
            _ => return err(pos, "an attribute value without quotes"),
        };
        let value_start = text.len() - after.len() + 1;
        let Some(n) = text[value_start..].find(quote) else {
            return Err(eof(pos, "an attribute value"));
        };
        let raw = &text[value_start..value_start + n];
        if raw.contains('<') {
            return err(value_start, "`<` inside an attribute value");
        }
        attrs.push((key, unescape(raw, value_start)?));
        pos = value_start + n + 1;
    }
}

/// `raw` with the five predefined entities and character references replaced.
fn unescape(raw: &str, at: usize) -> Result<String, XmlError> {
    if !raw.contains('&') {
        return Ok(raw.to_string());
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(n) = rest.find('&') {
        out.push_str(&rest[..n]);
        let after = &rest[n + 1..];
        let Some(end) = after.find(';').filter(|e| *e <= 10) else {
            return err(at, "a `&` that starts no entity");
        };
        let entity = &after[..end];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = entity.strip_prefix('#') {
                    dec.parse().ok()
                } else {
                    None
                };
                match code.and_then(char::from_u32) {
                    Some(c) => c,
                    None => return err(at, &format!("an unknown entity `&{entity};`")),
                }
            }
        };
        out.push(c);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_attributes_text_and_entities() {
        let e = events("<?xml version=\"1.0\"?><!-- c --><a x=\"1 &amp; 2\" y='&#60;&#x3e;'><b/>t &lt;u&gt;<![CDATA[<raw>]]></a>").unwrap();
        assert_eq!(
            e,
            [
                Event::Start {
                    name: "a".into(),
                    attrs: vec![("x".into(), "1 & 2".into()), ("y".into(), "<>".into())],
                    empty: false
                },
                Event::Start {
                    name: "b".into(),
                    attrs: vec![],
                    empty: true
                },
                Event::Text("t <u>".into()),
                Event::Text("<raw>".into()),
                Event::End("a".into()),
            ]
        );
    }

    #[test]
    fn broken_files_are_errors_never_panics() {
        for bad in [
            "<a>",
            "<a></b>",
            "</a>",
            "<a x=1></a>",
            "<a x=\"1></a>",
            "<a>&bogus;</a>",
            "<a>&#xZZ;</a>",
            "<a><!-- never",
            "<!DOCTYPE a [<!ENTITY x \"y\">]><a/>",
            "<",
            "<a x=\"<\"/>",
            "<é",
        ] {
            assert!(events(bad).is_err(), "{bad:?}");
        }
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(events(&deep).is_err());
        let ok = "<a>".repeat(10) + &"</a>".repeat(10);
        assert!(events(&ok).is_ok());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Any text, and any mix of XML's own pieces: events or an error, never a panic; a
        /// JUnit reading of it likewise.
        #[test]
        fn any_text_is_events_or_an_error(
            text in "(<testcase|<failure|</testcase>|</failure>|<testsuite name='a'>|</testsuite>|/>|>|<!--|-->|<!\\[CDATA\\[|\\]\\]>|&amp;|&#x1F600;|&#|&|\"|'| name=\"x\"|\\PC{0,4}){0,40}"
        ) {
            let _ = events(&text);
            let _ = crate::junit_read::read(&text);
        }
    }
}
