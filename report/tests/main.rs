//! report's integration tests, one binary: a run's record read from a real child's log, the
//! counts of real test runners, and JUnit read back by a real consumer.

mod common;
mod counts_cases;
mod junit;
mod junit_reports;
mod record;
mod results_cases;
mod runner_counts;
