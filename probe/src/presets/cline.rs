//! Cline CLI (`cline`): `cline --json` against the Chat Completions stand-in, with its MCP
//! settings, global settings and provider in the scratch HOME.
//!
//! `CLINE_SESSION_BACKEND_MODE=local` keeps it from starting a detached hub daemon that
//! outlives the run; `IS_TEST=true` is the only switch found for a feature-flag poll of a
//! public host; a provider entry without `updatedAt` is ignored (and the client goes to a public
//! host).

use super::{Api, Launch, Run, Spec};
use serde_json::json;
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "cline",
    bin: "cline",
    package: "cline",
    version: "3.0.65",
    api: Api::Chat,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let mcp = run.write_json(
        "mcp.json",
        &json!({"mcpServers": {"probe": {
            "type": "stdio",
            "command": run.server.command,
            "args": run.server.args,
            "disabled": false,
            "autoApprove": ["emit"]
        }}}),
    )?;
    run.write_json(
        ".cline/data/settings/global-settings.json",
        &json!({"telemetryOptOut": true, "autoUpdateEnabled": false}),
    )?;
    run.write_json(
        ".cline/data/settings/providers.json",
        &json!({
            "version": 1,
            "lastUsedProvider": "openai-compatible",
            "modes": {},
            "providers": {"openai-compatible": {
                "settings": {
                    "provider": "openai-compatible",
                    "apiKey": "dummy",
                    "model": MODEL,
                    "baseUrl": format!("{}/v1", run.base_url())
                },
                "updatedAt": "2026-01-01T00:00:00.000Z",
                "tokenSource": "manual"
            }}
        }),
    )?;
    Ok(Launch {
        argv: vec![
            run.bin(),
            "--json".into(),
            "-P".into(),
            "openai-compatible".into(),
            "-m".into(),
            MODEL.into(),
            "--timeout".into(),
            "120".into(),
            run.prompt.into(),
        ],
        env: vec![
            ("CLINE_MCP_SETTINGS_PATH", mcp.display().to_string()),
            ("CLINE_SESSION_BACKEND_MODE", "local".into()),
            ("IS_TEST", "true".into()),
        ],
    })
}
