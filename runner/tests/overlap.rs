//! Runs that overlap in one process never take each other's children for their own. A run that
//! ends looks for orphans it adopted as subreaper while it believes it is the only run in
//! flight; a child another thread is starting at that moment must not look like one. This
//! binary has a process of its own: the orphan rule depends on how many runs are in flight.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::within;
use runner::{Job, Outcome};

#[test]
fn a_run_starting_while_another_ends_is_never_killed_as_the_others_stray() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let done = Arc::new(AtomicBool::new(false));
    // Short runs, one after another: each end reads the process table to find its strays.
    let ender = {
        let (root, done) = (root.clone(), done.clone());
        thread::spawn(move || {
            let mut n = 0;
            while !done.load(Ordering::SeqCst) {
                let job = Job::shell("exit 0", &root, root.join(format!("end-{n}.log")));
                let rec = runner::run(&job).unwrap();
                assert_eq!(
                    rec.strays_killed, 0,
                    "an ending run killed {}",
                    rec.strays_killed
                );
                n += 1;
            }
        })
    };
    // Runs started as often as possible beside it: none may be killed from outside.
    let outcomes = within(120, move || {
        let mut bad = Vec::new();
        for n in 0..150 {
            let job = Job::shell("sleep 0.05", &root, root.join(format!("start-{n}.log")));
            let rec = runner::run(&job).unwrap();
            if rec.outcome() != Outcome::Passed || rec.ended.signal().is_some() {
                bad.push(format!(
                    "run {n}: {:?} signal {:?}",
                    rec.outcome(),
                    rec.ended.signal()
                ));
            }
        }
        done.store(true, Ordering::SeqCst);
        bad
    });
    ender.join().unwrap();
    assert!(outcomes.is_empty(), "{outcomes:?}");
}
