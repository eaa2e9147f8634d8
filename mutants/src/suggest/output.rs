//! What `suggest` writes: the spec as TOML, and the same proposals as JSON for tools.
//!
//! The TOML is made by the `toml` crate from typed values, never by pasting text, so it is
//! valid whatever an anchor holds (quotes, backslashes, `'''`, newlines, control characters,
//! non-ASCII); and before it is shown it is read back and compared with what was meant, so a
//! spec that would read differently is never written. The opening comments (what it was made
//! for, the files skipped and why) are outside text made one line each
//! ([`files::escape::text`]), so no file name can end a comment and start a key.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::suites::SuiteTable;
use super::{Suggestion, UNDOES};

/// The spec as written: the one suite, then every entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpecOut {
    pub suites: BTreeMap<String, SuiteTable>,
    pub mutant: Vec<MutantOut>,
}

/// One `[[mutant]]` as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MutantOut {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    pub file: String,
    pub anchor: String,
    pub replace: String,
    pub undoes: String,
    pub suite: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
}

impl SpecOut {
    pub fn of(s: &Suggestion) -> SpecOut {
        SpecOut {
            suites: BTreeMap::from([(s.suite.name.clone(), s.suite.table.clone())]),
            mutant: s
                .entries
                .iter()
                .map(|e| MutantOut {
                    name: e.name.clone(),
                    site: e.site.clone(),
                    file: e.file.clone(),
                    anchor: e.anchor.clone(),
                    replace: e.replace.clone(),
                    undoes: UNDOES.to_string(),
                    suite: s.suite.name.clone(),
                    operator: e.operator.name().to_string(),
                    expect: e.control.then(|| "survive".to_string()),
                })
                .collect(),
        }
    }

    /// The TOML text of the spec after `comments` (one `# ` line each), read back and compared
    /// before it is returned.
    pub fn to_toml(&self, comments: &[String]) -> Result<String> {
        let mut text = String::new();
        for c in comments {
            text.push_str("# ");
            text.push_str(&files::escape::text(c));
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&toml::to_string(self)?);
        match toml::from_str::<SpecOut>(&text) {
            Ok(back) if &back == self => Ok(text),
            Ok(_) => bail!("the spec written would read back differently; nothing written"),
            Err(e) => bail!("the spec written would not read back ({e}); nothing written"),
        }
    }
}

/// The opening comments of the spec: what it was made for, what to do next, the suite's
/// origin, and every file skipped or proposal dropped, with why.
pub(crate) fn comments(s: &Suggestion, file: Option<&str>) -> Vec<String> {
    let mut c = vec![
        format!(
            "Proposed by `mutants suggest` for {}: {}, {}.",
            s.about,
            report::text::plural(s.mutants(), "mutant"),
            report::text::plural(s.controls(), "control")
        ),
        "Name the claim each mutant undoes in its `undoes` (they say TODO: until then), and"
            .to_string(),
        format!(
            "remove those that undo none; then: mutants check {0} && mutants run {0}",
            file.unwrap_or("SPEC")
        ),
    ];
    if s.suite.placeholder {
        c.push(format!(
            "Suite {:?}: write the command that runs your tests in its `run`; mutants run and",
            s.suite.name
        ));
        c.push("check refuse it while it says TODO:.".to_string());
    } else {
        c.push(format!("Suite {:?} from {}.", s.suite.name, s.suite.from));
    }
    for f in s.skipped() {
        c.push(format!(
            "Skipped {}: {}",
            f.file,
            f.skipped.as_deref().unwrap_or_default()
        ));
    }
    for f in s.files.iter().filter(|f| f.dropped > 0) {
        c.push(format!(
            "Dropped in {}: {} (the file no longer parsed after the swap)",
            f.file,
            report::text::plural(f.dropped, "proposal")
        ));
    }
    c
}

/// `suggest --json`: the proposals, each file's outcome, the suite and the counts.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct JsonOut {
    pub version: u32,
    pub mutants: Vec<JsonMutant>,
    pub files: Vec<JsonFile>,
    pub suites: BTreeMap<String, SuiteTable>,
    pub counts: JsonCounts,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct JsonMutant {
    pub name: String,
    pub site: Option<String>,
    pub file: String,
    pub line: usize,
    pub anchor: String,
    pub replace: String,
    pub operator: String,
    pub description: String,
    pub undoes: String,
    pub suite: String,
    pub expect: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct JsonFile {
    pub file: String,
    pub language: Option<&'static str>,
    pub proposed: usize,
    pub dropped: usize,
    pub skipped: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct JsonCounts {
    pub files: usize,
    pub proposed: usize,
    pub controls: usize,
    pub dropped: usize,
    pub skipped: usize,
}

impl JsonOut {
    pub fn of(s: &Suggestion) -> JsonOut {
        JsonOut {
            version: 1,
            mutants: s
                .entries
                .iter()
                .map(|e| JsonMutant {
                    name: e.name.clone(),
                    site: e.site.clone(),
                    file: e.file.clone(),
                    line: e.line,
                    anchor: e.anchor.clone(),
                    replace: e.replace.clone(),
                    operator: e.operator.name().to_string(),
                    description: e.description.clone(),
                    undoes: UNDOES.to_string(),
                    suite: s.suite.name.clone(),
                    expect: if e.control { "survive" } else { "kill" },
                })
                .collect(),
            files: s
                .files
                .iter()
                .map(|f| JsonFile {
                    file: f.file.clone(),
                    language: f.language.map(syntax::Language::name),
                    proposed: f.proposed,
                    dropped: f.dropped,
                    skipped: f.skipped.clone(),
                })
                .collect(),
            suites: BTreeMap::from([(s.suite.name.clone(), s.suite.table.clone())]),
            counts: JsonCounts {
                files: s.files.len(),
                proposed: s.mutants(),
                controls: s.controls(),
                dropped: s.files.iter().map(|f| f.dropped).sum(),
                skipped: s.skipped().count(),
            },
        }
    }

    pub fn to_text(&self) -> Result<String> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }
}
