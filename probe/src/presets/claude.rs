//! Claude Code (`@anthropic-ai/claude-code`): print mode against the Anthropic Messages
//! stand-in, the MCP config from the driver, the tool allowed.
//!
//! `ENABLE_TOOL_SEARCH=false` keeps the MCP tool in the request's tools instead of behind a
//! search tool; every kind of background traffic is off, so the only connection it makes is to
//! the stand-in. MAX_MCP_OUTPUT_TOKENS passes through, since it moves the second limit.

use super::{Api, Launch, Run, Spec};
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "claude",
    bin: "claude",
    package: "@anthropic-ai/claude-code",
    version: "2.1.332",
    api: Api::Anthropic,
    model: None,
    spill_patterns: &[
        "exceeds maximum allowed tokens",
        "Output has been saved to",
        "persisted-output",
    ],
};

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let argv = vec![
        run.bin(),
        "-p".into(),
        run.prompt.into(),
        "--mcp-config".into(),
        run.mcp_config.display().to_string(),
        "--strict-mcp-config".into(),
        "--allowedTools".into(),
        "mcp__probe__emit".into(),
        "--output-format".into(),
        "json".into(),
    ];
    let mut env = vec![
        ("ANTHROPIC_BASE_URL", run.base_url()),
        ("ANTHROPIC_API_KEY", "probe-offline-no-key".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("DISABLE_BUG_COMMAND", "1".into()),
        ("ENABLE_TOOL_SEARCH", "false".into()),
    ];
    if let Ok(v) = std::env::var("MAX_MCP_OUTPUT_TOKENS") {
        env.push(("MAX_MCP_OUTPUT_TOKENS", v));
    }
    Ok(Launch { argv, env })
}
