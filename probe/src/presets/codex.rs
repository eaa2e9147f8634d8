//! OpenAI Codex CLI (`@openai/codex`): `codex exec` against the Responses stand-in, with its
//! config in `$CODEX_HOME/config.toml`.
//!
//! The model slug is unknown to the client on purpose (`probe-model`): a slug it knows changes
//! its limit and defers MCP tools behind a client-side tool search, so the slug is part of what
//! is measured. Plugins are off (else it runs `git ls-remote` against a public host), the tool
//! is approved (else the result is "requires approval"), retries are off so a stand-in error is
//! one run's error, not a minute of retries.

use super::{Api, Launch, Run, Spec};
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "codex",
    bin: "codex",
    package: "@openai/codex",
    version: "0.171.0",
    api: Api::Responses,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

/// A TOML basic string: quoted, with `\` and `"` escaped (paths are the only outside text).
fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let args: Vec<String> = run.server.args.iter().map(|a| toml_str(a)).collect();
    let config = format!(
        r#"model = {model}
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.standin]
name = "standin"
base_url = "{base}/v1"
env_key = "STANDIN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.probe]
command = {command}
args = [{args}]
default_tools_approval_mode = "approve"

[features]
plugins = false
remote_plugin = false

[analytics]
enabled = false
"#,
        model = toml_str(MODEL),
        base = run.base_url(),
        command = toml_str(&run.server.command),
        args = args.join(", "),
    );
    run.write(".codex/config.toml", &config)?;
    Ok(Launch {
        argv: vec![
            run.bin(),
            "exec".into(),
            "--skip-git-repo-check".into(),
            "--ephemeral".into(),
            "--json".into(),
            run.prompt.into(),
        ],
        env: vec![
            ("CODEX_HOME", run.home.join(".codex").display().to_string()),
            ("STANDIN_API_KEY", "dummy".into()),
        ],
    })
}
