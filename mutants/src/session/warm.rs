//! The build outputs of a run's checkouts: restored from the cache into the first checkout
//! before its baseline, handed from the first checkout to the others after it, and saved back at
//! the end (the mechanics are `candidate::cache`'s; this is when each happens, and what is
//! said about it).
//!
//! Only the first checkout builds cold: N checkouts building at once would fight for the cores and
//! all finish late, while one build copied N-1 times is paid once. The snapshot saved is the
//! first checkout's right after its green baseline (the unmutated tree, built), not a checkout's state
//! at the end, which holds the last mutant's build.

use std::collections::BTreeMap;

use candidate::cache::{self, Restored, Snapshot};

use super::note::Note;
use super::{Out, Session};

impl Session {
    /// Restores the cache into the first checkout (before its setup and baseline), with a note.
    pub(super) fn restore_cache(&mut self, out: &mut Out) {
        let Some(store) = &self.store else {
            return;
        };
        let first = self.checkouts[0].path().to_path_buf();
        match store.restore(&self.outputs, &first) {
            Restored::Nothing => out.emit(&Note::CacheNone {
                outputs: &self.outputs,
                dir: store.dir(),
            }),
            Restored::Restored { handed, timings } => {
                out.emit(&Note::CacheRestored {
                    outputs: &self.outputs,
                    dir: store.dir(),
                    stamped: handed.stamped,
                    forgotten: handed.forgotten,
                });
                self.floors = timings;
                self.restored = true;
                self.report.reused.push(format!(
                    "{} restored from the cache in {} ({} unchanged source file(s) keep their build)",
                    self.outputs.join(", "),
                    store.dir().display(),
                    handed.stamped
                ));
            }
            Restored::Discarded(why) => out.emit(&Note::CacheDiscarded(&why)),
        }
    }

    /// After the first checkout's green baseline: its build outputs made ready for the others
    /// (a snapshot they fill themselves from while the first checkout judges, and the cache saves
    /// at the end; or, with no cache, handed to each now).
    pub(super) fn warm_copies(&mut self, out: &mut Out) {
        if self.outputs.is_empty() {
            return;
        }
        let first = self.checkouts[0].path().to_path_buf();
        if let Some(store) = &self.store {
            match Snapshot::take(&first, &self.outputs, store.staging()) {
                Ok(snap) => {
                    say_refused(snap.refused(), out);
                    self.note_handed(snap.refused());
                    self.snapshot = Some(snap);
                }
                Err(e) => out.emit(&Note::CacheNotKept(&e)),
            }
            return;
        }
        let mut refused = None;
        for (j, co) in self.checkouts.iter().enumerate().skip(1) {
            match cache::hand_over(&first, co.path(), &self.outputs) {
                Ok(handed) => {
                    if j == 1 {
                        say_refused(&handed.refused, out);
                        refused = Some(handed.refused);
                    }
                }
                Err(e) => out.emit(&Note::BuildsCold {
                    checkout: j,
                    error: &e,
                }),
            }
        }
        if let Some(refused) = refused {
            self.note_handed(&refused);
        }
    }

    /// Saves the snapshot as the repository's cache, with the slowest times it was built in.
    /// Only a run that got past a green baseline and was not interrupted saves.
    pub(super) fn save_cache(&mut self, timings: BTreeMap<String, f64>, out: &mut Out) {
        let (Some(store), Some(mut snap)) = (&self.store, self.snapshot.take()) else {
            return;
        };
        if files::interrupt::requested() || self.report.baseline_failed {
            return;
        }
        snap.keep_timings(&timings);
        match store.commit(snap) {
            Ok(()) => out.emit(&Note::CacheSaved {
                outputs: &self.outputs,
                dir: store.dir(),
            }),
            Err(e) => out.emit(&Note::CacheNotSaved(&e)),
        }
    }
}

impl Session {
    /// The record of what the other checkouts get from the first, when there are others.
    fn note_handed(&mut self, refused: &[(String, String)]) {
        let handed: Vec<&str> = self
            .outputs
            .iter()
            .filter(|o| !refused.iter().any(|(r, _)| r == *o))
            .map(String::as_str)
            .collect();
        if self.checkouts.len() > 1 && !handed.is_empty() {
            self.report.reused.push(format!(
                "{} handed from the first checkout to the other {}",
                handed.join(", "),
                self.checkouts.len() - 1
            ));
        }
    }
}

/// Each build folder that is not handed over or kept, and why (each checkout builds it cold).
fn say_refused(refused: &[(String, String)], out: &mut Out) {
    for (folder, why) in refused {
        out.emit(&Note::NotHanded { folder, why });
    }
}
