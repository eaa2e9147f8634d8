//! `mutants.json`: the record ([`RunReport`]) serialized, pretty, with a final newline.
//!
//! It is what `merge` and an `--only` rerun read back, strictly, into the record types, so
//! it holds every field of the record and nothing else; `--format json` prints the same text.

use anyhow::{Context, Result};

use crate::record::RunReport;

/// The report as `mutants.json` holds it.
pub(crate) fn render(report: &RunReport) -> Result<String> {
    let mut text = serde_json::to_string_pretty(report).context("encoding mutants.json")?;
    text.push('\n');
    Ok(text)
}
