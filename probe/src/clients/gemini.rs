//! Google Gemini CLI (`@google/gemini-cli`): `gemini -p` against the Gemini stand-in, with its
//! settings in `~/.gemini/settings.json`.
//!
//! Without `auth.selectedType` the base-URL variable selects an auth type the client refuses
//! (exit 41); without folder trust off it refuses to run headless; without usage statistics off
//! it looks up a public host.

use super::{Api, Launch, Run, Spec};
use serde_json::json;
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
    run.write_json(
        ".gemini/settings.json",
        &json!({
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "security": {
                "folderTrust": {"enabled": false},
                "auth": {"selectedType": "gemini-api-key"}
            },
            "mcpServers": {"probe": {
                "command": run.server.command,
                "args": run.server.args,
                "trust": true
            }}
        }),
    )?;
    Ok(Launch {
        argv: vec![
            run.bin(),
            "-p".into(),
            run.prompt.into(),
            "--output-format".into(),
            "json".into(),
        ],
        env: vec![
            ("GOOGLE_GEMINI_BASE_URL", run.base_url()),
            ("GEMINI_API_KEY", "dummy".into()),
        ],
    })
}
