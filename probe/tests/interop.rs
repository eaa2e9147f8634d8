//! `probe serve` against real third-party MCP clients: the official Python SDK (`mcp` on PyPI)
//! and the MCP Inspector CLI (npm). Each skips with a notice when its client is not installed;
//! `scripts/install-mcp-clients.sh` installs both.

use crate::common::*;
use serde_json::Value;

const SDK_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

def field(obj, snake, camel):
    # mcp 1.x exposes camelCase attributes, 2.x snake_case.
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["serve"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            ok = await session.call_tool("emit", {"n": 50001, "fill": "astral", "blocks": 2})
            bad = await session.call_tool("emit", {"n": -5})
            after = await session.call_tool("emit", {"n": 100})
            print(json.dumps({
                "protocol": field(init, "protocol_version", "protocolVersion"),
                "tools": [t.name for t in tools.tools],
                "texts": [b.text for b in ok.content],
                "ok_error": field(ok, "is_error", "isError"),
                "bad_error": field(bad, "is_error", "isError"),
                "after": "".join(b.text for b in after.content),
            }))

asyncio.run(main())
"#;

fn has_python_mcp() -> bool {
    python().is_some()
        && std::process::Command::new("python3")
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_sdk_initializes_lists_and_calls() {
    if !has_python_mcp() {
        testkit::skip(
            "python-mcp",
            "the Python `mcp` package is not installed (run scripts/install-mcp-clients.sh)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sdk_client.py");
    std::fs::write(&script, SDK_CLIENT).unwrap();
    let out = testkit::bin("python3")
        .arg(&script)
        .arg(PROBE)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["protocol"], "2025-11-25");
    assert_eq!(r["tools"], serde_json::json!(["emit"]));
    let texts: Vec<&str> = r["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 2);
    assert_eq!(texts.iter().map(|t| js_length(t)).sum::<usize>(), 50_001);
    assert!(texts[1].ends_with(" end>>"));
    assert_eq!(r["ok_error"], false);
    assert_eq!(r["bad_error"], true);
    assert_eq!(
        js_length(r["after"].as_str().unwrap()),
        100,
        "the server kept serving"
    );
}

#[test]
fn the_inspector_cli_calls_emit() {
    let bin = cache_dir().join("mcp-clients/node_modules/.bin/mcp-inspector");
    if !bin.exists() {
        testkit::skip(
            "mcp-inspector",
            &format!(
                "the MCP Inspector is not installed at {} (run scripts/install-mcp-clients.sh)",
                bin.display()
            ),
        );
        return;
    }
    let out = testkit::bin(&bin)
        .args([
            "--cli",
            PROBE,
            "serve",
            "--method",
            "tools/call",
            "--tool-name",
            "emit",
            "--tool-arg",
            "n=12345",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(js_length(text), 12_345);
    assert!(text.starts_with("<<probe n=12345 nonce="));
    assert_eq!(r["isError"], false);

    let out = testkit::bin(&bin)
        .args(["--cli", PROBE, "serve", "--method", "tools/list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["tools"][0]["name"], "emit");
}
