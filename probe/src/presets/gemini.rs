//! Google Gemini CLI (`@google/gemini-cli`): `gemini -p` against the Gemini stand-in, with its
//! settings in `~/.gemini/settings.json`.
//!
//! Without `auth.selectedType` the base-URL variable selects an auth type the client refuses
//! (exit 41); without folder trust off it refuses to run headless; without usage statistics off
//! it looks up a public host.

use super::{Api, Launch, Run, Spec};
use serde_json::{json, Value};
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "gemini",
    bin: "gemini",
    package: "@google/gemini-cli",
    version: "0.61.0",
    api: Api::Gemini,
    model: None,
    spill_patterns: &[],
};

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let general = json!({"enableAutoUpdate": false, "enableAutoUpdateNotification": false});
    run.write_json(
        ".gemini/settings.json",
        &settings(run, general, "gemini-api-key"),
    )?;
    Ok(Launch {
        argv: headless_argv(run),
        env: vec![
            ("GOOGLE_GEMINI_BASE_URL", run.base_url()),
            ("GEMINI_API_KEY", "dummy".into()),
        ],
    })
}

/// The settings Gemini CLI reads, which Qwen Code (a fork of it) reads too: updates (as
/// `general` says), usage statistics, telemetry and folder trust off, the auth type chosen, and
/// probe's server trusted.
pub(super) fn settings(run: &Run, general: Value, auth: &str) -> Value {
    json!({
        "general": general,
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "security": {
            "folderTrust": {"enabled": false},
            "auth": {"selectedType": auth}
        },
        "mcpServers": {"probe": {
            "command": run.server.command,
            "args": run.server.args,
            "trust": true
        }}
    })
}

/// `BIN -p PROMPT --output-format json`: how both run headless.
pub(super) fn headless_argv(run: &Run) -> Vec<String> {
    vec![
        run.bin(),
        "-p".into(),
        run.prompt.into(),
        "--output-format".into(),
        "json".into(),
    ]
}
