//! `gate check` and `gate hash`: `sha256sum -c` and `sha256sum` with gatekit's path rules.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use cmdline::outln;
use cmdline::Exit;
use files::escape::path as esc_path;
use report::Timestamp;

use super::finished;
use candidate::apply;

/// What `gate check` prints: every line, only what is not OK (`--quiet`), or nothing
/// (`--status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Show {
    All,
    Problems,
    Nothing,
}

/// `gate hash PATH...`: `sha256sum PATH...` with gatekit's path rules (relative, no `..`, no
/// link out of the current folder) and parallel hashing; the lines go to stdout.
pub(super) fn cmd_hash(paths: &[PathBuf], tag: bool) -> Result<Exit> {
    use std::os::unix::ffi::OsStrExt;
    let names: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .collect();
    let manifest = manifests::manifest_for(Path::new("."), &names)?;
    let entries: Vec<manifests::Entry> = manifest
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if tag {
                e.form = manifests::Form::Tagged;
            }
            e
        })
        .collect();
    let bytes = manifests::write(&entries);
    finished(
        cmdline::exit::print_bytes(&bytes).map_err(Into::into),
        Exit::Ok,
    )
}

pub(super) fn cmd_check(
    manifest: &Path,
    dir: &Path,
    json: bool,
    show: Show,
    ignore_missing: bool,
) -> Result<Exit> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!(
            "{}: not a folder (the folder the manifest's paths are relative to)",
            esc_path(dir)
        ),
        Err(e) => return Err(e).with_context(|| format!("{}: the folder to check", esc_path(dir))),
    }
    let parsed = if manifest == Path::new("-") {
        let bytes =
            files::input::read_stdin().context("reading the manifest from standard input")?;
        apply::parse_manifest(&bytes, "standard input")?
    } else {
        apply::read_manifest(manifest)?
    };
    let mut verification =
        manifests::verify_owned(dir, parsed).with_context(|| format!("{}", manifest.display()))?;
    let mut ignored = 0;
    if ignore_missing {
        let before = verification.entries.len();
        verification
            .entries
            .retain(|e| e.status != manifests::Status::Missing);
        ignored = before - verification.entries.len();
        if verification.entries.is_empty() {
            cmdline::errln!(
                "gate: {}: no file was verified ({ignored} missing, ignored)",
                esc_path(manifest)
            );
            return Ok(Exit::Findings);
        }
    }
    let print = || -> Result<()> {
        if json {
            #[derive(serde::Serialize)]
            struct Checked<'a> {
                manifest: String,
                result: &'a manifests::Verification,
            }
            let body = Checked {
                manifest: manifest.display().to_string(),
                result: &verification,
            };
            crate::json::print("check", Some(Timestamp::now()), &body)?;
        } else {
            // The lines are sha256sum's (a name with a line break is already `\`-escaped);
            // any other control character a name holds is shown as an escape.
            if show != Show::Nothing {
                // One write for all the lines: a manifest of 100,000 files would otherwise be
                // 100,000 write calls, more than the hashing costs.
                let mut text = String::new();
                for e in &verification.entries {
                    if show == Show::All || e.status != manifests::Status::Ok {
                        text.push_str(&files::escape::text(&e.to_string()));
                        text.push('\n');
                    }
                }
                cmdline::exit::print(&text)?;
                let note = if ignored > 0 {
                    format!(" ({ignored} missing, ignored)")
                } else {
                    String::new()
                };
                // --quiet is silent when everything held, as sha256sum's is.
                if show == Show::All || !verification.all_ok() {
                    outln!("{}{note}", verification.summary())?;
                }
            }
        }
        Ok(())
    };
    let exit = finished(print(), Exit::from_held(verification.all_ok()));
    // The process ends with this command, and the kernel takes its memory back at once:
    // freeing 100,000 results one by one first took 5 ms, a fiftieth of their check.
    std::mem::forget(verification);
    exit
}
