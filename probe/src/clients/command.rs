//! `probe clients`, the command: its outputs planned and locked, every preset measured in turn
//! ([`super::matrix`] builds the record), then the tables written and shown
//! ([`super::render`] formats them), and the exit code from how many clients were measured.

use super::matrix::{measure, Matrix, MatrixSettings, Row, RowStatus};
use super::render::{self, Shown};
use crate::bracket::events::Note;
use crate::presets::Preset;
use anyhow::Context;
use cmdline::Exit;
use report::{Format, Timestamp};

/// `probe clients`: 0 when every installed client was measured, 1 when one was only partly,
/// 4 when none could be judged at all.
pub(crate) fn run_clients(settings: &MatrixSettings) -> anyhow::Result<Exit> {
    let started = Timestamp::now();
    let presets: Vec<Preset> = if settings.only.is_empty() {
        Preset::ALL.to_vec()
    } else {
        settings.only.clone()
    };
    // The one output guard (see `files::outputs`): every path this run writes is planned and
    // checked before anything is written or removed, so a refusal (exit 2) leaves --out as it
    // was. Then --out is locked and taken as this run's folder: what it writes there (the
    // tables, and each client's folder) goes on its record, and only what an earlier run
    // recorded is removed.
    let mut plan = files::outputs::Plan::new();
    plan.folder("--out", &settings.out)
        .file_in(&settings.out, "clients.json")
        .file_in(&settings.out, "clients.txt");
    for preset in &presets {
        plan.folder_in(&settings.out, preset.name());
    }
    plan.check()
        .map_err(|e| crate::Failure::Usage(e.to_string()))?;
    let _lock = files::lock::OutLock::acquire(&settings.out)
        .map_err(|e| crate::Failure::Usage(e.to_string()))?;
    files::outputs::own(&settings.out)
        .and_then(|()| files::outputs::clear_previous(&settings.out))
        .map_err(|e| crate::Failure::Usage(format!("{}: {e}", settings.out.display())))?;
    let quiet = settings.format == Format::Json;
    let mut out = crate::bracket::render::progress(0, quiet, settings.color);
    let mut rows = Vec::new();
    let mut interrupted = false;
    for preset in presets {
        if interrupted {
            break;
        }
        let row = measure(preset, settings, &mut out, &mut interrupted)?;
        rows.push(row);
    }
    let matrix = Matrix {
        version: 1,
        tool: "probe",
        command: "clients",
        started,
        finished: Timestamp::now(),
        margin: settings.margin,
        range: [settings.lo, settings.hi],
        rows,
    };
    report::json::write_atomic(&settings.out.join("clients.json"), &matrix)
        .context("writing clients.json")?;
    files::atomic::write_text_atomic(
        &settings.out.join("clients.txt"),
        &render::file_text(&matrix),
    )
    .context("writing clients.txt")?;
    out.show_document(&Shown(&matrix), settings.format)?;
    if interrupted {
        return Ok(out.finish(Exit::Interrupted));
    }
    let installed: Vec<&Row> = matrix
        .rows
        .iter()
        .filter(|r| r.status != RowStatus::NotInstalled)
        .collect();
    if installed.is_empty() || installed.iter().all(|r| r.status == RowStatus::Failed) {
        out.emit(&Note::NoClientMeasured);
        return Ok(out.finish(Exit::Precondition));
    }
    Ok(out.finish(Exit::from_held(
        installed.iter().all(|r| r.status == RowStatus::Measured),
    )))
}
