//! Skips that cannot hide. A test that cannot run here (a tool is missing, the kernel or the
//! user cannot do what it needs) says so; under CI (`CI` set) that is a failure unless `.ci/run`
//! names the skip in `GATEKIT_ALLOWED_SKIPS`, next to the reason it is allowed there. A check that
//! silently checks nothing would otherwise pass in exactly the place it is meant to prove
//! something.

/// The variable `.ci/run` lists allowed skip ids in, separated by white space.
pub const ALLOWED: &str = "GATEKIT_ALLOWED_SKIPS";

/// Says that the check named `id` did not run, and `why`. Outside CI a `SKIP` notice on stderr;
/// under CI a panic unless `id` is in `GATEKIT_ALLOWED_SKIPS`. The caller returns right after.
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
    use super::judge;

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
}
