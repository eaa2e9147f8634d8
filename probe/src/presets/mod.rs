//! The presets: how each agent CLI that probe knows is run headless and offline against the
//! model stand-in, one module per client.
//!
//! A preset says which stand-in API its client speaks, writes the client's config into a scratch
//! HOME (updates, telemetry, plugins and feature-flag fetches off: the only connection the
//! client makes is to the stand-in on 127.0.0.1), and gives its environment and argv. The facts
//! behind each one were measured on the pinned version; they change between versions, so each
//! preset names the version it was written against. The driver (`bracket::driver`) runs the
//! client with exactly this environment and nothing of ours but PATH.
//!
//! Presets are data below the code that uses them: they never import `bracket`, `check` or the
//! `probe clients` command (the `clients` module), which all read them.

mod claude;
mod cline;
mod codex;
mod r#continue;
mod copilot;
mod gemini;
mod opencode;
mod qwen;

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) use standin::Api;

/// A client probe has a preset for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Preset {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Opencode,
    Cline,
    Copilot,
    Continue,
}

impl Preset {
    pub(crate) const ALL: [Preset; 8] = [
        Preset::Claude,
        Preset::Codex,
        Preset::Gemini,
        Preset::Qwen,
        Preset::Opencode,
        Preset::Cline,
        Preset::Copilot,
        Preset::Continue,
    ];

    pub(crate) fn parse(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    pub(crate) fn name(self) -> &'static str {
        self.spec().name
    }

    /// What the preset knows about its client.
    pub(crate) fn spec(self) -> &'static Spec {
        match self {
            Preset::Claude => &claude::SPEC,
            Preset::Codex => &codex::SPEC,
            Preset::Gemini => &gemini::SPEC,
            Preset::Qwen => &qwen::SPEC,
            Preset::Opencode => &opencode::SPEC,
            Preset::Cline => &cline::SPEC,
            Preset::Copilot => &copilot::SPEC,
            Preset::Continue => &r#continue::SPEC,
        }
    }

    /// Writes the client's config into the run's scratch HOME and says how to start it.
    pub(crate) fn launch(self, run: &Run) -> io::Result<Launch> {
        match self {
            Preset::Claude => claude::launch(run),
            Preset::Codex => codex::launch(run),
            Preset::Gemini => gemini::launch(run),
            Preset::Qwen => qwen::launch(run),
            Preset::Opencode => opencode::launch(run),
            Preset::Cline => cline::launch(run),
            Preset::Copilot => copilot::launch(run),
            Preset::Continue => r#continue::launch(run),
        }
    }

    /// The client's executable when no `--bin` names one: the folder `install-clients.sh`
    /// installs it into (and, for Claude, `install-claude.sh`'s older folder), else PATH, else
    /// the bare name (whose failure to start then says how to install it).
    pub(crate) fn find_bin(self) -> PathBuf {
        let spec = self.spec();
        let cached = clients_cache()
            .into_iter()
            .map(|c| c.join(spec.name))
            .chain(
                (self == Preset::Claude)
                    .then(|| home().map(|h| h.join(".cache/gatekit/claude")))
                    .flatten(),
            )
            .map(|d| d.join("node_modules/.bin").join(spec.bin));
        let on_path = std::env::var_os("PATH")
            .map(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join(spec.bin))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        cached
            .chain(on_path)
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(spec.bin))
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The facts a preset states about its client.
#[derive(Debug)]
pub(crate) struct Spec {
    /// The `--client` word, and the folder under the clients cache.
    pub name: &'static str,
    /// The executable's name.
    pub bin: &'static str,
    /// The npm package `install-clients.sh` installs.
    pub package: &'static str,
    /// The version the preset was written against.
    pub version: &'static str,
    pub api: Api,
    /// The model slug the client is configured with, when the client's behaviour depends on it
    /// (Codex's limit does): it is part of what is measured.
    pub model: Option<&'static str>,
    /// Words with which the client says it saved a result to a file, as regex sources.
    pub spill_patterns: &'static [&'static str],
}

/// `$GATEKIT_CLIENTS_CACHE`, else `~/.cache/gatekit/clients`: where install-clients.sh puts
/// each client (`NAME/node_modules/.bin/BIN`).
pub(crate) fn clients_cache() -> Option<PathBuf> {
    std::env::var_os("GATEKIT_CLIENTS_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".cache/gatekit/clients")))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The command that starts `probe serve --log LOG` (`bracket::driver` knows how this binary
/// answers to it, umbrella or not).
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub command: String,
    pub args: Vec<String>,
}

/// One run of a client: where it runs and what it is asked.
#[derive(Debug)]
pub(crate) struct Run<'a> {
    pub bin: &'a Path,
    /// The scratch HOME (removed after the run; the client runs in its `work` folder).
    pub home: &'a Path,
    /// The stand-in's loopback port.
    pub port: u16,
    pub server: &'a Server,
    /// The generic MCP config (`{"mcpServers": {"probe": ...}}`) the driver wrote.
    pub mcp_config: &'a Path,
    pub prompt: &'a str,
}

impl Run<'_> {
    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Writes `value` as JSON to `rel` under HOME, making its folders.
    pub(crate) fn write_json(&self, rel: &str, value: &serde_json::Value) -> io::Result<PathBuf> {
        let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        self.write(rel, &text)
    }

    /// Writes `text` to `rel` under HOME, making its folders.
    pub(crate) fn write(&self, rel: &str, text: &str) -> io::Result<PathBuf> {
        let path = self.home.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, text)?;
        Ok(path)
    }

    /// The bin as a string for argv.
    pub(crate) fn bin(&self) -> String {
        self.bin.display().to_string()
    }
}

/// How to start the client for one run: argv and the environment on top of PATH, HOME and TERM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    pub argv: Vec<String>,
    pub env: Vec<(&'static str, String)>,
}

/// The prompt every preset sends: the stand-in reads n (and fill) from it
/// (`model::turn::emit_inputs`).
/// Several ns ask for as many calls at once, in one turn.
pub(crate) fn prompt(ns: &[u64], fill: mcp::emit::Fill) -> String {
    let list: Vec<String> = ns.iter().map(u64::to_string).collect();
    match ns.len() {
        1 => format!(
            "Call the emit tool once with PROBE n={} fill={fill}, then reply done.",
            list[0]
        ),
        k => format!(
            "Call the emit tool {k} times at once, in parallel, one call for each n, with PROBE \
             n={} fill={fill}, then reply done.",
            list.join(",")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::emit::Fill;

    fn run_in<'a>(home: &'a Path, server: &'a Server, config: &'a Path) -> Run<'a> {
        Run {
            bin: Path::new("/opt/client"),
            home,
            port: 4321,
            server,
            mcp_config: config,
            prompt: "Call the emit tool once with PROBE n=7 fill=ascii, then reply done.",
        }
    }

    #[test]
    fn every_preset_parses_from_its_name_and_points_its_client_at_the_stand_in_only() {
        let server = Server {
            command: "/bin/probe".into(),
            args: vec!["serve".into(), "--log".into(), "/tmp/serve.log".into()],
        };
        let url = regex::Regex::new(r#"[a-z]+://[^"'\s]*"#).unwrap();
        for preset in Preset::ALL {
            let home = tempfile::tempdir().unwrap();
            let config = home.path().join("mcp.json");
            assert_eq!(Preset::parse(preset.name()), Some(preset));
            let launch = preset
                .launch(&run_in(home.path(), &server, &config))
                .unwrap();
            assert_eq!(launch.argv[0], "/opt/client", "{preset}");
            assert!(
                launch.argv.iter().any(|a| a.contains("PROBE n=7")),
                "{preset}: the prompt is in argv"
            );
            // Every URL the client is given, in its env or its files, is the stand-in's.
            let mut written = String::new();
            // (opencode's seeded npm manifest and lockfile name the registry: not its config.)
            for entry in walk(home.path())
                .into_iter()
                .filter(|p| !p.ends_with("package-lock.json") && !p.ends_with("package.json"))
            {
                written.push_str(&fs::read_to_string(entry).unwrap_or_default());
            }
            for (_, v) in &launch.env {
                written.push_str(v);
                written.push('\n');
            }
            let urls: Vec<&str> = url.find_iter(&written).map(|m| m.as_str()).collect();
            assert!(!urls.is_empty(), "{preset} is given the stand-in's URL");
            for u in urls {
                assert!(u.starts_with("http://127.0.0.1:4321"), "{preset}: {u}");
            }
        }
        assert_eq!(Preset::parse("claude-code"), None);
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_symlink() {
                continue;
            }
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn the_prompt_names_n_and_the_fill_as_the_stand_in_reads_them() {
        // The stand-in takes the last `n=` and `fill=` words of the prompt.
        let p = prompt(&[50_001], Fill::Astral);
        assert!(p.contains(" n=50001 fill=astral,"), "{p}");
        assert_eq!(p.matches("n=").count(), 1, "{p}");
        let p = prompt(&[4, 3, 3], Fill::Ascii);
        let inputs = standin::emit_inputs(&p).unwrap();
        assert_eq!(
            inputs.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            [4, 3, 3],
            "{p}"
        );
    }
}
