//! The run's checkout made ready before its first suite ([`ready`]): the build cache restored,
//! the user's linked folders fingerprinted, and the `[worktree]` table applied (links from the
//! user's checkout, then the setup step through the runner). A setup that fails is not an
//! error here but a [`Setup::Failed`]: the run records it as what happened (exit 4) before it
//! says so.

use std::path::Path;

use anyhow::{Context, Result};

use crate::progress::{Event, Shows};
use crate::record::SetupFact;
use candidate::config::Config;
use candidate::git::Git;
use candidate::linked::Fingerprint;

/// The build cache of a run's checkout: its store and the paths it holds, saved after the
/// suites.
pub(crate) type Cache = (candidate::cache::Store, Vec<String>);

/// A checkout made ready (or not) for its suites.
pub(crate) struct Ready {
    /// `[worktree] cache`, when gate.toml names it.
    pub cache: Option<Cache>,
    /// What the run reused instead of building, one line each, for the record.
    pub reused: Vec<String>,
    /// The user's linked folders as they were before the checkout got its copies: compared
    /// once the suites and canaries are done (see `candidate::linked`).
    pub linked: Fingerprint,
    pub setup: Setup,
}

/// The checkout at `checkout` made ready: `[worktree] cache`, when gate.toml names it (no
/// ecosystem default here: one checkout judged once per candidate should not fill the cache
/// folder unasked), restored before the setup, saved after the suites (Cargo still decides
/// what is fresh); the linked folders fingerprinted; then the `[worktree]` table, its setup
/// log at `setup_log` below `out`. An error stops the run, said with a linked folder that
/// changed before it.
pub(crate) fn ready(
    repo: &Git,
    config: &Config,
    checkout: &Path,
    (out, setup_log): (&Path, &str),
    shows: &mut Shows,
) -> Result<Ready> {
    let (cache, reused) = cache_for(repo, config, checkout, shows);
    let linked = Fingerprint::take(repo.dir(), &config.worktree.link);
    let setup = prepare_checkout(repo, config, checkout, out, setup_log, shows);
    if setup.is_err() {
        if let Some(changed) = linked.changed() {
            shows.emit(&Event::LinkedChanged { what: &changed });
        }
    }
    let setup = setup?;
    Ok(Ready {
        cache,
        reused,
        linked,
        setup,
    })
}

/// How the `[worktree]` preparation of a checkout ended: ready (with its setup step, if
/// any), or failed, a precondition (exit 4) with the setup as it ran and why, log tail and all.
pub(crate) enum Setup {
    Ready(Option<SetupFact>),
    Failed {
        fact: Option<SetupFact>,
        why: String,
    },
}

/// The `[worktree]` table applied to a new checkout: links from the user's checkout, then the
/// setup step through the runner (its log `name`, below `out`, as the run's mode names it). A
/// link missing at its source, or a setup that fails, is a failed precondition (exit 4): no
/// suite could be judged there.
fn prepare_checkout(
    repo: &Git,
    config: &Config,
    checkout: &Path,
    out: &Path,
    name: &str,
    shows: &mut Shows,
) -> Result<Setup> {
    let w = &config.worktree;
    if w.is_empty() {
        return Ok(Setup::Ready(None));
    }
    if let Err(why) = candidate::setup::link_into(w, repo.dir(), checkout) {
        let why = runner::stop::PreconditionFailed::new(why).to_string();
        return Ok(Setup::Failed { fact: None, why });
    }
    let Some(record) = candidate::setup::run_setup(w, checkout, &config.env, &out.join(name))
        .context("running worktree.setup")?
    else {
        return Ok(Setup::Ready(Some(SetupFact {
            command: String::new(),
            status: "no setup".into(),
            duration_secs: 0.0,
            log: String::new(),
            linked: w.link.clone(),
        })));
    };
    let fact = SetupFact {
        command: w.setup.clone().unwrap_or_default(),
        status: record.status_text(),
        duration_secs: record.run.duration_secs,
        log: name.to_string(),
        linked: w.link.clone(),
    };
    if record.outcome() == report::Outcome::Interrupted || files::interrupt::requested() {
        // Not a failed precondition: the run was stopped (exit 130, and its report says so).
        return Err(files::interrupt::Interrupted.into());
    }
    if record.outcome() != report::Outcome::Passed {
        let why = runner::stop::PreconditionFailed::new(candidate::setup::failure_text(&record));
        return Ok(Setup::Failed {
            fact: Some(fact),
            why: why.to_string(),
        });
    }
    if let Err(why) = candidate::setup::require_set_up(w, repo.dir(), checkout) {
        let why = runner::stop::PreconditionFailed::new(why).to_string();
        return Ok(Setup::Failed {
            fact: Some(fact),
            why,
        });
    }
    shows.emit(&Event::SetupPassed {
        secs: record.run.duration_secs,
        log: name,
    });
    Ok(Setup::Ready(Some(fact)))
}

/// The cache of the run's checkout, when gate.toml names `cache`: restored now, saved after
/// the suites. The second value says what the run reused, for the record (a 4-second PASS on
/// restored outputs must not read like a cold one).
fn cache_for(
    repo: &Git,
    config: &Config,
    checkout: &Path,
    shows: &mut Shows,
) -> (Option<Cache>, Vec<String>) {
    let Some(paths) = config.worktree.cache.clone().filter(|p| !p.is_empty()) else {
        return (None, Vec::new());
    };
    let store = candidate::cache::Store::for_repo(repo.dir());
    let mut reused = Vec::new();
    match store.restore(&paths, checkout) {
        candidate::cache::Restored::Restored { handed, .. } => {
            let said = format!(
                "{} restored from the cache in {} ({} unchanged source file(s) keep their build)",
                paths.join(", "),
                store.dir().display(),
                handed.stamped
            );
            shows.emit(&Event::CacheRestored { said: &said });
            reused.push(said);
        }
        candidate::cache::Restored::Discarded(why) => {
            shows.emit(&Event::CacheDiscarded { why: &why })
        }
        candidate::cache::Restored::Nothing => {}
    }
    (Some((store, paths)), reused)
}

/// The checkout's build outputs saved into the cache after its suites, for the next run; a
/// failure is said and costs only the next run's warm start.
pub(crate) fn save((store, paths): Cache, checkout: &Path, shows: &mut Shows) {
    let saved = candidate::cache::Snapshot::take(checkout, &paths, store.staging())
        .and_then(|snap| store.commit(snap));
    if let Err(e) = saved {
        shows.emit(&Event::CacheNotSaved { error: &e });
    }
}
