//! The facts a run states once, around its rows: the baseline, the `[worktree]` setup, the
//! candidate it worked on (with its manifest checks) and its shard.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::strict::required;

use report::Counts;

/// The `[worktree]` setup of a run: the command, the linked paths, and the seconds it took in
/// each working copy (its time is reported apart from the suites').
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetupFacts {
    /// Empty when the table only links.
    pub command: String,
    pub linked: Vec<String>,
    #[schemars(inner(range(min = 0.0)))]
    pub secs: Vec<f64>,
}

/// A suite run unmutated, before any mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Baseline {
    pub suite: String,
    pub status: String,
    pub passed: bool,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// The `build` step, in seconds; `None` when the suite has none.
    #[schemars(range(min = 0.0))]
    #[serde(deserialize_with = "required")]
    pub build_secs: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub counts: Option<Counts>,
    pub strays_killed: u32,
    /// The timeout each mutant then gets under this suite, and where it came from.
    #[schemars(range(min = 0.0))]
    pub mutant_timeout_secs: f64,
    pub timeout_source: String,
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
    /// Why it failed, a line each: its failed tests with their first error lines (a chained
    /// error's innermost cause), or the log's first error lines; empty when it passed or its
    /// log says nothing that reads as an error. Absent in reports written before it was
    /// recorded.
    #[serde(default)]
    pub why: Vec<String>,
    /// How many of its failed tests are not named and where the log is, and a report it names
    /// that was not read; empty when there is nothing to add.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The suite's floor, when it names one: its runner started with no test selected.
    /// Absent in reports written before it was recorded.
    #[schemars(extend("x-optional" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
}

/// A suite's floor (its `floor` command, the runner started with no test selected), timed right
/// after the baseline, and the suite's time per mutant as a multiple of it: how far a run is
/// from the least a process per mutant can cost. It measures; no verdict depends on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Floor {
    pub command: String,
    /// Each run that passed, in seconds, in order.
    #[schemars(inner(range(min = 0.0)))]
    pub runs: Vec<f64>,
    /// The median of `runs`; `None` when a run failed.
    #[schemars(range(min = 0.0))]
    #[serde(deserialize_with = "required")]
    pub secs: Option<f64>,
    /// How the run that failed ended (`exit 1`, `hang`); `None` when every run passed.
    #[serde(deserialize_with = "required")]
    pub failed: Option<String>,
    /// The mean time a mutant judged in this run cost under this suite, in seconds: its suite
    /// run, build step and warm rerun (reused rows left out); `None` before any was judged.
    #[schemars(range(min = 0.0))]
    #[serde(deserialize_with = "required")]
    pub per_mutant_secs: Option<f64>,
    /// `per_mutant_secs` over `secs`.
    #[schemars(range(min = 0.0))]
    #[serde(deserialize_with = "required")]
    pub multiple: Option<f64>,
    /// The last run's log (for a kept floor, a log that says where it was kept from).
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
    /// When `runs` were timed, for a floor kept in gatekit's cache from an earlier run of the
    /// same code, suite and toolchains: that run's start. Absent when this run timed it.
    #[schemars(extend("x-optional" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_from: Option<String>,
}

/// The candidate a run worked on (`--candidate gate.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CandidateFacts {
    pub config: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub base: String,
    /// `git write-tree` of the candidate's index: the content every mutant was run against.
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    /// The patch and manifest files as read, hashed: two shards of one candidate agree on both.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub patch_sha256: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub manifest_sha256: String,
    pub manifest_before: ManifestCheck,
    /// Checked again after the last mutant: proof that every mutant was restored.
    #[serde(deserialize_with = "required")]
    pub manifest_after: Option<ManifestCheck>,
}

impl CandidateFacts {
    /// The check after the last mutant as the reports show it, `not checked` when it was not
    /// reached.
    pub fn manifest_after_text(&self) -> String {
        self.manifest_after
            .map_or_else(|| "not checked".to_string(), |c| c.to_string())
    }
}

/// A candidate's manifest checked in a checkout: its counts, written in the report as `gate`
/// words them (`12/12 OK`, or `10/12 OK, 1 FAILED, 1 MISSING`) and read back strictly by
/// manifests' own [`manifests::Summary`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(
    description = "The manifest checked in a checkout, as gate words it: `12/12 OK`, or what failed."
)]
pub(crate) struct ManifestCheck(pub manifests::Summary);

impl ManifestCheck {
    /// Whether every entry of a manifest that has entries is OK: proof the tree is the reviewed
    /// one (an empty manifest proves nothing).
    pub fn holds(self) -> bool {
        self.0.total > 0 && self.0.all_ok()
    }
}

impl std::fmt::Display for ManifestCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A deterministic share of a spec: the K-th of N, from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Shard {
    #[schemars(range(min = 1))]
    pub k: usize,
    #[schemars(range(min = 1))]
    pub n: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ok: usize, total: usize, failed: usize, missing: usize) -> ManifestCheck {
        ManifestCheck(manifests::Summary {
            total,
            ok,
            failed,
            missing,
        })
    }

    #[test]
    fn manifest_checks_hold_only_when_whole_and_read_back_as_written() {
        assert!(check(12, 12, 0, 0).holds());
        assert!(!check(11, 12, 1, 0).holds());
        assert!(!check(0, 0, 0, 0).holds());
        for c in [
            check(12, 12, 0, 0),
            check(10, 12, 1, 1),
            check(11, 12, 0, 1),
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<ManifestCheck>(&json).unwrap(), c);
        }
        assert_eq!(
            serde_json::to_value(check(10, 12, 1, 1)).unwrap(),
            "10/12 OK, 1 FAILED, 1 MISSING"
        );
        for bad in [
            "",
            "12/12",
            "12/12 OK, 0 FAILED",
            "12/12 OK, 1 BROKEN",
            "a/b OK",
            "12/12 OK ",
        ] {
            let json = serde_json::Value::from(bad);
            assert!(
                serde_json::from_value::<ManifestCheck>(json).is_err(),
                "{bad:?}"
            );
        }
    }
}
