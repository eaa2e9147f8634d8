//! Checks done by real consumers from PyPI (junitparser, jsonschema, PyYAML) through python3,
//! each skipped with a notice when the consumer is missing outside CI and a failure under CI.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::workspace;

/// Runs a Python script that prints JSON, for checks done by real consumers from PyPI
/// (junitparser, jsonschema, PyYAML). `None`, after a notice, when python3 or the module the
/// script imports (the script exits 3) is missing outside CI; a panic when missing under CI
/// (`CI` set), where a check that silently checks nothing would hide a broken report.
pub fn python_json(what: &str, script: &str, args: &[&Path]) -> Option<serde_json::Value> {
    let out = match Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            crate::skip(
                "python3",
                &format!("python3 could not run ({e}), so {what} was not checked"),
            );
            return None;
        }
    };
    if out.status.code() == Some(3) {
        crate::skip(
            "python-modules",
            &format!(
                "the Python module for {what} is not installed \
                 (python3 -m pip install junitparser jsonschema pyyaml)"
            ),
        );
        return None;
    }
    assert!(
        out.status.success(),
        "{what}: python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the script prints JSON"))
}

const VALIDATE: &str = r#"
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit(3)
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
instance = json.load(open(sys.argv[2]))
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
print(json.dumps({"errors": sorted(e.message for e in v.iter_errors(instance))}))
"#;

/// The errors of `instance` against `docs/schema/SCHEMA` (draft 2020-12, formats checked), by
/// the real `jsonschema` from PyPI; `None` when skipped (see [`python_json`]).
pub fn schema_errors(schema: &str, instance: &serde_json::Value) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("instance.json");
    fs::write(&path, serde_json::to_string_pretty(instance).expect("JSON")).expect("write");
    let schema = workspace().join("docs/schema").join(schema);
    let v = python_json(
        "JSON Schema validation (jsonschema)",
        VALIDATE,
        &[&schema, &path],
    )?;
    Some(
        v["errors"]
            .as_array()
            .expect("a list of errors")
            .iter()
            .map(|e| e.as_str().unwrap_or_default().to_string())
            .collect(),
    )
}

/// Prints junitparser's reading of a JUnit file as JSON: the totals, each suite with its cases,
/// and every case again in one flat list naming its suite.
const READ_JUNIT: &str = r#"
import json, sys
try:
    from junitparser import JUnitXml
except ImportError:
    sys.exit(3)
xml = JUnitXml.fromfile(sys.argv[1])
out = {"name": xml.name, "tests": xml.tests, "failures": xml.failures, "errors": xml.errors,
       "skipped": xml.skipped, "suites": [], "cases": []}
for suite in xml:
    s = {"name": suite.name, "tests": suite.tests, "failures": suite.failures,
         "errors": suite.errors, "skipped": suite.skipped, "time": suite.time,
         "timestamp": suite.timestamp, "cases": []}
    for case in suite:
        c = {"name": case.name, "classname": case.classname, "time": case.time,
             "system_out": case.system_out,
             "results": [{"kind": type(r).__name__, "message": r.message, "type": r.type,
                          "text": r.text} for r in case.result]}
        s["cases"].append(c)
        out["cases"].append(dict(c, suite=suite.name))
    out["suites"].append(s)
print(json.dumps(out))
"#;

/// junitparser's reading of the JUnit file at `path` (see [`python_json`] for when it skips):
/// `tests`, `failures`, `errors`, `skipped`, `suites` (each with its `cases`) and `cases` (all
/// of them, each naming its `suite`); a case's `results` list its failure, error or skip.
pub fn junit(path: &Path) -> Option<serde_json::Value> {
    python_json("the JUnit file (junitparser)", READ_JUNIT, &[path])
}
