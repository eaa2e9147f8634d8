//! `gate pack`: the staged changes as a candidate (a patch and its manifest).

use std::io::Write as _;
use std::path::Path;

use anyhow::Result;

use cmdline::outln;
use cmdline::Exit;
use files::escape::path as esc_path;
use report::text::plural;

use candidate::git::Git;
use candidate::{checkout, pack};

pub(super) fn cmd_pack(repo: &Git, base: &str, out: &Path, paths: &[String]) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    checkout::clean_stale();
    let packed = pack::pack(repo, base, out, paths)?;
    if files::interrupt::requested() {
        // pack never writes after an interrupt (it checks before its one write of the pair);
        // one that came after the write leaves a whole candidate, and the exit says so.
        let _ = writeln!(
            std::io::stderr(),
            "gate: interrupted (after the candidate was written)"
        );
        return Ok(Exit::Interrupted);
    }
    outln!(
        "patch     {}  sha256 {}",
        esc_path(&packed.patch),
        packed.patch_sha256
    )?;
    let mut notes = Vec::new();
    if packed.deleted > 0 {
        notes.push(format!(
            "{} deleted: no line, apply checks they are gone",
            plural(packed.deleted, "path")
        ));
    }
    if packed.submodules > 0 {
        notes.push(format!(
            "{}: no line, bound by the tree id",
            plural(packed.submodules, "submodule bump")
        ));
    }
    outln!(
        "manifest  {}  {}{}",
        esc_path(&packed.manifest),
        plural(packed.entries, "path"),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        }
    )?;
    outln!("base      {}", packed.base)?;
    for l in &packed.left_out {
        let dir = if l.dir.is_empty() { "./" } else { &l.dir };
        outln!(
            "left out {}: staged, but {} (not part of the candidate)",
            files::escape::text(dir),
            l.why
        )?;
    }
    Ok(Exit::Ok)
}
