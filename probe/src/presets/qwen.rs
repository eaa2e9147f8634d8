//! Qwen Code (`@qwen-code/qwen-code`): `qwen -p` against the Chat Completions stand-in, with its
//! settings in `~/.qwen/settings.json`.
//!
//! By default it defers MCP tools behind `tool_search`/`tool_call`, which the stand-in answers
//! (so the default is what is measured); usage statistics off, else it looks up a telemetry
//! host.

use super::{Api, Launch, Run, Spec};
use serde_json::json;
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "qwen",
    bin: "qwen",
    package: "@qwen-code/qwen-code",
    version: "0.24.4",
    api: Api::Chat,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let mut settings = super::gemini::settings(run, json!({"enableAutoUpdate": false}), "openai");
    settings["model"] = json!({"name": MODEL});
    run.write_json(".qwen/settings.json", &settings)?;
    Ok(Launch {
        argv: super::gemini::headless_argv(run),
        env: vec![
            ("OPENAI_BASE_URL", format!("{}/v1", run.base_url())),
            ("OPENAI_API_KEY", "dummy".into()),
            ("OPENAI_MODEL", MODEL.into()),
        ],
    })
}
