//! `probe test-client`: a small MCP client with a known inline limit.
//!
//! It exists so the driver can be tried and tested end to end without installing an agent CLI:
//! `probe bracket --client 'probe test-client --limit 50000 --mcp-config {mcp_config} --n {n}'`
//! finds 50000, exactly as it does for Claude Code. Like a real client it never truncates: a
//! result over the limit is saved to a file and replaced by a message naming it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use report::Exit;

use crate::client::{self, CallSettings};
use crate::Failure;

/// What `test-client` takes.
#[derive(Debug, Clone)]
pub struct TestClientSettings {
    pub mcp_config: PathBuf,
    pub n: u64,
    pub limit: u64,
    pub saved_dir: Option<PathBuf>,
}

/// The first server of an MCP config, as a command line.
pub fn first_server(config: &Value) -> Option<Vec<String>> {
    let (_, server) = config["mcpServers"].as_object()?.iter().next()?;
    let mut argv = vec![server["command"].as_str()?.to_string()];
    for arg in server["args"].as_array().into_iter().flatten() {
        argv.push(arg.as_str()?.to_string());
    }
    Some(argv)
}

/// Calls `emit` and prints the text, or saves it and prints where.
pub fn run_test_client(s: &TestClientSettings) -> Result<Exit> {
    let text = std::fs::read_to_string(&s.mcp_config)
        .with_context(|| format!("reading {}", s.mcp_config.display()))?;
    let config: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{}: not JSON: {e}", s.mcp_config.display())))?;
    let server = first_server(&config).ok_or_else(|| {
        Failure::Usage(format!(
            "{}: no server with a `command` under `mcpServers`",
            s.mcp_config.display()
        ))
    })?;
    let report = client::call(&CallSettings {
        tool: "emit".into(),
        arguments: json!({ "n": s.n }),
        cap: None,
        timeout: Duration::from_secs(60),
        json: false,
        server,
    })?;
    let text = report.texts.concat();
    if report.text.units <= s.limit {
        crate::print_out(&format!("{text}\n"))?;
        return Ok(Exit::Ok);
    }
    let dir = s.saved_dir.clone().unwrap_or_else(std::env::temp_dir);
    let file = tempfile::Builder::new()
        .prefix("probe-test-client-")
        .suffix(".txt")
        .tempfile_in(&dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    std::fs::write(file.path(), &text)?;
    let (_, path) = file.keep().context("keeping the saved result")?;
    crate::print_out(&format!(
        "Error: result ({} UTF-16 units) exceeds this client's limit of {}. Output has been saved to {}\n",
        report.text.units,
        s.limit,
        path.display()
    ))?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_server_of_a_config_is_a_command_line() {
        let config = json!({"mcpServers": {"probe": {"command": "/bin/probe", "args": ["serve", "--log", "x"]}}});
        assert_eq!(
            first_server(&config).unwrap(),
            ["/bin/probe", "serve", "--log", "x"]
        );
        assert_eq!(first_server(&json!({"mcpServers": {}})), None);
        assert_eq!(first_server(&json!({})), None);
    }
}
