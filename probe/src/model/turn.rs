//! The stand-in's "model": what it says in one turn, whatever API it is reached through.
//!
//! It does one thing. Asked to run, it calls the emit tool with the n the prompt names
//! (`n=50000`, optionally `fill=` and `blocks=`); handed the tool's result, it ends the turn and
//! the result is logged exactly as the client passed it back, which is the measurement. Each
//! API shape reads its request into a [`Conversation`] and writes the [`Turn`] in its own wire
//! format, so this logic and its events are the same for every client.

use regex::Regex;
use serde_json::{json, Value};
use std::sync::OnceLock;

use super::events::{ContentKind, ModelEvent};
use super::tokens::text_units;
use crate::emit::fresh_nonce;

/// What one request says, in the terms the turn is decided on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conversation<'a> {
    /// The model the request asked for (logged when there is no tool to call).
    pub model: &'a Value,
    /// The names of the tools offered.
    pub tools: Vec<&'a str>,
    /// All text of the last user message: the prompt that names n.
    pub prompt: String,
    /// The tool result the last user message carries, if any.
    pub result: Option<ToolResult<'a>>,
}

/// A tool result the client handed back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult<'a> {
    /// The id of the call it answers.
    pub id: &'a str,
    /// That call's input, when the conversation still holds it (the stand-in keeps no state:
    /// the client carries it).
    pub input: Option<Value>,
    /// The client's error flag, as sent (`null` when absent).
    pub is_error: Value,
    /// The result exactly as the client passed it to the model.
    pub content: &'a Value,
}

/// What the stand-in says in one turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Turn {
    /// Call the tool with this input.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// Say this and end the turn.
    Text(String),
}

/// Decides the turn for one request, and the event that records it. `id_prefix` starts the id
/// of a tool call (each API has its own: `toolu_` for Anthropic's).
pub(crate) fn decide(conversation: &Conversation, id_prefix: &str) -> (Turn, ModelEvent) {
    if let Some(result) = &conversation.result {
        let event = ModelEvent::ToolResult {
            n: result.input.as_ref().and_then(|i| i["n"].as_u64()),
            input: result.input.clone(),
            tool_use_id: result.id.to_string(),
            is_error: result.is_error.clone(),
            content: result.content.clone(),
            content_kind: ContentKind::of(result.content),
            units: text_units(result.content),
        };
        return (Turn::Text("done".into()), event);
    }
    let Some(tool) = conversation
        .tools
        .iter()
        .copied()
        .find(|name| is_emit(name))
    else {
        return (
            Turn::Text("no emit tool was offered".into()),
            ModelEvent::NoTool {
                model: conversation.model.clone(),
            },
        );
    };
    let Some((n, input)) = emit_input(&conversation.prompt) else {
        return (
            Turn::Text("the prompt names no n (write n=50000)".into()),
            ModelEvent::NoN { tool: tool.into() },
        );
    };
    let id = format!("{id_prefix}{}{}", fresh_nonce(), fresh_nonce());
    let event = ModelEvent::ToolUse {
        tool: tool.into(),
        id: id.clone(),
        n,
        input: input.clone(),
    };
    let turn = Turn::ToolUse {
        id,
        name: tool.into(),
        input,
    };
    (turn, event)
}

/// The probe's tool, under the name a client gives it: `emit`, or `mcp__SERVER__emit` as
/// Claude Code prefixes MCP tools.
fn is_emit(name: &str) -> bool {
    name == "emit" || name.ends_with("__emit")
}

/// The emit arguments a prompt names: `n=N`, optionally `fill=KIND` and `blocks=K`, as n and
/// the tool's input. The last mention wins, so a preamble the client prepends cannot override
/// the user's words.
pub(crate) fn emit_input(prompt: &str) -> Option<(u64, Value)> {
    static N: OnceLock<Regex> = OnceLock::new();
    static FILL: OnceLock<Regex> = OnceLock::new();
    static BLOCKS: OnceLock<Regex> = OnceLock::new();
    let last = |re: &Regex| re.captures_iter(prompt).last().map(|c| c[1].to_string());
    let n: u64 = last(N.get_or_init(|| Regex::new(r"\bn\s*=\s*(\d+)").expect("valid regex")))?
        .parse()
        .ok()?;
    let mut input = json!({"n": n});
    if let Some(fill) =
        last(FILL.get_or_init(|| Regex::new(r"\bfill\s*=\s*(\w+)").expect("valid regex")))
    {
        input["fill"] = json!(fill);
    }
    if let Some(blocks) =
        last(BLOCKS.get_or_init(|| Regex::new(r"\bblocks\s*=\s*(\d+)").expect("valid regex")))
    {
        input["blocks"] = json!(blocks.parse::<u64>().unwrap_or(1));
    }
    Some((n, input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(prompt: &str, tools: Vec<&'static str>) -> Conversation<'static> {
        static MODEL: Value = Value::Null;
        Conversation {
            model: &MODEL,
            tools,
            prompt: prompt.into(),
            result: None,
        }
    }

    #[test]
    fn the_first_turn_calls_the_emit_tool_with_the_prompts_n() {
        let (turn, event) = decide(
            &asking(
                "call it with n=50001 fill=astral",
                vec!["Bash", "mcp__probe__emit"],
            ),
            "toolu_",
        );
        let Turn::ToolUse { id, name, input } = &turn else {
            panic!("{turn:?}")
        };
        assert_eq!(name, "mcp__probe__emit");
        assert!(id.starts_with("toolu_"), "{id}");
        assert_eq!(*input, json!({"n": 50001, "fill": "astral"}));
        assert_eq!(
            event,
            ModelEvent::ToolUse {
                tool: name.clone(),
                id: id.clone(),
                n: 50001,
                input: input.clone()
            }
        );
    }

    #[test]
    fn a_tool_result_ends_the_turn_and_is_logged_as_given() {
        let content = json!([{"type": "text", "text": "\u{1F600}x"}]);
        let mut conversation = asking("n=7", vec!["emit"]);
        conversation.result = Some(ToolResult {
            id: "t1",
            input: Some(json!({"n": 7})),
            is_error: json!(false),
            content: &content,
        });
        let (turn, event) = decide(&conversation, "toolu_");
        assert_eq!(turn, Turn::Text("done".into()));
        assert_eq!(
            event,
            ModelEvent::ToolResult {
                n: Some(7),
                input: Some(json!({"n": 7})),
                tool_use_id: "t1".into(),
                is_error: json!(false),
                content: content.clone(),
                content_kind: ContentKind::Blocks,
                units: 3,
            }
        );
    }

    #[test]
    fn without_the_tool_or_an_n_it_says_why_in_text() {
        let (turn, event) = decide(&asking("n=5", vec!["Bash", "emitter"]), "toolu_");
        assert_eq!(turn, Turn::Text("no emit tool was offered".into()));
        assert_eq!(event, ModelEvent::NoTool { model: Value::Null });
        let (turn, event) = decide(&asking("no number here", vec!["emit"]), "toolu_");
        assert_eq!(
            turn,
            Turn::Text("the prompt names no n (write n=50000)".into())
        );
        assert_eq!(
            event,
            ModelEvent::NoN {
                tool: "emit".into()
            }
        );
    }

    #[test]
    fn the_last_mention_in_the_prompt_wins() {
        assert_eq!(
            emit_input("example: n=1 fill=lines blocks=9. Now: n = 42 fill=ascii blocks=2"),
            Some((42, json!({"n": 42, "fill": "ascii", "blocks": 2})))
        );
        assert_eq!(emit_input("n=3"), Some((3, json!({"n": 3}))));
        // A word ending in n is not n, and a number too large for n is no n.
        assert_eq!(emit_input("run=5"), None);
        assert_eq!(emit_input("n=99999999999999999999999"), None);
    }
}
