//! GitHub Copilot CLI (`@github/copilot`): `copilot -p` against the Chat Completions stand-in,
//! through its bring-your-own-key provider, with its MCP servers in `~/.copilot/mcp-config.json`.
//!
//! `COPILOT_PROVIDER_BASE_URL` replaces GitHub's model routing and with it the GitHub sign-in;
//! `COPILOT_OFFLINE=true` turns off the rest of its network use (authentication, telemetry, web
//! tools, the built-in GitHub MCP server, auto-update). `--allow-all-tools` approves the tool,
//! which headless mode requires. The client names MCP tools `SERVER-TOOL` (`probe-emit`). On
//! its first start in a HOME it unpacks its package (about 235 MB) into `~/.cache/copilot`, so
//! each run's scratch HOME holds a copy until the run ends.

use super::{Api, Launch, Run, Spec};
use serde_json::json;
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "copilot",
    bin: "copilot",
    package: "@github/copilot",
    version: "1.0.102",
    api: Api::Chat,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    run.write_json(
        ".copilot/mcp-config.json",
        &json!({"mcpServers": {"probe": {
            "type": "local",
            "command": run.server.command,
            "args": run.server.args,
            "tools": ["*"]
        }}}),
    )?;
    Ok(Launch {
        argv: vec![
            run.bin(),
            "-p".into(),
            run.prompt.into(),
            "--allow-all-tools".into(),
            "--output-format".into(),
            "json".into(),
            "--disable-client-telemetry".into(),
        ],
        env: vec![
            ("COPILOT_OFFLINE", "true".into()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", run.base_url()),
            ),
            ("COPILOT_PROVIDER_API_KEY", "dummy".into()),
            ("COPILOT_MODEL", MODEL.into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
        ],
    })
}
