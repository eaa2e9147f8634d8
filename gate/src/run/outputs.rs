//! Where `gate run` writes, and the writing: the one output plan (checked before the candidate
//! is read, and again with the checkout and the logs' names once they are known), the proof
//! that the report files can be written before any work starts, and the report's files
//! written whole, gate.json last.

use std::path::Path;

use anyhow::{bail, Context, Result};

use candidate::config::Config;
use candidate::git::Git;

use super::{RunSettings, REPORT_FILE, SUMMARY_FILE};
use crate::record::GateReport;

/// Every path `gate run` reads or writes, for the one output guard: gate.toml, the patch and
/// the manifest in; `--out` with its report files and logs, and `--junit`, out; never in the
/// repository's `.git`. The run adds the checkout and the logs' names once it knows them.
pub(super) fn plan(
    repo: &Git,
    s: &RunSettings,
    junit: Option<&Path>,
    config: &Config,
) -> Result<files::outputs::Plan> {
    let mut plan = files::outputs::Plan::new();
    config.plan_inputs(&mut plan);
    repo.forbid_outputs_in(&mut plan)?;
    plan.folder("--out", &s.out)
        .file_in(&s.out, REPORT_FILE)
        .file_in(&s.out, SUMMARY_FILE)
        .folder_in(&s.out, "logs");
    if let Some(path) = junit {
        plan.file("--junit", path);
    }
    if let Some(a) = &s.attest {
        candidate::attest::plan(&mut plan, &a.file, a.key.as_deref());
    }
    Ok(plan)
}

/// Where a run's report goes: `gate-summary.txt` and `gate.json` in the output folder, and the
/// JUnit copy when one is asked for.
pub(super) struct ReportFiles<'a> {
    out: &'a Path,
    junit: Option<&'a Path>,
}

impl<'a> ReportFiles<'a> {
    /// The report's files, once proved writable before any work starts: the output folder
    /// takes files, and the JUnit copy's folder does and it is not a folder itself.
    pub(super) fn proved(out: &'a Path, junit: Option<&'a Path>) -> Result<ReportFiles<'a>> {
        writable_folder(out, "the output folder")?;
        if let Some(path) = junit {
            writable_file(path)?;
        }
        Ok(ReportFiles { out, junit })
    }

    /// Writes every file of `report`, each atomically, gate.json last: a report that says it
    /// is complete is only ever on disk once its summary and JUnit copy are, and a write that
    /// fails (a full disk) stops there, leaving the earlier gate.json that says it is not.
    pub(super) fn write(&self, report: &GateReport) -> Result<()> {
        let summary = self.out.join(SUMMARY_FILE);
        files::atomic::write_text_atomic(&summary, &report.render())
            .with_context(|| format!("writing {}", summary.display()))?;
        if let Some(path) = self.junit {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            files::atomic::write_text_atomic(path, &crate::junit::render(report))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let json = self.out.join(REPORT_FILE);
        report::json::write_atomic(&json, report)
            .with_context(|| format!("writing {}", json.display()))
    }
}

/// Proves `dir` can take files before any work starts: it is made if missing, and a probe file
/// is created in it and removed.
fn writable_folder(dir: &Path, what: &str) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create {what}", dir.display()))?;
    tempfile::Builder::new()
        .prefix(".gatekit-probe-")
        .tempfile_in(dir)
        .with_context(|| format!("{}: cannot write in {what}", dir.display()))?;
    Ok(())
}

/// Proves a report file can be written at `path`: its folder is writable and it is not a
/// folder itself.
fn writable_file(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{}: is a folder, not a file to write", path.display());
    }
    let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p,
        None => Path::new("."),
    };
    writable_folder(parent, "the folder of the report file")
}
