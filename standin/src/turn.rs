//! The stand-in's "model": what it says in one turn, whatever API it is reached through.
//!
//! It does one thing. Asked to run, it calls the emit tool with the n the prompt names
//! (`n=50000`, optionally `fill=` and `blocks=`); handed the tool's result, it ends the turn and
//! the result is logged exactly as the client passed it back, which is the measurement. A
//! prompt that names several n (`n=40000,40000,39999`) asks for that many calls at once, in one
//! turn, each with its own n (so the server gives each its own nonce and markers): a client's
//! budget for all results of one turn is measured that way, and every result handed back is
//! logged on its own. Each API shape reads its request into a [`Conversation`] and writes the
//! [`Turn`] in its own wire format, so this logic and its events are the same for every client.

use regex::Regex;
use serde_json::{json, Value};
use std::sync::OnceLock;

use crate::events::{ContentKind, ModelEvent};
use crate::tokens::text_units;
use mcp::emit::fresh_nonce;

/// What one request says, in the terms the turn is decided on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conversation<'a> {
    /// The model the request asked for (logged when there is no tool to call).
    pub model: &'a Value,
    /// The tools the model may call now.
    pub tools: Vec<Offered>,
    /// All text of the user's words: the prompt that names n.
    pub prompt: String,
    /// The emit tool's results the request carries, in the order of the calls they answer
    /// (one per call of the last turn; none before the tool ran).
    pub results: Vec<ToolResult<'a>>,
    /// The arguments of a search that would reveal the emit tool, in the API's own terms, when
    /// the client defers its tools behind a search the model runs and it has not run yet.
    pub search: Option<Value>,
}

#[cfg(test)]
impl Conversation<'_> {
    /// Each result's call input and content, in order: what every API shape's tests compare.
    pub(crate) fn inputs_and_contents(&self) -> Vec<(Option<Value>, &Value)> {
        self.results
            .iter()
            .map(|r| (r.input.clone(), r.content))
            .collect()
    }
}

/// A tool the model may call, and what a call of it must say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Offered {
    pub name: String,
    /// The namespace a call must name (Codex offers MCP tools in one, `mcp__probe`).
    pub namespace: Option<String>,
    /// The client's tool that calls this one by name, when the client defers it behind a
    /// search (Qwen Code's `tool_call`).
    pub via: Option<String>,
}

impl Offered {
    /// A tool called by its name alone.
    pub fn named(name: &str) -> Offered {
        Offered {
            name: name.into(),
            ..Offered::default()
        }
    }
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
    /// The whole item that carries it, where the content is only part of what the model reads
    /// (Gemini's content entry); `None` when `content` is all of it.
    pub raw: Option<&'a Value>,
}

/// One call of the tool in a turn: its id and its input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub id: String,
    pub input: Value,
}

/// What the stand-in says in one turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Turn {
    /// Call the tool once per call, all at once (parallel tool calls, in the API's terms).
    ToolUse { tool: Offered, calls: Vec<Call> },
    /// Run the client's tool search with these arguments.
    Search { id: String, arguments: Value },
    /// Say this and end the turn.
    Text(String),
}

/// Decides the turn for one request, and the events that record it (one per call made or
/// result read). `id_prefix` starts the id of a tool call (each API has its own: `toolu_` for
/// Anthropic's).
pub(crate) fn decide(conversation: &Conversation, id_prefix: &str) -> (Turn, Vec<ModelEvent>) {
    if !conversation.results.is_empty() {
        let events = conversation
            .results
            .iter()
            .map(|result| ModelEvent::ToolResult {
                n: result.input.as_ref().and_then(|i| i["n"].as_u64()),
                input: result.input.clone(),
                tool_use_id: result.id.to_string(),
                is_error: result.is_error.clone(),
                content: result.content.clone(),
                content_kind: ContentKind::of(result.content),
                units: text_units(result.content),
                raw: result.raw.cloned(),
            })
            .collect();
        return (Turn::Text("done".into()), events);
    }
    let tool = conversation.tools.iter().find(|t| is_emit(&t.name));
    let step = match (tool, &conversation.search) {
        (Some(tool), _) => tool.via.clone().unwrap_or_else(|| tool.name.clone()),
        (None, Some(_)) => "tool_search".to_string(),
        (None, None) => {
            return (
                Turn::Text("no emit tool was offered".into()),
                vec![ModelEvent::NoTool {
                    model: conversation.model.clone(),
                    offered: conversation.tools.iter().map(|t| t.name.clone()).collect(),
                }],
            )
        }
    };
    let Some(inputs) = emit_inputs(&conversation.prompt) else {
        return (
            Turn::Text("the prompt names no n (write n=50000)".into()),
            vec![ModelEvent::NoN { tool: step }],
        );
    };
    let fresh_id = || format!("{id_prefix}{}{}", fresh_nonce(), fresh_nonce());
    let Some(tool) = tool else {
        let id = fresh_id();
        let arguments = conversation.search.clone().unwrap_or_default();
        let event = ModelEvent::ToolSearch {
            id: id.clone(),
            arguments: arguments.clone(),
        };
        return (Turn::Search { id, arguments }, vec![event]);
    };
    let calls: Vec<Call> = inputs
        .into_iter()
        .map(|(_, input)| Call {
            id: fresh_id(),
            input,
        })
        .collect();
    let events = calls
        .iter()
        .map(|call| ModelEvent::ToolUse {
            tool: tool.name.clone(),
            id: call.id.clone(),
            n: call.input["n"].as_u64().unwrap_or(0),
            input: call.input.clone(),
            namespace: tool.namespace.clone(),
            via: tool.via.clone(),
        })
        .collect();
    let turn = Turn::ToolUse {
        tool: tool.clone(),
        calls,
    };
    (turn, events)
}

/// All text in a content value (a string, or blocks with `text`), joined.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().map(text_of).collect::<Vec<_>>().join(""),
        Value::Object(obj) => match (obj.get("text"), obj.get("content")) {
            (Some(Value::String(t)), _) => t.clone(),
            (_, Some(inner)) => text_of(inner),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// A call's arguments as the OpenAI APIs carry them, a JSON text (an object is taken as it
/// is); `None` when they are neither.
pub(crate) fn arguments_of(arguments: &Value) -> Option<Value> {
    match arguments {
        Value::String(text) => serde_json::from_str(text).ok(),
        Value::Object(_) => Some(arguments.clone()),
        _ => None,
    }
}

/// The probe's tool, under the name a client gives it: `emit`, or the server's name and
/// `emit` joined by underscores as clients prefix MCP tools (`mcp__probe__emit` for Claude Code
/// and Qwen Code, `mcp_probe_emit` for Gemini CLI, `probe_emit` for opencode, `probe__emit` for
/// Cline), or by a hyphen (`probe-emit` for Copilot CLI).
pub(crate) fn is_emit(name: &str) -> bool {
    name == "emit" || name.ends_with("_emit") || name.ends_with("-emit")
}

/// The most calls one turn asks for: a bound on what a prompt can make the stand-in do.
pub const MAX_CALLS: usize = 1000;

/// The emit arguments a prompt names: `n=N` (or `n=N1,N2,...`: one call per n, all in one
/// turn, at most [`MAX_CALLS`]), optionally `fill=KIND` and `blocks=K`, as each call's n and
/// tool input. The last mention wins, so a preamble the client prepends cannot override the
/// user's words.
pub fn emit_inputs(prompt: &str) -> Option<Vec<(u64, Value)>> {
    static N: OnceLock<Regex> = OnceLock::new();
    static FILL: OnceLock<Regex> = OnceLock::new();
    static BLOCKS: OnceLock<Regex> = OnceLock::new();
    let last = |re: &Regex| re.captures_iter(prompt).last().map(|c| c[1].to_string());
    let list =
        last(N.get_or_init(|| Regex::new(r"\bn\s*=\s*(\d+(?:,\d+)*)").expect("valid regex")))?;
    let ns: Vec<u64> = list
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if ns.len() > MAX_CALLS {
        return None;
    }
    let fill = last(FILL.get_or_init(|| Regex::new(r"\bfill\s*=\s*(\w+)").expect("valid regex")));
    let blocks =
        last(BLOCKS.get_or_init(|| Regex::new(r"\bblocks\s*=\s*(\d+)").expect("valid regex")));
    Some(
        ns.into_iter()
            .map(|n| {
                let mut input = json!({"n": n});
                if let Some(fill) = &fill {
                    input["fill"] = json!(fill);
                }
                if let Some(blocks) = &blocks {
                    input["blocks"] = json!(blocks.parse::<u64>().unwrap_or(1));
                }
                (n, input)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(prompt: &str, tools: Vec<&'static str>) -> Conversation<'static> {
        static MODEL: Value = Value::Null;
        Conversation {
            model: &MODEL,
            tools: tools.into_iter().map(Offered::named).collect(),
            prompt: prompt.into(),
            results: Vec::new(),
            search: None,
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
        let Turn::ToolUse { tool, calls } = &turn else {
            panic!("{turn:?}")
        };
        assert_eq!(*tool, Offered::named("mcp__probe__emit"));
        let [Call { id, input }] = calls.as_slice() else {
            panic!("{calls:?}")
        };
        assert!(id.starts_with("toolu_"), "{id}");
        assert_eq!(*input, json!({"n": 50001, "fill": "astral"}));
        assert_eq!(
            event,
            [ModelEvent::ToolUse {
                tool: "mcp__probe__emit".into(),
                id: id.clone(),
                n: 50001,
                input: input.clone(),
                namespace: None,
                via: None,
            }]
        );
    }

    #[test]
    fn a_prompt_naming_several_n_asks_for_one_call_each_in_one_turn() {
        let (turn, events) = decide(&asking("PROBE n=3,5,4 fill=lines", vec!["emit"]), "call_");
        let Turn::ToolUse { calls, .. } = &turn else {
            panic!("{turn:?}")
        };
        let inputs: Vec<&Value> = calls.iter().map(|c| &c.input).collect();
        assert_eq!(
            inputs,
            [
                &json!({"n": 3, "fill": "lines"}),
                &json!({"n": 5, "fill": "lines"}),
                &json!({"n": 4, "fill": "lines"})
            ]
        );
        let mut ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 3, "each call has its own id");
        let ns: Vec<u64> = events
            .iter()
            .map(|e| match e {
                ModelEvent::ToolUse { n, .. } => *n,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ns, [3, 5, 4]);
        // Every result handed back is logged, in order.
        let (a, b) = (json!("first"), json!([{"type": "text", "text": "second"}]));
        let mut conversation = asking("n=3,5", vec!["emit"]);
        conversation.results = vec![
            ToolResult {
                id: "c1",
                input: Some(json!({"n": 3})),
                is_error: Value::Null,
                content: &a,
                raw: None,
            },
            ToolResult {
                id: "c2",
                input: Some(json!({"n": 5})),
                is_error: Value::Null,
                content: &b,
                raw: None,
            },
        ];
        let (turn, events) = decide(&conversation, "call_");
        assert_eq!(turn, Turn::Text("done".into()));
        let got: Vec<(Option<u64>, u64)> = events
            .iter()
            .map(|e| match e {
                ModelEvent::ToolResult { n, units, .. } => (*n, *units),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, [(Some(3), 5), (Some(5), 6)]);
        assert_eq!(
            emit_inputs(&format!("n={}", vec!["1"; MAX_CALLS + 1].join(","))),
            None
        );
    }

    #[test]
    fn a_tool_result_ends_the_turn_and_is_logged_as_given() {
        let content = json!([{"type": "text", "text": "\u{1F600}x"}]);
        let mut conversation = asking("n=7", vec!["emit"]);
        conversation.results = vec![ToolResult {
            id: "t1",
            input: Some(json!({"n": 7})),
            is_error: json!(false),
            content: &content,
            raw: None,
        }];
        let (turn, event) = decide(&conversation, "toolu_");
        assert_eq!(turn, Turn::Text("done".into()));
        assert_eq!(
            event,
            [ModelEvent::ToolResult {
                n: Some(7),
                input: Some(json!({"n": 7})),
                tool_use_id: "t1".into(),
                is_error: json!(false),
                content: content.clone(),
                content_kind: ContentKind::Blocks,
                units: 3,
                raw: None,
            }]
        );
    }

    #[test]
    fn without_the_tool_or_an_n_it_says_why_in_text() {
        let (turn, event) = decide(&asking("n=5", vec!["Bash", "emitter"]), "toolu_");
        assert_eq!(turn, Turn::Text("no emit tool was offered".into()));
        assert_eq!(
            event,
            [ModelEvent::NoTool {
                model: Value::Null,
                offered: vec!["Bash".into(), "emitter".into()]
            }]
        );
        let (turn, event) = decide(&asking("no number here", vec!["emit"]), "toolu_");
        assert_eq!(
            turn,
            Turn::Text("the prompt names no n (write n=50000)".into())
        );
        assert_eq!(
            event,
            [ModelEvent::NoN {
                tool: "emit".into()
            }]
        );
    }

    #[test]
    fn the_last_mention_in_the_prompt_wins() {
        assert_eq!(
            emit_inputs("example: n=1 fill=lines blocks=9. Now: n = 42 fill=ascii blocks=2"),
            Some(vec![(42, json!({"n": 42, "fill": "ascii", "blocks": 2}))])
        );
        assert_eq!(emit_inputs("n=3"), Some(vec![(3, json!({"n": 3}))]));
        // A word ending in n is not n, and a number too large for n is no n.
        assert_eq!(emit_inputs("run=5"), None);
        assert_eq!(emit_inputs("n=99999999999999999999999"), None);
        assert_eq!(emit_inputs("n=1,99999999999999999999999"), None);
    }

    #[test]
    fn every_clients_name_for_the_emit_tool_is_the_emit_tool() {
        for name in [
            "emit",
            "mcp__probe__emit",
            "mcp_probe_emit",
            "probe_emit",
            "probe__emit",
            "probe-emit",
        ] {
            assert!(is_emit(name), "{name}");
        }
        for name in [
            "emitter",
            "remit",
            "probe-emitter",
            "mcp__probe__emit2",
            "tool_search",
        ] {
            assert!(!is_emit(name), "{name}");
        }
    }

    #[test]
    fn a_deferred_tool_is_searched_for_first_then_called_as_offered() {
        let mut conversation = asking("n=9", vec!["tool_search", "tool_call"]);
        conversation.search = Some(json!({"query": "select:mcp__probe__emit"}));
        let (turn, event) = decide(&conversation, "call_");
        let Turn::Search { id, arguments } = &turn else {
            panic!("{turn:?}")
        };
        assert_eq!(*arguments, json!({"query": "select:mcp__probe__emit"}));
        assert_eq!(
            event,
            [ModelEvent::ToolSearch {
                id: id.clone(),
                arguments: arguments.clone()
            }]
        );
        // Once found, the tool is called the way the client offers it: through its proxy,
        // with its namespace.
        let found = Offered {
            name: "mcp__probe__emit".into(),
            namespace: Some("mcp__probe".into()),
            via: Some("tool_call".into()),
        };
        conversation.tools.push(found.clone());
        let (turn, event) = decide(&conversation, "call_");
        let Turn::ToolUse { tool, calls } = &turn else {
            panic!("{turn:?}")
        };
        assert_eq!(*tool, found);
        assert_eq!(calls[0].input, json!({"n": 9}));
        let [ModelEvent::ToolUse { namespace, via, .. }] = event.as_slice() else {
            panic!("{event:?}")
        };
        assert_eq!(namespace.as_deref(), Some("mcp__probe"));
        assert_eq!(via.as_deref(), Some("tool_call"));
        // With no n, not even the search runs.
        conversation.tools.pop();
        conversation.prompt = "no number".into();
        let (_, event) = decide(&conversation, "call_");
        assert_eq!(
            event,
            [ModelEvent::NoN {
                tool: "tool_search".into()
            }]
        );
    }

    #[test]
    fn arguments_are_json_text_or_an_object() {
        assert_eq!(arguments_of(&json!("{\"n\": 3}")), Some(json!({"n": 3})));
        assert_eq!(arguments_of(&json!({"n": 3})), Some(json!({"n": 3})));
        assert_eq!(arguments_of(&json!("not json")), None);
        assert_eq!(arguments_of(&json!(3)), None);
    }

    #[test]
    fn text_of_joins_strings_and_blocks() {
        assert_eq!(text_of(&json!("a")), "a");
        assert_eq!(
            text_of(&json!([{"type": "text", "text": "a"}, {"content": [{"text": "b"}]}, 3])),
            "ab"
        );
    }
}
