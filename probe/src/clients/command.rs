//! `probe clients`, the command: its outputs planned and locked, every preset measured in turn
//! ([`super::matrix`] builds the record), then the tables written and shown
//! ([`super::render`] formats them), and the exit code from how many clients were measured.

use super::matrix::{measure, Matrix, MatrixSettings, Row, RowStatus};
use super::render::{limits_table, table};
use crate::presets::Preset;
use anyhow::Context;
use cmdline::Exit;
use report::{Format, Painter, Timestamp};

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
    let mut rows = Vec::new();
    let mut interrupted = false;
    for preset in presets {
        if interrupted {
            break;
        }
        let row = measure(preset, settings, quiet, &mut interrupted)?;
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
        &format!(
            "{}\n{}",
            table(&matrix).render_text(),
            limits_table(&matrix).render_text()
        ),
    )
    .context("writing clients.txt")?;
    let shown = match settings.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&matrix)?),
        Format::Markdown => format!(
            "## probe clients\n\n{}\n### Every limit\n\n{}",
            table(&matrix).render_markdown(),
            limits_table(&matrix).render_markdown()
        ),
        Format::Text => {
            let paint = Painter::new(settings.color.for_stdout());
            format!(
                "{}\n{}",
                table(&matrix).render_painted(paint),
                limits_table(&matrix).render_painted(paint)
            )
        }
    };
    crate::print_out(&shown)?;
    if interrupted {
        return Ok(Exit::Interrupted);
    }
    let installed: Vec<&Row> = matrix
        .rows
        .iter()
        .filter(|r| r.status != RowStatus::NotInstalled)
        .collect();
    if installed.is_empty() || installed.iter().all(|r| r.status == RowStatus::Failed) {
        cmdline::errln!(
            "probe: no client could be measured (scripts/install-clients.sh installs them)"
        );
        return Ok(Exit::Precondition);
    }
    Ok(Exit::from_held(
        installed.iter().all(|r| r.status == RowStatus::Measured),
    ))
}
