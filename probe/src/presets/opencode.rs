//! opencode (`opencode-ai`): `opencode run` against the Chat Completions stand-in, with its
//! config in `~/.config/opencode/opencode.json`.
//!
//! On every start it installs `@opencode-ai/plugin` into its config folder in the background,
//! with no switch to stop it. `install-clients.sh` seeds a copy of that folder once
//! (`CACHE/opencode/config`: package.json, lockfile, node_modules); each run's config folder
//! gets the manifest and lockfile copied and node_modules linked, so the install finds the
//! plugin present and makes no request. Without the seed the lookup fails offline, harmlessly.

use super::{Api, Launch, Run, Spec};
use serde_json::json;
use std::fs;
use std::io;
use std::path::Path;

pub(super) const SPEC: Spec = Spec {
    name: "opencode",
    bin: "opencode",
    package: "opencode-ai",
    version: "1.18.33",
    api: Api::Chat,
    model: Some(MODEL),
    spill_patterns: &[],
};

const MODEL: &str = "probe-model";

pub(super) fn launch(run: &Run) -> io::Result<Launch> {
    let config = run.write_json(
        ".config/opencode/opencode.json",
        &json!({
            "autoupdate": false,
            "share": "disabled",
            "model": format!("standin/{MODEL}"),
            "small_model": format!("standin/{MODEL}"),
            "provider": {"standin": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "standin",
                "options": {"baseURL": format!("{}/v1", run.base_url()), "apiKey": "dummy"},
                "models": {MODEL: {"name": MODEL, "limit": {"context": 200000, "output": 8192}}}
            }},
            "mcp": {"probe": {
                "type": "local",
                "command": std::iter::once(&run.server.command)
                    .chain(&run.server.args)
                    .collect::<Vec<_>>(),
                "enabled": true
            }},
            "permission": {"*": "allow"}
        }),
    )?;
    if let Some(seed) = seed_for(run.bin) {
        let folder = config.parent().expect("the config is in a folder");
        for name in ["package.json", "package-lock.json", "bun.lock"] {
            if seed.join(name).is_file() {
                fs::copy(seed.join(name), folder.join(name))?;
            }
        }
        if seed.join("node_modules").is_dir() {
            std::os::unix::fs::symlink(seed.join("node_modules"), folder.join("node_modules"))?;
        }
    }
    let off = |name| (name, "1".to_string());
    Ok(Launch {
        argv: vec![
            run.bin(),
            "run".into(),
            "--format".into(),
            "json".into(),
            run.prompt.into(),
        ],
        env: vec![
            off("OPENCODE_DISABLE_AUTOUPDATE"),
            off("OPENCODE_DISABLE_MODELS_FETCH"),
            off("OPENCODE_DISABLE_SHARE"),
            off("OPENCODE_DISABLE_DEFAULT_PLUGINS"),
            off("OPENCODE_DISABLE_LSP_DOWNLOAD"),
            off("OPENCODE_DISABLE_CLAUDE_CODE"),
            off("OPENCODE_DISABLE_EXTERNAL_SKILLS"),
            off("OPENCODE_PURE"),
        ],
    })
}

/// The seeded config folder beside the installed client (`CACHE/opencode/config`, the binary
/// being `CACHE/opencode/node_modules/.bin/opencode`), or in the clients cache.
fn seed_for(bin: &Path) -> Option<std::path::PathBuf> {
    let beside = bin
        .canonicalize()
        .ok()
        .and_then(|b| {
            b.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .map(Path::to_path_buf)
        })
        .or_else(|| {
            bin.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .map(Path::to_path_buf)
        })
        .and_then(|nm| nm.parent().map(|p| p.join("config")));
    beside
        .into_iter()
        .chain(super::clients_cache().map(|c| c.join("opencode/config")))
        .find(|d| d.join("node_modules").is_dir())
}
