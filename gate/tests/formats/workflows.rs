//! The workflow files parsed as YAML, with every gate and probe command in their scripts
//! checked against the real command lines.

use std::process::Command;

use crate::common::{gate, stdout};
use serde_json::Value;
use testkit::{python_json, workspace};

/// Every `run:` step of every workflow, as `[{"file", "job", "run"}]`; exit 3 without PyYAML.
pub const WORKFLOW_STEPS: &str = r#"
import glob, json, os, sys
try:
    import yaml
except ImportError:
    sys.exit(3)
steps = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.yml"))):
    doc = yaml.safe_load(open(path))
    assert isinstance(doc.get("jobs"), dict), path + ": no jobs"
    for job, spec in doc["jobs"].items():
        assert "runs-on" in spec and spec.get("steps"), path + ": job " + job
        for step in spec["steps"]:
            assert "uses" in step or "run" in step, path + ": a step with neither uses nor run"
            if "run" in step:
                steps.append({"file": os.path.basename(path), "job": job, "run": step["run"]})
print(json.dumps(steps))
"#;

/// The `TOOL SUB --flag ...` invocations in a shell script: (subcommand, flags), continuation
/// lines joined and heredoc bodies skipped.
fn invocations(script: &str, tool: &str) -> Vec<(String, Vec<String>)> {
    let joined = script.replace("\\\n", " ");
    let mut found = Vec::new();
    let mut heredoc: Option<String> = None;
    for line in joined.lines() {
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        if let Some((_, rest)) = line.split_once("<<") {
            heredoc = Some(rest.trim().trim_matches(['\'', '"', '-']).to_string());
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        for (i, t) in tokens.iter().enumerate() {
            let starts_command = i == 0
                || tokens[i - 1].ends_with(';')
                || ["|", "&&", "||", "then", "do"].contains(&tokens[i - 1]);
            if *t != tool || !starts_command || i + 1 >= tokens.len() {
                continue;
            }
            let args: Vec<&str> = tokens[i + 1..]
                .iter()
                .take_while(|a| !["|", ";", "&&", "||", ">", ">>", "<"].contains(a))
                .copied()
                .collect();
            let flags = args
                .iter()
                .filter(|a| a.starts_with("--"))
                .map(|a| a.split('=').next().unwrap().to_string())
                .collect();
            found.push((args[0].to_string(), flags));
        }
    }
    found
}

/// The workflows' `run:` scripts; `None` (after a notice) without PyYAML outside CI.
pub fn workflow_steps() -> Option<Vec<Value>> {
    let dir = workspace().join(".github/workflows");
    let steps = python_json("the workflow YAML (PyYAML)", WORKFLOW_STEPS, &[&dir])?;
    Some(steps.as_array().unwrap().clone())
}

#[test]
fn the_workflows_parse_their_scripts_parse_and_every_gate_command_in_them_exists() {
    let Some(steps) = workflow_steps() else {
        return;
    };
    let files: std::collections::BTreeSet<&str> =
        steps.iter().map(|s| s["file"].as_str().unwrap()).collect();
    for recipe in ["ci.yml", "gate-candidate.yml", "probe-check.yml"] {
        assert!(files.contains(recipe), "no {recipe} among {files:?}");
    }
    let mut gate_calls = 0;
    for step in &steps {
        let script = step["run"].as_str().unwrap();
        let check = Command::new("bash")
            .args(["-n", "-c", script])
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{} ({}): bash -n: {}\n{script}",
            step["file"],
            step["job"],
            String::from_utf8_lossy(&check.stderr)
        );
        for word in script.split_whitespace() {
            // Scripts and crates named in the repository must be there.
            if word.starts_with("scripts/") || word.starts_with(".ci/") {
                assert!(
                    workspace().join(word).is_file(),
                    "{word} is not in the repo"
                );
            }
        }
        for (sub, flags) in invocations(script, "gate") {
            gate_calls += 1;
            let help = gate().args([sub.as_str(), "--help"]).output().unwrap();
            assert!(help.status.success(), "gate {sub} does not exist");
            let help = stdout(&help);
            for flag in flags {
                assert!(
                    help.contains(&flag),
                    "gate {sub} has no {flag} ({})",
                    step["file"]
                );
            }
        }
    }
    assert!(gate_calls >= 2, "the candidate recipe packs and runs");
    let ci = steps.iter().find(|s| s["file"] == "ci.yml").unwrap();
    assert!(ci["run"].as_str().unwrap().contains(".ci/run"));
}

#[test]
fn invocations_are_found_with_their_flags_and_heredocs_are_skipped() {
    let script = "gate pack --base \"$b\" --out x\ncat > f <<TOML\ngate = 1\nTOML\nset +e; gate run --config c \\\n  --junit j > md";
    assert_eq!(
        invocations(script, "gate"),
        vec![
            (
                "pack".to_string(),
                vec!["--base".to_string(), "--out".to_string()]
            ),
            (
                "run".to_string(),
                vec!["--config".to_string(), "--junit".to_string()]
            ),
        ]
    );
}
