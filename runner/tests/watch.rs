//! A run watched by its caller's observer: fed the log's lines as the child writes them, and
//! able to stop the run, whose group is then stopped as a hung one is.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{alive, pid_from, within};
use runner::{Ended, Job, Observer, Outcome};

/// Stops at the first line equal to `at`, and keeps every line it was handed.
struct StopAt {
    at: &'static str,
    seen: Vec<String>,
    when: Option<Duration>,
}

impl Observer for StopAt {
    fn line(&mut self, line: &str, at: Duration) -> bool {
        self.seen.push(line.to_string());
        let stop = line == self.at;
        if stop {
            self.when = Some(at);
        }
        stop
    }
}

fn stop_at(at: &'static str) -> Arc<Mutex<StopAt>> {
    Arc::new(Mutex::new(StopAt {
        at,
        seen: Vec::new(),
        when: None,
    }))
}

#[test]
fn an_observer_that_asks_stops_the_whole_group_long_before_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    // A group member that ignores SIGTERM, and a main process that prints for ever.
    let script = format!(
        "sh -c 'trap \"\" TERM; echo $$ > {}; while :; do sleep 1; done' & \
         i=0; while :; do i=$((i+1)); echo \"line $i\"; sleep 0.01; done",
        pidfile.display()
    );
    let observer = stop_at("line 20");
    // A timeout well inside the test's own wait: a stop that never comes ends as a hang.
    let job = Job::shell(script, dir.path(), &log)
        .timeout(Duration::from_secs(20))
        .grace(Duration::from_millis(300))
        .watch(observer.clone());
    let rec = within(60, move || runner::run(&job).unwrap());
    assert!(matches!(rec.ended, Ended::Stopped(_)), "{:?}", rec.ended);
    assert_eq!(rec.outcome(), Outcome::Failed);
    assert!(!rec.ended.is_hang());
    assert!(rec.duration_secs < 15.0, "{}", rec.duration_secs);
    assert!(!alive(pid_from(&pidfile)), "the group member survived");
    let o = observer.lock().unwrap();
    // Every line in order, and nothing after the one that asked.
    assert_eq!(o.seen.len(), 20, "{:?}", o.seen);
    assert_eq!(o.seen[0], "line 1");
    assert!(o.when.is_some_and(|w| w.as_secs_f64() <= rec.duration_secs));
}

#[test]
fn an_observer_that_never_asks_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let observer = stop_at("never printed");
    let job = Job::shell(
        "printf 'a\\r\\nb\\nlast without end'; exit 3",
        dir.path(),
        &log,
    )
    .watch(observer.clone())
    .echo(true);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.ended, Ended::exited(3));
    // Lines without their ends (`\r\n` too), the last one read even without its newline.
    assert_eq!(
        observer.lock().unwrap().seen,
        ["a", "b", "last without end"]
    );
}
