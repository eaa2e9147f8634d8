//! `mutants run --incremental --dry-run`: which mutants an incremental run would judge again,
//! and why, without judging any. The check CI runs against a committed report folder: the
//! table is current when it lists none (exit 0), and stale when it lists any (exit 1), so
//! refreshing the table is a developer's incremental run, never CI's.
//!
//! It reads the report in `--out` and nothing else there: no lock is taken, nothing is
//! written into `--out`, and no setup, baseline, canary or suite runs. It makes one checkout
//! of the tree under review in its own scratch folder (the same tree and `code_tree` an
//! incremental run would compare), lists its files and asks its toolchains their versions
//! there, exactly as that run would; the checkout is removed when it ends.

use anyhow::{bail, Result};

use cmdline::Exit;

use super::incremental::{self, Dry};
use super::prepare::{candidate_facts, read_input, Origin};
use super::{identity, previous, Out, Settings};
use crate::checkout;
use crate::record::RunReport;

/// `OUT/mutants.json`, read strictly: none there, or one that cannot be read (another
/// version, not a report), is bad input (exit 2), said in one line naming the file.
fn read_report(out: &std::path::Path) -> Result<RunReport> {
    let path = out.join("mutants.json");
    let shown = files::escape::path(&path);
    let bytes = match files::input::read(&path) {
        Ok(b) => b,
        Err(files::input::InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("{shown}: no report to compare with (--dry-run reads the one an incremental run wrote there)")
        }
        Err(e) => bail!("{shown}: {e}"),
    };
    crate::merge::shard::parse(&bytes)
        .map_err(|e| anyhow::anyhow!("{shown}: cannot compare with this report: {e}"))
}

/// Compares the report in `--out` with the tree under review; exit 1 when any mutant would
/// be judged, 0 when none, 2 (an error) when there is no report to compare with.
pub(crate) fn run(settings: Settings, reporter: &mut Out) -> Result<Exit> {
    let (spec, config, _) = read_input(&settings, reporter)?;
    let selected = settings.selection.select(&spec)?;
    let repo = checkout::open_repo(settings.dir.clone())?;
    let out = identity::absolute(&settings.out);
    let prior = read_report(&out)?;
    let origin = Origin::of(&repo, config, &out)?;
    let checkouts = checkout::make(&origin.source, 1)?;
    let co = &checkouts[0];
    let candidate = match candidate_facts(
        settings.candidate.as_deref(),
        &checkouts,
        origin.files,
        reporter,
    ) {
        Ok(facts) => facts,
        Err(refused) => return Ok(refused),
    };
    let code_tree = previous::code_tree(co, repo.dir(), &spec.file)?;
    let (facts, toolchains) = incremental::tree_facts(&spec, co)?;
    // What a real run would hold each mutant to: the kept coverage maps too.
    let sources = super::prepare::read_sources(&spec, &selected, co.path())?;
    let kept =
        super::cover::KeptMaps::since(&prior, &spec, (co, repo.dir()), &sources, settings.no_cache);
    let now = kept.now(&code_tree, candidate.as_ref(), &facts, &toolchains);
    let stale = incremental::staleness(&prior, &spec, &selected, &now)
        .into_iter()
        .filter_map(|(i, why)| Some((spec.mutants[i].name.clone(), why?)))
        .collect();
    // A shard's dry run answers for its share; rows of other shards are not its to call gone.
    let gone = match settings.selection.shard {
        Some(_) => Vec::new(),
        None => incremental::gone(&prior, &spec)
            .into_iter()
            .map(String::from)
            .collect(),
    };
    drop(checkouts);
    let dry = Dry {
        out: settings.out.clone(),
        report: (prior.tree.clone(), prior.start),
        compared: selected.len(),
        stale,
        gone,
    };
    reporter.show_document(&crate::render::stale::Shown(&dry), settings.format)?;
    Ok(match dry.current() {
        true => Exit::Ok,
        false => Exit::Findings,
    })
}
