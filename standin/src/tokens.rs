//! How much text a request holds, and the token numbers the stand-in reports for it.
//!
//! A client's second limit is in tokens (Claude Code asks `count_tokens` when its own estimate
//! of a result passes 12,500), so what the stand-in answers moves what is measured: it answers
//! what `--count-tokens` says, else the same rough estimate clients use, one token per four
//! UTF-16 units. Units, not bytes, since that is how the JavaScript clients count `.length`.

use serde_json::Value;

use crate::ModelSettings;
use mcp::emit::utf16_len;

/// The fields that carry conversation text, in every API shape served: Anthropic's
/// (`messages`, `system`, `content`, `text`), OpenAI's (`input`, `instructions`, a tool
/// output's `output`) and Gemini's (`contents`, `systemInstruction`, `parts`, a function
/// response's `functionResponse.response`).
const TEXT_FIELDS: [&str; 11] = [
    "text",
    "content",
    "messages",
    "system",
    "input",
    "instructions",
    "output",
    "contents",
    "systemInstruction",
    "parts",
    "functionResponse",
];

/// UTF-16 units of all text anywhere in a value's strings, following only the fields that carry
/// conversation text ([`TEXT_FIELDS`], and a function response's `response`), so tool schemas
/// and ids do not count.
pub(crate) fn text_units(value: &Value) -> u64 {
    match value {
        Value::String(s) => utf16_len(s),
        Value::Array(items) => items.iter().map(text_units).sum(),
        Value::Object(obj) => {
            let response = obj
                .get("name")
                .and(obj.get("response"))
                .map_or(0, text_units_of_all);
            TEXT_FIELDS
                .iter()
                .filter_map(|k| obj.get(*k))
                .map(text_units)
                .sum::<u64>()
                + response
        }
        _ => 0,
    }
}

/// UTF-16 units of every string in a value, whatever its field (a Gemini function response's
/// fields are the tool's own: `output`, `error`, ...).
fn text_units_of_all(value: &Value) -> u64 {
    match value {
        Value::String(s) => utf16_len(s),
        Value::Array(items) => items.iter().map(text_units_of_all).sum(),
        Value::Object(obj) => obj.values().map(text_units_of_all).sum(),
        _ => 0,
    }
}

/// The token counts an answer reports (some clients decide from them); each API shape writes
/// them in its own field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// What was set, else the estimate of the request's text and 5 tokens of answer.
    pub fn of(request: &Value, settings: &ModelSettings) -> Usage {
        Usage {
            input_tokens: settings
                .input_tokens
                .unwrap_or_else(|| estimate_tokens(request)),
            output_tokens: settings.output_tokens.unwrap_or(5),
        }
    }

    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// Tokens for `units` of text: one per four units, rounded up.
pub fn tokens_for(units: u64) -> u64 {
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

    #[test]
    fn units_count_the_text_of_every_api_shape() {
        // OpenAI Responses: instructions, an input message, a tool output as parts.
        let responses = json!({"instructions": "ab", "tools": [{"name": "emit", "description": "no"}],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "cd"}]},
                {"type": "function_call", "call_id": "c", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "efg"}]}]});
        assert_eq!(text_units(&responses), 7);
        // Gemini: the system instruction, parts, and a function response whatever its field.
        let gemini = json!({"systemInstruction": {"parts": [{"text": "ab"}]},
            "contents": [{"role": "user", "parts": [{"text": "cd"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "mcp_probe_emit", "args": {"n": 1}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "mcp_probe_emit", "id": "x", "response": {"output": "efg"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "mcp_probe_emit", "response": {"error": "hi"}}}]}]});
        assert_eq!(text_units(&gemini), 9);
    }

    #[test]
    fn usage_is_what_was_set_or_the_estimate() {
        let request = json!({"messages": ["x".repeat(9)]});
        let estimated = Usage::of(&request, &ModelSettings::default());
        assert_eq!(
            estimated,
            Usage {
                input_tokens: 3,
                output_tokens: 5
            }
        );
        assert_eq!(estimated.total(), 8);
        let settings = ModelSettings {
            input_tokens: Some(120_000),
            output_tokens: Some(9),
            ..ModelSettings::default()
        };
        assert_eq!(
            Usage::of(&request, &settings),
            Usage {
                input_tokens: 120_000,
                output_tokens: 9
            }
        );
    }
}
