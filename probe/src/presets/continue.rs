//! Continue's CLI (`@continuedev/cli`, `cn`): `cn -p` against the Chat Completions stand-in,
//! with its config (an `openai` model at the stand-in's base URL, probe's server) in
//! `~/.continue/config.yaml`.
//!
//! `--auto` allows every tool. The client looks up its latest version at startup
//! (`https://api.continue.dev/cn/info?id=<machine id>`) unconditionally: no setting or variable
//! turns it off, so the preset preloads a guard (`NODE_OPTIONS=--import`) that fails every
//! `fetch` to a host other than 127.0.0.1 before any lookup; the client takes the failure as
//! "no newer version" and goes on. It hands the model the MCP result's content list serialized
//! as JSON text.

use super::{Api, Launch, Run, Spec};
use serde_json::json;
use std::io;

pub(super) const SPEC: Spec = Spec {
    name: "continue",
    bin: "cn",
    package: "@continuedev/cli",
    version: "1.5.47",
    api: Api::Chat,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

/// Node's global `fetch` limited to the loopback stand-in.
const GUARD: &str = r#"// probe: the stand-in on 127.0.0.1 is the only host this client may fetch from.
const real = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (url.hostname !== "127.0.0.1") {
    return Promise.reject(new TypeError(`probe: offline, ${url.host} refused`));
  }
  return real(input, init);
};
"#;

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    // JSON is YAML, and needs no quoting rules of its own for the paths.
    let config = run.write_json(
        ".continue/config.yaml",
        &json!({
            "name": "probe",
            "version": "1.0.0",
            "schema": "v1",
            "models": [{
                "name": MODEL,
                "provider": "openai",
                "model": MODEL,
                "apiBase": format!("{}/v1", run.base_url()),
                "apiKey": "dummy",
                "roles": ["chat"]
            }],
            "mcpServers": [{
                "name": "probe",
                "command": run.server.command,
                "args": run.server.args
            }]
        }),
    )?;
    let guard = run.write(".continue/probe-offline.mjs", GUARD)?;
    Ok(Launch {
        argv: vec![
            run.bin(),
            "-p".into(),
            run.prompt.into(),
            "--config".into(),
            config.display().to_string(),
            "--auto".into(),
            "--format".into(),
            "json".into(),
        ],
        env: vec![(
            "NODE_OPTIONS",
            // Quoted as NODE_OPTIONS reads a value with spaces.
            format!("--import={}", json!(guard.display().to_string())),
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::GUARD;
    use runner::{Job, Outcome, Program};
    use std::time::Duration;

    /// Node with the guard preloaded: a fetch of a documentation address (192.0.2.1, never
    /// routed; no lookup either way) fails with the guard's words before any connection, and a
    /// fetch of a listener on 127.0.0.1 gets through. Skips where node is not installed.
    #[test]
    fn the_guard_refuses_every_host_but_the_loopback_stand_in() {
        let has_node = std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_node {
            testkit::skip("node", "no node on PATH, so the fetch guard was not run");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let guard = dir.path().join("guard.mjs");
        std::fs::write(&guard, GUARD).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // The loopback fetch only has to connect: the listener never answers, so it aborts.
        let script = format!(
            r#"const away = await fetch("http://192.0.2.1:9/").then(() => "fetched", e => e.message);
const near = await fetch("http://127.0.0.1:{port}/", {{signal: AbortSignal.timeout(2000)}})
  .then(() => "fetched", e => e.name);
console.log(JSON.stringify([away, near]));"#
        );
        let log = dir.path().join("node.log");
        let job = Job::new(
            Program::Argv(vec![
                "node".into(),
                format!("--import={}", guard.display()),
                "--input-type=module".into(),
                "-e".into(),
                script,
            ]),
            dir.path(),
            &log,
        )
        .timeout(Duration::from_secs(30));
        let record = report::record::run(&job).unwrap();
        let out = std::fs::read_to_string(&log).unwrap();
        assert_eq!(record.outcome(), Outcome::Passed, "{out}");
        assert!(
            out.contains(r#"["probe: offline, 192.0.2.1:9 refused","TimeoutError"]"#),
            "{out}"
        );
        drop(listener);
    }
}
