//! A mutant is known by what it is: the sha256 of everything that decides its verdict (its
//! file, anchor, replace, expectation and operator, and each of its suites with its command,
//! build step, timeouts, environment and where its counts come from), never by the bytes of
//! the spec file around it.
//!
//! So a spec whose comments, order of suites, or other mutants changed still names the same
//! mutant: `--only`/`--from` update a report in place, and `merge --spec` holds shards to a spec,
//! whenever every mutant they keep is unchanged, and refuse as soon as one is not. The name is
//! the key a row is found by, not part of what the mutant is.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{Mutant, Spec, Suite};

/// The identity of `m` in `spec`: 64 hex digits.
pub(crate) fn of(spec: &Spec, m: &Mutant) -> String {
    let suites: Vec<Value> = m
        .suites()
        .map(|name| match spec.suites.get(name) {
            Some(suite) => suite_value(suite),
            // A spec names only suites it defines (checked when it is read); a name kept as is
            // still tells two mutants apart.
            None => json!({ "name": name }),
        })
        .collect();
    let value = json!({
        "file": m.file,
        "anchor": m.anchor,
        "replace": m.replace,
        "control": m.is_control(),
        "operator": m.operator,
        "suites": suites,
    });
    // serde_json writes object keys in sorted order (no `preserve_order` here), so the text,
    // and the hash, depend on the values alone.
    manifests::Digest::of(value.to_string().as_bytes()).to_hex()
}

/// Everything of `suite` that decides a verdict, as the identity spells it (also the key a
/// coverage map is kept under).
pub(crate) fn suite_value(suite: &Suite) -> Value {
    let mut value = suite_fields(suite);
    // `select` decides which tests run first (a wrong map can make a kill come from them),
    // so it is part of what the mutant is; written only when a suite has one, so identities
    // of suites without it are what they were before the key existed.
    if let (Some(select), Some(fields)) = (&suite.select, value.as_object_mut()) {
        fields.insert("select".into(), json!(select.template));
    }
    value
}

fn suite_fields(suite: &Suite) -> Value {
    let env: BTreeMap<&str, &str> = suite
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut value = json!({
        "name": suite.name,
        "run": suite.run(),
        "build": suite.build,
        "timeout_ms": suite.timeout.map(|t| t.as_millis() as u64),
        "build_timeout_ms": suite.build_timeout.map(|t| t.as_millis() as u64),
        "env": env,
        // Spelled here, not by Debug, so a compiler's formatting never changes an identity.
        "results": match &suite.results {
            report::results::Source::Log => json!("log"),
            report::results::Source::Junit(path) => json!({ "junit": path }),
            report::results::Source::Tap => json!("tap"),
        },
        // `fail_fast` is left out: it never changes a verdict. A mutant's run stops only once
        // its runner has reported a failed test, so the suite has failed (`killed`) whatever
        // the rest would have said; a baseline whose passing log would already stop runs every
        // mutant whole; and controls always run whole. Only the time and the failed tests
        // listed change, which a reused row may keep.
    });
    // A warm runner decides which run's report a kill is read from (a rerun of the tests
    // related to the mutated file, in a runner started once), so it can change what a verdict
    // rests on: a mutant judged warm is not the mutant judged cold. Added only when declared,
    // so every identity written before the key existed stays what it was.
    if let (Some(watch), Some(map)) = (&suite.watch, value.as_object_mut()) {
        map.insert("watch".into(), json!(watch));
    }
    // `floor` is left out: it is timed once after the baseline and only measures (a suite's
    // time per mutant as a multiple of its runner's start-up); no verdict and no test a mutant
    // runs depends on it, so adding or editing one keeps every verdict.
    value
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const SPEC: &str = r#"
# a comment
[suites.s]
run = "cargo test"
timeout = "5m"

[suites.t]
run = "pytest"

[[mutant]]
name = "a"
file = "src/a.rs"
anchor = "x > 1"
replace = "x >= 1"
undoes = "one claim"
suite = "s"

[[mutant]]
name = "b"
file = "src/b.rs"
anchor = "y"
replace = "z"
suite = "s"
also = ["t"]
"#;

    fn ids(text: &str) -> Vec<String> {
        let spec = Spec::parse(text, Path::new("mutants.toml")).unwrap();
        spec.mutants.iter().map(|m| of(&spec, m)).collect()
    }

    #[test]
    fn what_does_not_decide_a_verdict_leaves_the_identity() {
        let before = ids(SPEC);
        assert_eq!(before[0].len(), 64);
        assert_ne!(before[0], before[1]);
        // Comments, the claim's words, the site, and the other mutants.
        let edited = SPEC
            .replace("# a comment", "# another comment\n# and more")
            .replace("one claim", "a claim in other words")
            .replace("name = \"b\"", "name = \"b\"\nsite = \"here\"");
        assert_eq!(ids(&edited), before);
        let mut with_more = SPEC.to_string();
        with_more.push_str(
            "\n[[mutant]]\nname = \"c\"\nfile = \"f\"\nanchor = \"p\"\nreplace = \"q\"\nsuite = \"t\"\n",
        );
        assert_eq!(ids(&with_more)[..2], before[..]);
        // A floor only measures.
        let floored = SPEC.replace(
            "run = \"pytest\"",
            "run = \"pytest\"\nfloor = \"pytest -k nothing\"",
        );
        assert_ne!(floored, SPEC);
        assert_eq!(ids(&floored), before);
    }

    #[test]
    fn each_input_of_a_verdict_changes_the_identity() {
        let before = ids(SPEC);
        for (from, to, which) in [
            ("anchor = \"x > 1\"", "anchor = \"x  > 1\"", 0),
            ("replace = \"x >= 1\"", "replace = \"x < 1\"", 0),
            ("file = \"src/a.rs\"", "file = \"src/a2.rs\"", 0),
            ("run = \"cargo test\"", "run = \"cargo test -q\"", 0),
            ("timeout = \"5m\"", "timeout = \"6m\"", 0),
            ("run = \"pytest\"", "run = \"pytest -x\"", 1),
            (
                "suite = \"s\"\nalso",
                "suite = \"s\"\nexpect = \"survive\"\nalso",
                1,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\nbuild = \"cargo build\"",
                0,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\nenv = { RUST_LOG = \"1\" }",
                0,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\ntap = true",
                0,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\njunit = \"r.xml\"",
                0,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\nselect = \"cargo test {tests}\"",
                0,
            ),
            (
                "run = \"cargo test\"",
                "run = \"cargo test\"\nwatch = \"cargo watch -x test\"",
                0,
            ),
        ] {
            let changed = SPEC.replacen(from, to, 1);
            assert_ne!(changed, SPEC, "{from}");
            assert_ne!(ids(&changed)[which], before[which], "{from} -> {to}");
        }
    }
}
