//! How much text a request holds, and the token numbers the stand-in reports for it.
//!
//! A client's second limit is in tokens (Claude Code asks `count_tokens` when its own estimate
//! of a result passes 12,500), so what the stand-in answers moves what is measured: it answers
//! what `--count-tokens` says, else the same rough estimate clients use, one token per four
//! UTF-16 units. Units, not bytes, since that is how the JavaScript clients count `.length`.

use serde_json::Value;

use crate::emit::utf16_len;

/// UTF-16 units of all text anywhere in a value's strings, following only the fields that carry
/// conversation text (`text`, `content`, `messages`, `system`), so tool schemas and ids do not
/// count.
pub(crate) fn text_units(value: &Value) -> u64 {
    match value {
        Value::String(s) => utf16_len(s),
        Value::Array(items) => items.iter().map(text_units).sum(),
        Value::Object(obj) => ["text", "content", "messages", "system"]
            .iter()
            .filter_map(|k| obj.get(*k))
            .map(text_units)
            .sum(),
        _ => 0,
    }
}

/// Tokens for `units` of text: one per four units, rounded up.
pub(crate) fn tokens_for(units: u64) -> u64 {
    units.div_ceil(4)
}

/// The `input_tokens` a request's usage reports: at least 1, as a real model's would be.
pub(crate) fn estimate_tokens(request: &Value) -> u64 {
    tokens_for(text_units(request)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn units_count_conversation_text_in_utf16() {
        let request = json!({
            "model": "a-long-model-name",
            "system": [{"type": "text", "text": "ab"}],
            "tools": [{"name": "mcp__probe__emit", "description": "not counted"}],
            "messages": [
                {"role": "user", "content": "\u{1F600}é"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "input": {"n": 5}}]},
                {"role": "user", "content": [{"type": "tool_result", "content": [{"type": "text", "text": "xyz"}]}]},
            ],
        });
        // "ab" + an astral character (2 units) and é (1) + "xyz".
        assert_eq!(text_units(&request), 2 + 3 + 3);
        assert_eq!(text_units(&json!(42)), 0);
    }

    #[test]
    fn tokens_are_a_quarter_of_the_units_rounded_up_and_never_zero() {
        assert_eq!(tokens_for(0), 0);
        assert_eq!(tokens_for(4000), 1000);
        assert_eq!(tokens_for(4001), 1001);
        assert_eq!(estimate_tokens(&json!({"messages": []})), 1);
        assert_eq!(estimate_tokens(&json!({"messages": ["x".repeat(9)]})), 3);
    }
}
