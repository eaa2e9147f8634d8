//! SARIF 2.1.0 (OASIS), the subset GitHub code scanning reads: one log, one run, the tool with
//! its rules, and results that each point at a file and a region.
//!
//! Typed, so a tool fills values and never writes the format's text itself; what a result must
//! carry for GitHub to take the file at all is in the types, not left to each caller: every
//! result has a message and exactly one location with a file URI relative to the repository
//! root (`%SRCROOT%`), and a region always has its `startLine` (GitHub rejects the whole file
//! when one result has no physical location, or a region without a line). Lines and columns are
//! 1-based; columns count characters (`columnKind` `unicodeCodePoints`) and a region's end column
//! is the one just past its last character, as the standard says.

use std::collections::BTreeMap;

use serde::Serialize;

/// The schema a log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base every result's file URI is relative to: the repository's root.
pub const SRCROOT: &str = "%SRCROOT%";

/// A SARIF log of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run; 1],
}

impl Log {
    /// The log of `run`.
    pub fn new(run: Run) -> Log {
        Log {
            schema: SCHEMA,
            version: "2.1.0",
            runs: [run],
        }
    }

    /// The log as pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// One run of a tool: its rules, its results and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    tool: Tool,
    invocations: [Invocation; 1],
    column_kind: &'static str,
    results: Vec<Result>,
}

impl Run {
    /// A run of tool `name` at `version`, with its `rules`; each result names one by index.
    pub fn new(name: &str, version: &str, rules: Vec<Rule>, invocation: Invocation) -> Run {
        Run {
            tool: Tool {
                driver: Driver {
                    name: name.to_string(),
                    version: version.to_string(),
                    semantic_version: version.to_string(),
                    rules,
                },
            },
            invocations: [invocation],
            column_kind: "unicodeCodePoints",
            results: Vec::new(),
        }
    }

    /// Adds a result of the rule `rule_id`: its index among the run's rules is looked up here,
    /// so a result can never name a rule the run does not define (`None` when it names none).
    pub fn push(&mut self, mut result: Result) -> Option<()> {
        let index = self
            .tool
            .driver
            .rules
            .iter()
            .position(|r| r.id == result.rule_id)?;
        result.rule_index = index;
        self.results.push(result);
        Some(())
    }

    /// The results so far.
    pub fn results(&self) -> &[Result] {
        &self.results
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: String,
    version: String,
    semantic_version: String,
    rules: Vec<Rule>,
}

/// A kind of result (SARIF's `reportingDescriptor`): GitHub shows its descriptions at the top of
/// each alert and matches alerts across runs by its `id`, so the id must never change.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: String,
    /// PascalCase, as SARIF's examples name rules.
    pub name: String,
    pub short_description: Text,
    pub full_description: Text,
    pub help: Text,
    pub default_configuration: Configuration,
    pub properties: RuleProperties,
}

/// A rule's default level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Configuration {
    pub level: Level,
}

/// A rule's tags (GitHub shows them as labels on the alert).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleProperties {
    pub tags: Vec<String>,
}

/// Plain text (SARIF's `message` and `multiformatMessageString`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Text {
    pub text: String,
}

impl Text {
    pub fn new(text: impl Into<String>) -> Text {
        Text { text: text.into() }
    }
}

/// How serious a result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

/// How the tool's run ended, and what stopped it from judging anything.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    /// The run reached its end (findings or not); false when it was cut short or stopped by a
    /// precondition.
    pub execution_successful: bool,
    pub exit_code: i32,
    /// One line each: why the run judged nothing, or was cut short.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_execution_notifications: Vec<Notification>,
}

/// A note on the run itself (not on a file).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Notification {
    pub level: Level,
    pub message: Text,
}

/// One finding at one place.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Result {
    rule_id: String,
    rule_index: usize,
    level: Level,
    message: Text,
    locations: [Location; 1],
    partial_fingerprints: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    properties: BTreeMap<String, serde_json::Value>,
}

impl Result {
    /// A result of rule `rule_id` at `file` (relative to the repository root, with `/`) and
    /// `region`, saying `message`. `fingerprint` is a stable identity of what it reports, the
    /// same in every run that reports it (GitHub matches alerts across runs by it), kept under
    /// `key` (`NAME/vN`).
    pub fn new(
        rule_id: &str,
        level: Level,
        message: String,
        file: &str,
        region: Region,
        (key, fingerprint): (&str, String),
    ) -> Result {
        Result {
            rule_id: rule_id.to_string(),
            rule_index: 0,
            level,
            message: Text::new(message),
            locations: [Location {
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation {
                        uri: uri_path(file),
                        uri_base_id: SRCROOT,
                    },
                    region,
                },
            }],
            partial_fingerprints: BTreeMap::from([(key.to_string(), fingerprint)]),
            properties: BTreeMap::new(),
        }
    }

    /// A property of the result, for tools that read more than GitHub shows.
    pub fn property(mut self, key: &str, value: serde_json::Value) -> Result {
        self.properties.insert(key.to_string(), value);
        self
    }

    pub fn rule_id(&self) -> &str {
        &self.rule_id
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

/// Where in the file: 1-based lines, columns in characters, the end column just past the last
/// character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

impl Region {
    /// The file's first line: for a result that has no single place in the file.
    pub fn first_line() -> Region {
        Region {
            start_line: 1,
            start_column: 1,
            end_line: 1,
            end_column: 1,
        }
    }
}

/// A relative path as a URI reference (RFC 3986): `/` kept, every byte outside the unreserved
/// set and the few sub-delimiters a path may hold percent-encoded, so a space, `%`, `#` or `?`
/// in a file name stays part of the path.
pub fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str) -> Rule {
        Rule {
            id: id.into(),
            name: "Survived".into(),
            short_description: Text::new("s"),
            full_description: Text::new("f"),
            help: Text::new("h"),
            default_configuration: Configuration {
                level: Level::Error,
            },
            properties: RuleProperties { tags: vec![] },
        }
    }

    #[test]
    fn a_result_names_its_rules_index_and_a_file_relative_to_the_root() {
        let invocation = Invocation {
            execution_successful: true,
            exit_code: 1,
            tool_execution_notifications: vec![],
        };
        let mut run = Run::new("t", "1.0.0", vec![rule("a"), rule("b")], invocation);
        let region = Region {
            start_line: 3,
            start_column: 2,
            end_line: 4,
            end_column: 1,
        };
        let r = Result::new(
            "b",
            Level::Note,
            "m".into(),
            "src/a b#1%.rs",
            region,
            ("k/v1", "f".into()),
        );
        assert_eq!(run.push(r.clone()), Some(()));
        assert_eq!(
            run.push(Result::new(
                "zz",
                Level::Note,
                "m".into(),
                "x",
                region,
                ("k", "f".into())
            )),
            None
        );
        let v = serde_json::to_value(Log::new(run)).unwrap();
        let result = &v["runs"][0]["results"][0];
        assert_eq!(result["ruleIndex"], 1);
        assert_eq!(result["level"], "note");
        let loc = &result["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "src/a%20b%231%25.rs");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(loc["region"]["startLine"], 3);
        assert_eq!(loc["region"]["endColumn"], 1);
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 1);
        assert_eq!(uri_path("naïve.rs"), "na%C3%AFve.rs");
    }
}
