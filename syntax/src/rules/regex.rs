//! Regex literals (`/re/flags`): anchors dropped, character classes and `\d`/`\w`/`\s`
//! negated, quantifiers dropped, in the spirit of the weapon-regex mutations Stryker uses at
//! its first level.

use tree_sitter::Node;

use super::Cx;
use crate::Operator::Regex;

pub(crate) fn mutate(node: Node, cx: &mut Cx) {
    let Some(pattern) = node.child_by_field_name("pattern") else {
        return;
    };
    let text = cx.of(pattern);
    let base = pattern.start_byte();
    let mut edits: Vec<(usize, usize, &str, String)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_class = false;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' if i + 1 < bytes.len() => {
                let n = bytes[i + 1];
                if b"dDwWsS".contains(&n) {
                    let flipped = if n.is_ascii_lowercase() {
                        n.to_ascii_uppercase()
                    } else {
                        n.to_ascii_lowercase()
                    };
                    let new = format!("\\{}", flipped as char);
                    edits.push((i, i + 2, "", new));
                }
                i += 2;
                continue;
            }
            b'[' if !in_class => {
                in_class = true;
                if bytes.get(i + 1) == Some(&b'^') {
                    edits.push((i, i + 2, "", "[".to_owned()));
                } else {
                    edits.push((i, i + 1, "", "[^".to_owned()));
                }
            }
            b']' if in_class => in_class = false,
            b'^' if !in_class && i == 0 => edits.push((i, i + 1, "remove ^ anchor", String::new())),
            b'$' if !in_class && i + 1 == bytes.len() => {
                edits.push((i, i + 1, "remove $ anchor", String::new()))
            }
            b'{' if !in_class && i > 0 => {
                // `a{1,3}` loses its quantifier, as `a+` does.
                let close = text[i..].find('}').map(|c| i + c);
                let body = close.map(|c| &text[i + 1..c]);
                if let (Some(c), Some(body)) = (close, body) {
                    if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit() || b == b',') {
                        let end = if bytes.get(c + 1) == Some(&b'?') {
                            c + 2
                        } else {
                            c + 1
                        };
                        edits.push((i, end, "remove quantifier", String::new()));
                        i = c;
                    }
                }
            }
            b'*' | b'+' | b'?' if !in_class && i > 0 && bytes[i - 1] != b'(' => {
                let end = if bytes.get(i + 1) == Some(&b'?') {
                    i + 2
                } else {
                    i + 1
                };
                edits.push((i, end, "remove quantifier", String::new()));
            }
            _ => {}
        }
        i += 1;
    }
    for (s, e, what, new) in edits {
        let old = &text[s..e];
        let description = if what.is_empty() {
            format!("regex: replace {old} with {new}")
        } else {
            format!("regex: {what}")
        };
        cx.edit(base + s, base + e, new, Regex, description);
    }
}
