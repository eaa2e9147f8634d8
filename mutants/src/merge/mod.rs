//! `mutants merge`: the outputs of `run --shard K/N` joined into the report one run would write.
//!
//! Each shard's `mutants.json` carries every row whole (verdict, counts, log path relative to
//! its folder), so merging is a union of rows put back in spec order, the logs copied beside
//! them, and every output rendered again from the union.
//!
//! A shard folder is outside input: it may come from another machine, or be crafted. So nothing
//! in it is trusted before it is checked, and every check happens before anything is opened,
//! copied or written:
//! - `mutants.json` is read strictly: every field present, of its type, none unknown (the whole
//!   value must serialize back to exactly what was read), or the merge is refused naming the
//!   file and the field.
//! - The shards must be one run split: the same spec, tool version, commit, tree and candidate,
//!   shard fields `K/N` with one N, each K once, none missing. A merged report that silently
//!   lacks a shard, or mixes two trees, would read as a complete run of one tree.
//! - Every log path must be `logs/NAME` (relative, one plain name, no `..`), lead to a regular
//!   file inside that shard's own `logs/` (no link anywhere on the way), and is copied to
//!   `OUT/logs/NAME` by a write-and-rename. Every output path passes the one output guard
//!   (`files::outputs`) first: a link, or a file no gatekit run recorded, where one would go is
//!   refused (exit 2) before anything is written. An `--out` that is one of the shard folders
//!   is refused, so a file can never be copied onto itself.
//! - The sources in `mutation-report.json` are kept only for files the shard's rows name.
//! - Each shard must be what a single run could have written (`check`): every verdict the one
//!   its own records give, counts that add up, and exactly its share of the spec (`--spec`, or
//!   the spec the shards name when it is here with the bytes they ran), each row the spec's
//!   mutant at its index.
//! - With `--allowed-signers`, each shard's signed statement must verify and name the sha256
//!   of the very `mutants.json` bytes merged (`signed`).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use cmdline::Exit;
use files::escape;
use report::{ColorChoice, Format};

use crate::record::RunReport;
use crate::render;

mod check;
mod join;
mod logs;
pub(crate) mod shard;
mod signed;

/// What `mutants merge` is given besides its shards: what the shards are checked against.
#[derive(Debug, Default)]
pub(crate) struct Against {
    /// `--spec`: the spec whose shares the shards must be.
    pub spec: Option<PathBuf>,
    /// `--allowed-signers`: every shard's statement must be signed by a key it lists.
    pub allowed_signers: Option<PathBuf>,
    /// `--sarif FILE`: the merged findings as SARIF too.
    pub sarif: Option<PathBuf>,
}

/// `mutants merge`: the shards read and checked, their logs copied, the merged report written
/// and printed.
pub(crate) fn merge(
    dirs: &[PathBuf],
    out: &Path,
    against: &Against,
    format: Format,
    color: ColorChoice,
) -> Result<Exit> {
    if let Some(allowed) = &against.allowed_signers {
        signed::check_allowed(allowed)?;
    }
    let mut shards: Vec<(PathBuf, RunReport)> = Vec::new();
    let mut signers = Vec::new();
    for dir in dirs {
        let path = dir.join("mutants.json");
        let bytes = crate::swap::read_regular(&path)
            .with_context(|| format!("{}: cannot read the shard's report", escape::path(&path)))?
            .bytes;
        // The signature first, over the bytes read once: what is verified is what is merged.
        if let Some(allowed) = &against.allowed_signers {
            signers.push((dir, signed::verify(dir, &bytes, allowed)?));
        }
        let report = shard::parse(&bytes)
            .map_err(|why| anyhow::anyhow!("{}: {why}", escape::path(&path)))?;
        shards.push((dir.clone(), report));
    }
    let merged = join::merge_reports(&shards)?;
    let (spec, unchecked) = match check::spec_for(against.spec.as_deref(), &shards)? {
        check::SpecFound::Spec(spec) => (Some(*spec), None),
        check::SpecFound::Missing(why) => (None, Some(why)),
    };
    check::shards(&shards, spec.as_ref())?;
    logs::refuse_out_among_shards(out, dirs)?;
    let copies = logs::plan_copies(&shards)?;
    let sources = shard::read_sources(&shards)?;

    let mut plan = files::outputs::Plan::new();
    for dir in dirs {
        plan.input("shard report", &dir.join("mutants.json"));
    }
    if let Some(spec) = &against.spec {
        plan.input("--spec", spec);
    }
    if let Some(allowed) = &against.allowed_signers {
        plan.input("--allowed-signers", allowed);
    }
    render::plan_outputs(&mut plan, out);
    render::plan_sarif(&mut plan, against.sarif.as_deref());
    for (_, name) in &copies {
        plan.file_in(out, &format!("logs/{name}"));
    }
    plan.check()?;
    // Said once every check passed, so a refusal stays the one line it is.
    if let Some(why) = unchecked {
        cmdline::errln!(
            "mutants: {why}: the shards were checked against each other, not against their spec (give --spec SPEC)"
        );
    }
    for (dir, principal) in &signers {
        cmdline::errln!(
            "mutants: {} signed by {}",
            escape::path(dir),
            escape::text(principal)
        );
    }

    let _lock = files::lock::OutLock::acquire(out)?;
    files::outputs::own(out)
        .with_context(|| format!("{}: cannot take the output folder", escape::path(out)))?;
    files::outputs::clear_previous(out)
        .with_context(|| format!("clearing {}", escape::path(out)))?;
    let logs = out.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", escape::path(&logs)))?;
    let meta = fs::symlink_metadata(&logs)?;
    if !meta.file_type().is_dir() {
        bail!(
            "{}: not a folder (a link or a file is in the way)",
            escape::path(&logs)
        );
    }
    for (from, name) in &copies {
        logs::copy_log(from, &logs, name)?;
    }
    render::write_all(&merged, &sources, out, against.sarif.as_deref())?;
    render::print(&merged, format, color)?;
    Ok(join::exit_of(&merged))
}
