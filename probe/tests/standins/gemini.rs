//! Gemini's API as Gemini CLI speaks it: the routing classifier's JSON answer, a streamed turn
//! (`alt=sse`) that calls the declared function, the result read from the last content entry,
//! and the array stream, `generateContent` and `countTokens` beside it.

use super::Model;
use crate::common::js_length;
use probe::{ContentKind, ModelEvent};
use serde_json::{json, Value};

const PROMPT: &str = "Call the emit tool once with PROBE n=3000 fill=lines, then reply done.";
const PRO: &str = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

fn turn(contents: &[Value]) -> Value {
    json!({"contents": contents, "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
        "tools": [{"functionDeclarations": [{"name": "read_file", "parametersJsonSchema": {}},
            {"name": "mcp_probe_emit", "parametersJsonSchema": {"type": "object"}}]}],
        "generationConfig": {"temperature": 0}})
}

/// The one answer of an `alt=sse` stream: one event, no name, JSON data.
fn streamed(m: &Model, path: &str, body: &Value) -> Value {
    let frames = m.ask(path, body).events();
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0].name, None);
    frames[0].json()
}

#[test]
fn the_routing_classifier_gets_json_per_its_schema_with_a_score_of_at_least_one() {
    let m = Model::start(&[]);
    // The schema as Gemini CLI 0.61.0 sends it: Gemini's upper-case type names, no bounds.
    let schema = json!({"type": "OBJECT", "properties": {
        "complexity_reasoning": {"type": "STRING", "description": "Brief explanation for the score."},
        "complexity_score": {"type": "INTEGER", "description": "Complexity score from 1-100."}},
        "required": ["complexity_reasoning", "complexity_score"]});
    let body = json!({"contents": [user(PROMPT)], "generationConfig": {"temperature": 1,
        "responseMimeType": "application/json", "responseJsonSchema": schema,
        "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "HIGH"}}});
    let answer = m.ask(
        "/v1beta/models/gemini-2.5-flash-lite:generateContent",
        &body,
    );
    assert_eq!(answer.status, 200);
    let answer = answer.json();
    let text = answer["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .expect("a text part");
    let said: Value = serde_json::from_str(text).expect("the text is JSON");
    assert_eq!(said["complexity_reasoning"], "ok");
    assert!(
        said["complexity_score"].as_u64().is_some_and(|s| s >= 1),
        "{said}"
    );
    assert!(answer["usageMetadata"]["totalTokenCount"].is_u64());
    assert!(
        m.events().contains(&ModelEvent::NoTool {
            model: json!("gemini-2.5-flash-lite"),
            offered: Vec::new()
        }),
        "{:?}",
        m.events()
    );
}

#[test]
fn a_streamed_turn_calls_the_function_and_the_function_response_is_logged_as_sent() {
    let m = Model::start(&["--input-tokens", "100", "--output-tokens", "5"]);
    let first = [user(PROMPT)];
    let answer = streamed(&m, PRO, &turn(&first));
    let candidate = &answer["candidates"][0];
    assert_eq!(candidate["finishReason"], "STOP");
    assert_eq!(candidate["content"]["role"], "model");
    let call = candidate["content"]["parts"][0]["functionCall"].clone();
    assert_eq!(call["name"], "mcp_probe_emit");
    assert_eq!(call["args"], json!({"n": 3000, "fill": "lines"}));
    assert_eq!(
        answer["usageMetadata"],
        json!({"promptTokenCount": 100, "candidatesTokenCount": 5, "totalTokenCount": 105})
    );

    let output = "<untrusted_context>\n00000001 xxxx\n</untrusted_context>";
    let response = json!({"role": "user", "parts": [{"functionResponse": {"name": "mcp_probe_emit",
        "id": "mcp_probe_emit-1764590000-1", "response": {"output": output}}}]});
    let contents = [
        first[0].clone(),
        json!({"role": "model", "parts": [{"functionCall": call,
            "thoughtSignature": "skip_thought_signature_validator"}]}),
        response.clone(),
    ];
    let answer = streamed(&m, PRO, &turn(&contents));
    assert_eq!(
        answer["candidates"][0]["content"]["parts"][0]["text"],
        "done"
    );
    let ModelEvent::ToolResult {
        n,
        tool_use_id,
        content,
        content_kind,
        units,
        raw,
        ..
    } = m.tool_result()
    else {
        unreachable!()
    };
    assert_eq!(content, json!(output));
    assert_eq!(content_kind, ContentKind::String);
    assert_eq!(units, js_length(output) as u64);
    assert_eq!(n, Some(3000));
    assert_eq!(tool_use_id, "mcp_probe_emit-1764590000-1");
    assert_eq!(raw, Some(response));
}

#[test]
fn without_alt_sse_the_stream_is_a_json_array_and_generate_content_one_answer() {
    let m = Model::start(&["--count-tokens", "4242"]);
    let body = turn(&[user(PROMPT)]);
    let answer = m.ask("/v1beta/models/m:streamGenerateContent", &body);
    assert_eq!(answer.status, 200);
    let answers = answer.json();
    assert_eq!(answers.as_array().map(Vec::len), Some(1), "{answers}");
    assert_eq!(
        answers[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "mcp_probe_emit"
    );
    let one = m.ask("/v1beta/models/m:generateContent", &body).json();
    assert!(one["candidates"][0]["content"]["parts"][0]["functionCall"].is_object());
    let counted = m
        .ask(
            "/v1beta/models/m:countTokens",
            &json!({"contents": [user("abcd")]}),
        )
        .json();
    assert_eq!(counted, json!({"totalTokens": 4242}));
    assert!(
        m.events().contains(&ModelEvent::CountTokens {
            units: 4,
            input_tokens: 4242
        }),
        "{:?}",
        m.events()
    );
}

#[test]
fn a_result_cut_inside_a_surrogate_pair_is_read_with_the_half_pair_as_one_replacement_unit() {
    let m = Model::start(&[]);
    let call = json!({"role": "model", "parts": [{"functionCall": {"name": "mcp_probe_emit", "args": {"n": 3000}}}]});
    // JSON.stringify writes the lone half of a pair as an escape; serde_json cannot write one.
    let response = r#"{"role": "user", "parts": [{"functionResponse": {"name": "mcp_probe_emit", "id": "c1", "response": {"output": "\ud83d\ude00 [omitted] \ude00x"}}}]}"#;
    let body = format!(r#"{{"contents": [{}, {call}, {response}]}}"#, user(PROMPT));
    let answer = m.send(PRO, body.as_bytes(), true);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let ModelEvent::ToolResult {
        content, units, n, ..
    } = m.tool_result()
    else {
        unreachable!()
    };
    assert_eq!(content, json!("\u{1F600} [omitted] \u{FFFD}x"));
    // As JavaScript counts the text the client sent: 2 + 11 + 1 + 1.
    assert_eq!(units, 15);
    assert_eq!(n, Some(3000));
}
