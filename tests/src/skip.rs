//! Skips that cannot hide. A test that cannot run here (a tool is missing, the kernel or the
//! user cannot do what it needs) says so; under CI (`CI` set) that is a failure unless `.ci/run`
//! names the skip in `GATEKIT_ALLOWED_SKIPS`, next to the reason it is allowed there. A check that
//! silently checks nothing would otherwise pass in exactly the place it is meant to prove
//! something.
//!
//! cargo's harness captures what a passing test prints, so a skipped test reads `ok` there. Each
//! skip is therefore also appended to the file `GATEKIT_SKIP_LOG` names (`scripts/test` sets it
//! and prints the skips after cargo's own summary), one `ID<TAB>WHY` line each.

use std::io::Write;

/// The variable `.ci/run` lists allowed skip ids in, separated by white space.
pub const ALLOWED: &str = "GATEKIT_ALLOWED_SKIPS";

/// The variable naming the file each skip is appended to.
pub const LOG: &str = "GATEKIT_SKIP_LOG";

/// Says that the check named `id` did not run, and `why`. Outside CI a `SKIP` notice on stderr
/// and a line in `GATEKIT_SKIP_LOG`; under CI a panic unless `id` is in `GATEKIT_ALLOWED_SKIPS`.
/// The caller returns right after.
pub fn skip(id: &str, why: &str) {
    if let Err(message) = judge(
        id,
        why,
        std::env::var_os("CI").is_some(),
        std::env::var(ALLOWED).ok().as_deref(),
    ) {
        panic!("{message}");
    }
    eprintln!("SKIP ({id}): {why}");
    if let Some(log) = std::env::var_os(LOG) {
        record(std::path::Path::new(&log), &line(id, why));
    }
}

/// One log line: the test's name (its thread, as libtest names it), the id and the reason, with
/// tabs and newlines flattened so a reason can never forge another line.
fn line(id: &str, why: &str) -> String {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let flat = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    format!("{}\t{}\t{}\n", flat(&test), flat(id), flat(why))
}

/// Appends with one `write` of a whole line (O_APPEND), so test binaries running at once never
/// interleave within a line. A log that cannot be written loses the line, never the test.
fn record(log: &std::path::Path, line: &str) {
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

fn judge(id: &str, why: &str, in_ci: bool, allowed: Option<&str>) -> Result<(), String> {
    let allowed = allowed.is_some_and(|list| list.split_whitespace().any(|a| a == id));
    if in_ci && !allowed {
        return Err(format!(
            "a skip under CI that .ci/run does not allow ({id}): {why}; install what it needs in \
             .ci/run, or name `{id}` in {ALLOWED} there with the reason"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{judge, line, record};

    #[test]
    fn outside_ci_a_skip_is_a_notice() {
        assert!(judge("groff", "missing", false, None).is_ok());
    }

    #[test]
    fn under_ci_a_skip_fails_unless_allowed_by_name() {
        let err = judge("groff", "groff is not installed", true, None).unwrap_err();
        assert!(err.contains("(groff): groff is not installed"), "{err}");
        assert!(judge("groff", "x", true, Some("tmpfs groff")).is_ok());
        assert!(judge("groff", "x", true, Some("groffish tmpfs")).is_err());
    }

    #[test]
    fn a_skip_is_one_whole_line_in_the_log_naming_the_test() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        record(&log, &line("wheel", "no wheel\tin\nthis python"));
        record(&log, &line("npm", "npm is missing"));
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(
            lines[0],
            "skip::tests::a_skip_is_one_whole_line_in_the_log_naming_the_test\twheel\tno wheel in this python"
        );
        assert!(lines[1].ends_with("\tnpm\tnpm is missing"), "{text}");
    }
}
