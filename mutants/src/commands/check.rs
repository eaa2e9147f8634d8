//! `mutants check` and `mutants list`: each anchor looked for in DIR's files as they are
//! (uncommitted edits included, as a run would see them), without running anything.
//!
//! A file is found under the rule `run` uses ([`crate::swap::file_in`]): one that leads out of
//! the tree through a link, or is not a regular file, is a spec error (exit 2), never read.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use cmdline::Exit;

use crate::anchor::{self, Found};
use crate::checkout::open_repo;
use crate::spec::{Mutant, Spec};

/// `mutants check`: exits 1 when any anchor does not occur exactly once.
pub(super) fn check(spec_path: &Path, dir: Option<PathBuf>, json: bool) -> Result<Exit> {
    let (spec, found) = look(spec_path, dir)?;
    let mut table = report::Table::new(["Mutant", "File", "Matches"]);
    let mut rows = Vec::new();
    let mut bad = 0;
    let mut complaints = Vec::new();
    for (m, found) in spec.mutants.iter().zip(&found) {
        let count = found.as_ref().map(|f| match f {
            Found::Once(_) => 1,
            Found::Not(n) => *n,
        });
        let shown = count.map_or_else(|| "file missing".to_string(), |n| n.to_string());
        if count != Some(1) {
            bad += 1;
            let file = files::escape::text(&m.file);
            let what = match count {
                Some(n) => format!("occurs {n} times in {file}"),
                None => format!("cannot be looked for: {file} is missing"),
            };
            complaints.push(format!(
                "{}:{}: anchor of {:?} {what} (it must occur exactly once)",
                files::escape::path(&spec.file),
                m.line,
                m.name
            ));
        }
        table.row([m.name.clone(), m.file.clone(), shown]);
        rows.push(serde_json::json!({
            "name": m.name, "file": m.file, "line": m.line, "matches": count,
        }));
    }
    for c in complaints {
        cmdline::errln!("{c}");
    }
    if json {
        print_json(serde_json::json!({
            "spec": spec.file.display().to_string(), "mutants": rows, "bad": bad,
        }))?;
    } else {
        let mut text = table.render_text();
        text.push_str(&format!(
            "{} anchors, {}\n",
            spec.mutants.len(),
            if bad == 0 {
                "each found exactly once".to_string()
            } else {
                format!("{bad} not found exactly once")
            }
        ));
        cmdline::exit::print(&text)?;
    }
    Ok(Exit::from_held(bad == 0))
}

/// `mutants list`: each mutant with the lines its anchor spans in DIR's file (`12` or
/// `12-14`), or why it has none. Exits 0: a listing is not a check (bad input still exits 2).
pub(super) fn list(spec_path: &Path, dir: Option<PathBuf>, json: bool) -> Result<Exit> {
    let (spec, found) = look(spec_path, dir)?;
    let mut table = report::Table::new(["Mutant", "File", "Lines", "Suite"]);
    let mut rows = Vec::new();
    for (m, found) in spec.mutants.iter().zip(&found) {
        let (lines, span) = match found {
            None => ("file missing".to_string(), None),
            Some(Found::Once(s)) if s.start_line == s.end_line => {
                (s.start_line.to_string(), Some(s))
            }
            Some(Found::Once(s)) => (format!("{}-{}", s.start_line, s.end_line), Some(s)),
            Some(Found::Not(n)) => (format!("{n} matches"), None),
        };
        table.row([m.name.clone(), m.file.clone(), lines, m.suite.clone()]);
        rows.push(serde_json::json!({
            "name": m.name, "file": m.file, "line": m.line, "suite": m.suite,
            "control": m.is_control(),
            "start_line": span.map(|s| s.start_line), "end_line": span.map(|s| s.end_line),
        }));
    }
    if json {
        print_json(serde_json::json!({
            "spec": spec.file.display().to_string(), "mutants": rows,
        }))?;
    } else {
        cmdline::exit::print(&table.render_text())?;
    }
    Ok(Exit::Ok)
}

/// The spec, and each mutant's anchor looked for in its file in DIR (`None`: no file there).
fn look(spec_path: &Path, dir: Option<PathBuf>) -> Result<(Spec, Vec<Option<Found>>)> {
    let spec = Spec::load(spec_path)?;
    let repo = open_repo(dir)?;
    let mut found = Vec::new();
    for m in &spec.mutants {
        found.push(match spec_file(&spec, m, repo.dir())? {
            Some(path) => {
                let bytes = crate::swap::read_regular(&path)
                    .with_context(|| format!("reading {}", files::escape::path(&path)))?
                    .bytes;
                Some(anchor::find_anchor(&bytes, m.anchor.as_bytes()))
            }
            None => None,
        });
    }
    Ok((spec, found))
}

/// Pretty JSON on stdout, with a final newline.
fn print_json(value: serde_json::Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(&value)?;
    text.push('\n');
    cmdline::exit::print(&text)?;
    Ok(())
}

/// The mutant's file in `root` under the one path rule, `None` when nothing is there at all;
/// anything else the rule refuses (a link out of the tree, a folder) is a spec error at the
/// mutant's line.
fn spec_file(spec: &Spec, m: &Mutant, root: &Path) -> Result<Option<PathBuf>> {
    if fs::symlink_metadata(root.join(&m.file))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Ok(None);
    }
    crate::swap::file_in(root, &m.file)
        .map(Some)
        .map_err(|e| spec.error_at(m.line, format!("{e:#}")).into())
}
