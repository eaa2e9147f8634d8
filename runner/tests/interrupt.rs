//! An interrupt stops a running child promptly and is reported as such. In its own test binary
//! because the interrupt flag is process-wide.

use std::thread;
use std::time::{Duration, Instant};

use runner::{Job, Outcome};

#[test]
fn an_interrupt_kills_the_running_group_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("sleep 1000", dir.path(), &log).timeout(Duration::from_secs(120));
    thread::spawn(|| {
        thread::sleep(Duration::from_millis(300));
        files::interrupt::request();
    });
    let started = Instant::now();
    let rec = runner::run(&job).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(rec.ended.is_interrupted());
    assert!(!rec.ended.is_hang());
    assert_eq!(rec.outcome(), Outcome::Interrupted);
}
