//! Gemini's `generateContent` API, as Gemini CLI calls it (`GOOGLE_GEMINI_BASE_URL`):
//! `POST /v1beta/models/MODEL:generateContent` (one answer),
//! `:streamGenerateContent?alt=sse` (server-sent events, one `data:` line per answer, no event
//! names; without `alt=sse`, a JSON array of answers) and `:countTokens`.
//!
//! As Gemini CLI was measured to speak it: the first request is a routing classifier that asks
//! for JSON per `generationConfig.responseJsonSchema` (answered with the simplest value the
//! schema allows, numbers at least 1, since the client wants a complexity score of 1 or more);
//! a turn is answered with a `functionCall` part and `usageMetadata`; the result is in the last
//! `contents` entry, a `functionResponse` part whose `response` holds it (`output`).

use serde_json::{json, Map, Value};

use crate::events::ModelEvent;
use crate::http::{json_body, take_turn, Handler, Reply, Sse};
use crate::request::Request;
use crate::tokens::{text_units, tokens_for, Usage};
use crate::turn::{text_of, Conversation, Offered, ToolResult, Turn};
use crate::Shared;

/// The Gemini API shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gemini;

/// What a path asks: the model, and the method after the colon.
fn route(path: &str) -> Option<(&str, &str)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    rest.rsplit_once(':')
}

impl Handler for Gemini {
    fn answer(&self, request: &Request, shared: &Shared) -> Option<Reply> {
        if request.method != "POST" {
            return None;
        }
        let (model, method) = route(&request.path)?;
        if !matches!(
            method,
            "generateContent" | "streamGenerateContent" | "countTokens"
        ) {
            return None;
        }
        let body = match json_body(request, shared) {
            Ok(body) => body,
            Err(refusal) => return Some(refusal),
        };
        if method == "countTokens" {
            let units = text_units(&body) + text_units(&body["generateContentRequest"]);
            let total = shared.settings.count_tokens.unwrap_or(tokens_for(units));
            shared.record(ModelEvent::CountTokens {
                units,
                input_tokens: total,
            });
            return Some(Reply::Json {
                status: 200,
                body: json!({"totalTokens": total}),
            });
        }
        let model = json!(model);
        let (turn, usage) = take_turn(&conversation(&body, &model), "call_", &body, shared);
        let answer = answer(&body, &model, &turn, usage);
        Some(match method {
            "generateContent" => Reply::Json {
                status: 200,
                body: answer,
            },
            _ if request.query_value("alt") == Some("sse") => Reply::Events(vec![Sse {
                event: None,
                data: answer.to_string(),
            }]),
            _ => Reply::Json {
                status: 200,
                body: json!([answer]),
            },
        })
    }
}

/// The parts of a content entry.
fn parts(entry: &Value) -> &[Value] {
    entry["parts"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// A Gemini request (for `model`, from its path) in the terms the turn is decided on.
fn conversation<'a>(request: &'a Value, model: &'a Value) -> Conversation<'a> {
    let contents = request["contents"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let tools = request["tools"].as_array().into_iter().flatten();
    let declared = tools.flat_map(|t| {
        let list = t
            .get("functionDeclarations")
            .or_else(|| t.get("function_declarations"));
        list.and_then(Value::as_array).into_iter().flatten()
    });
    let prompt = contents
        .iter()
        .filter(|c| c["role"] == "user")
        .map(|c| text_of(&c["parts"]))
        .collect::<Vec<_>>()
        .join("\n");
    Conversation {
        model,
        tools: declared
            .filter_map(|f| f["name"].as_str())
            .map(Offered::named)
            .collect(),
        prompt,
        results: results(contents),
        search: None,
    }
}

/// The results in the last content entry: each function response's `output` (the whole
/// `response` when it has none, as an `error`), the entry itself as the raw item, and the
/// input of the call it answers (the call of that name in the same place among the last model
/// entry's calls, as Gemini answers parallel calls in their order).
fn results(contents: &[Value]) -> Vec<ToolResult<'_>> {
    let Some(last) = contents.last() else {
        return Vec::new();
    };
    let calls: Vec<&Value> = contents
        .iter()
        .rev()
        .find(|c| c["role"] == "model" && parts(c).iter().any(|p| p.get("functionCall").is_some()))
        .map(|c| {
            parts(c)
                .iter()
                .filter_map(|p| p.get("functionCall"))
                .collect()
        })
        .unwrap_or_default();
    let responses = parts(last).iter().filter_map(|p| p.get("functionResponse"));
    responses
        .enumerate()
        .map(|(k, response)| {
            let name = response["name"].as_str().unwrap_or("");
            let input = calls
                .get(k)
                .filter(|call| call["name"] == name)
                .or_else(|| calls.iter().rev().find(|call| call["name"] == name))
                .map(|call| call["args"].clone());
            ToolResult {
                id: response["id"].as_str().unwrap_or(name),
                input,
                is_error: Value::Null,
                content: response["response"]
                    .get("output")
                    .unwrap_or(&response["response"]),
                raw: Some(last),
            }
        })
        .collect()
}

/// The simplest value a JSON schema allows: the first of an `enum`, an object of its
/// properties, an empty array, `"ok"`, `true`, and numbers of at least 1 (within the schema's
/// bounds).
fn value_for(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(kind) => kind.to_ascii_lowercase(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("")
            .to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => String::new(),
    };
    let at_least_one = || {
        let low = schema["minimum"].as_f64().unwrap_or(1.0).max(1.0);
        schema["maximum"].as_f64().map_or(low, |high| low.min(high))
    };
    match kind.as_str() {
        "object" => {
            let properties = schema["properties"].as_object().into_iter().flatten();
            Value::Object(
                properties
                    .map(|(k, v)| (k.clone(), value_for(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        "array" => json!([]),
        "integer" => json!(at_least_one().ceil() as i64),
        "number" => json!(at_least_one()),
        "boolean" => json!(true),
        _ => json!("ok"),
    }
}

/// The JSON schema a request asks its answer to follow, if any.
fn asked_schema(request: &Value) -> Option<&Value> {
    let config = &request["generationConfig"];
    config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"))
        .or_else(|| config.get("response_json_schema"))
}

/// One answer: the function calls (one part each) or text (the JSON the schema asks, for the
/// classifier) as the candidate's parts, with the usage.
fn answer(request: &Value, model: &Value, turn: &Turn, usage: Usage) -> Value {
    let parts = match (turn, asked_schema(request)) {
        (Turn::ToolUse { tool, calls }, _) => calls
            .iter()
            .map(|c| json!({"functionCall": {"name": tool.name, "args": c.input}}))
            .collect(),
        (_, Some(schema)) => vec![json!({"text": value_for(schema).to_string()})],
        (Turn::Text(text), None) => vec![json!({"text": text})],
        (Turn::Search { .. }, None) => vec![json!({"text": ""})],
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
            "index": 0}],
        "usageMetadata": {"promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens, "totalTokenCount": usage.total()},
        "modelVersion": model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::decide;

    #[test]
    fn the_path_names_the_model_and_the_method() {
        assert_eq!(
            route("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Some(("gemini-2.5-pro", "streamGenerateContent"))
        );
        assert_eq!(
            route("/v1/models/m:countTokens"),
            Some(("m", "countTokens"))
        );
        assert_eq!(route("/v1beta/models/m"), None);
        assert_eq!(route("/v1/messages"), None);
    }

    #[test]
    fn the_classifier_gets_the_simplest_json_its_schema_allows() {
        let schema = json!({"type": "object", "properties": {
            "complexity_reasoning": {"type": "string"},
            "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100}},
            "required": ["complexity_reasoning", "complexity_score"]});
        assert_eq!(
            value_for(&schema),
            json!({"complexity_reasoning": "ok", "complexity_score": 1})
        );
        assert_eq!(
            value_for(&json!({"type": "INTEGER", "minimum": 3})),
            json!(3)
        );
        assert_eq!(
            value_for(&json!({"type": "integer", "maximum": 0})),
            json!(0)
        );
        assert_eq!(value_for(&json!({"type": ["null", "number"]})), json!(1.0));
        assert_eq!(
            value_for(&json!({"type": "integer", "minimum": 0})),
            json!(1)
        );
        assert_eq!(
            value_for(&json!({"enum": ["flash", "pro"], "type": "string"})),
            json!("flash")
        );
        assert_eq!(value_for(&json!({"type": "array"})), json!([]));
        let request = json!({"generationConfig": {"responseMimeType": "application/json",
            "responseJsonSchema": schema}, "contents": [{"role": "user", "parts": [{"text": "n=5"}]}]});
        let model = json!("flash-lite");
        let (turn, event) = decide(&conversation(&request, &model), "call_");
        assert!(
            matches!(event.as_slice(), [ModelEvent::NoTool { .. }]),
            "{event:?}"
        );
        let usage = Usage {
            input_tokens: 1,
            output_tokens: 1,
        };
        let text = answer(&request, &model, &turn, usage)["candidates"][0]["content"]["parts"][0]
            ["text"]
            .clone();
        let said: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
        assert_eq!(said["complexity_score"], 1);
    }

    #[test]
    fn a_turn_calls_the_declared_function_and_reports_usage() {
        let request = json!({"contents": [{"role": "user", "parts": [{"text": "Call it with n=1000"}]}],
            "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "mcp_probe_emit"}]}]});
        let model = json!("pro");
        let (turn, _) = decide(&conversation(&request, &model), "call_");
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 5,
        };
        let a = answer(&request, &model, &turn, usage);
        assert_eq!(
            a["candidates"][0]["content"]["parts"][0],
            json!({"functionCall": {"name": "mcp_probe_emit", "args": {"n": 1000}}})
        );
        assert_eq!(a["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            a["usageMetadata"],
            json!({"promptTokenCount": 100, "candidatesTokenCount": 5, "totalTokenCount": 105})
        );
    }

    #[test]
    fn parallel_calls_are_one_part_each_and_each_response_is_read_with_its_calls_input() {
        let request = json!({"contents": [{"role": "user", "parts": [{"text": "PROBE n=8,7"}]}],
            "tools": [{"functionDeclarations": [{"name": "mcp_probe_emit"}]}]});
        let model = json!("pro");
        let (turn, _) = decide(&conversation(&request, &model), "call_");
        let usage = Usage {
            input_tokens: 1,
            output_tokens: 1,
        };
        let a = answer(&request, &model, &turn, usage);
        let parts = a["candidates"][0]["content"]["parts"].clone();
        assert_eq!(parts[1]["functionCall"]["args"], json!({"n": 7}));
        let answered = json!({"contents": [
            request["contents"][0],
            {"role": "model", "parts": parts},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "mcp_probe_emit", "id": "a", "response": {"output": "eight"}}},
                {"functionResponse": {"name": "mcp_probe_emit", "id": "b", "response": {"output": "seven"}}}]}]});
        let c = conversation(&answered, &model);
        let got = c.inputs_and_contents();
        assert_eq!(
            got,
            [
                (Some(json!({"n": 8})), &json!("eight")),
                (Some(json!({"n": 7})), &json!("seven"))
            ]
        );
    }

    #[test]
    fn the_result_is_the_last_entrys_function_response_output() {
        let request = json!({"contents": [
            {"role": "user", "parts": [{"text": "n=7"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "mcp_probe_emit", "args": {"n": 7}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "mcp_probe_emit", "id": "mcp_probe_emit-1",
                "response": {"output": "<untrusted_context>\nx\n</untrusted_context>"}}}]}]});
        let model = json!("pro");
        let c = conversation(&request, &model);
        let result = &c.results[0];
        assert_eq!(result.id, "mcp_probe_emit-1");
        assert_eq!(result.input, Some(json!({"n": 7})));
        assert_eq!(
            result.content,
            &json!("<untrusted_context>\nx\n</untrusted_context>")
        );
        assert_eq!(result.raw, request["contents"].as_array().unwrap().last());
        // A response without `output` (an error) is taken whole.
        let error = json!({"contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "f", "response": {"error": "boom"}}}]}]});
        let c = conversation(&error, &model);
        let result = &c.results[0];
        assert_eq!(result.content, &json!({"error": "boom"}));
        assert_eq!(result.id, "f");
        assert_eq!(result.input, None);
    }
}
