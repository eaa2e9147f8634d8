//! What the record says of the candidate itself, apart from its suites: the manifest check and
//! its entries, the deleted paths, drift and the checkout; and the findings they make.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use candidate::apply::Applied;
use candidate::git::Commit;

use super::Finding;

/// One manifest entry's result, as reported.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct EntryFact {
    pub path: String,
    pub status: manifests::Status,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[schemars(extend("x-optional" = true))]
    pub detail: Option<String>,
}

/// The manifest check, as reported.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct ManifestFacts {
    pub file: String,
    /// The counts, written `12/12 OK` or what failed.
    pub summary: manifests::Summary,
    pub all_ok: bool,
    pub entries: Vec<EntryFact>,
}

/// A path the patch deletes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct DeletedFact {
    pub path: String,
    pub gone: bool,
}

/// A submodule the patch adds or moves, and the commit its gitlink now records.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SubmoduleFact {
    pub path: String,
    pub commit: String,
}

/// Everything known about the candidate, independent of its suites.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct CandidateFacts {
    pub base_rev: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub base: String,
    pub head_rev: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub head: String,
    pub patch: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub patch_sha256: String,
    /// The sha256 of the manifest file itself, so a rerun can prove it is the same manifest.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub manifest_sha256: String,
    pub manifest: ManifestFacts,
    pub deleted: Vec<DeletedFact>,
    pub drift: Vec<Commit>,
    /// Commits since base that are the candidate itself, landed on the head (same patch-id,
    /// or its paths exactly as its manifest says): reported, never a finding.
    #[serde(default)]
    pub landed: Vec<Commit>,
    pub commits_since_base: usize,
    /// Whether the base is not in the head's history: then the tree gated is not the head
    /// plus the candidate, a finding whatever drift says.
    #[serde(default)]
    pub base_off_head: bool,
    /// With `base_off_head`: the commits in `head..base` (the base's side) that touch
    /// candidate paths, and how many that range holds.
    #[serde(default)]
    pub base_side: Vec<Commit>,
    #[serde(default)]
    pub base_side_count: usize,
    /// Files the patch adds or changes that the manifest does not name: a finding.
    #[serde(default)]
    pub unnamed: Vec<String>,
    /// Submodules the patch adds or moves: checked from the patch (no sha256sum line can hold
    /// a gitlink) and bound by the tree id.
    #[serde(default)]
    pub submodules: Vec<SubmoduleFact>,
    /// Paths whose attributes name a `filter=` driver (config, not the tree): written as their
    /// blobs hold them, so not checked as a clone with that driver would write them.
    #[serde(default)]
    pub filtered: Vec<String>,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    pub worktree: String,
    pub worktree_kept: bool,
    /// Whether the run's checkout was really removed at its end (never claimed, only seen).
    #[serde(default)]
    pub worktree_removed: bool,
}

impl CandidateFacts {
    pub(crate) fn from_applied(a: &Applied, manifest_sha256: &str) -> CandidateFacts {
        let p = &a.prepared;
        CandidateFacts {
            base_rev: p.candidate.base.clone(),
            base: p.base.clone(),
            head_rev: p.candidate.head.clone(),
            head: p.head.clone(),
            patch: p.candidate.patch.display().to_string(),
            patch_sha256: p.patch_sha256.clone(),
            manifest_sha256: manifest_sha256.to_string(),
            manifest: manifest_facts(&p.candidate.manifest.display().to_string(), &a.verification),
            deleted: a
                .deleted
                .iter()
                .map(|d| DeletedFact {
                    path: String::from_utf8_lossy(&d.path).into_owned(),
                    gone: d.gone,
                })
                .collect(),
            drift: a.drift.clone(),
            landed: a.landed.clone(),
            commits_since_base: a.commits_since_base,
            base_off_head: a.off_head.is_some(),
            base_side: a
                .off_head
                .as_ref()
                .map(|o| o.base_side.clone())
                .unwrap_or_default(),
            base_side_count: a.off_head.as_ref().map_or(0, |o| o.base_side_count),
            unnamed: a.unnamed.iter().map(|p| lossy(p)).collect(),
            submodules: a
                .submodules
                .iter()
                .map(|(path, commit)| SubmoduleFact {
                    path: lossy(path),
                    commit: commit.clone(),
                })
                .collect(),
            filtered: a.filtered.iter().map(|p| lossy(p)).collect(),
            tree: a.tree.clone(),
            worktree: a.checkout.path().display().to_string(),
            worktree_kept: a.checkout.kept(),
            worktree_removed: false,
        }
    }

    /// Reasons the candidate itself (not its suites) does not hold.
    pub(crate) fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        if !self.manifest.all_ok {
            out.push(Finding::Manifest(self.manifest.summary));
        }
        let present = self.deleted.iter().filter(|d| !d.gone).count();
        if present > 0 {
            out.push(Finding::DeletedPresent(present));
        }
        if !self.unnamed.is_empty() {
            out.push(Finding::NotInManifest(self.unnamed.clone()));
        }
        if self.base_off_head {
            out.push(Finding::BaseNotAncestor {
                base: self.base.clone(),
                head: self.head.clone(),
                base_side: self.base_side.len(),
                head_side: self.drift.len() + self.landed.len(),
            });
        }
        if !self.drift.is_empty() {
            out.push(Finding::Drift(self.drift.len()));
        }
        out
    }
}

fn lossy(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// The first paths of a list, and how many more: a finding names them, the summary lists all.
pub(crate) fn first_few(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = paths[..paths.len().min(SHOWN)].join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}

fn manifest_facts(file: &str, v: &manifests::Verification) -> ManifestFacts {
    ManifestFacts {
        file: file.to_string(),
        summary: v.summary(),
        all_ok: v.all_ok(),
        entries: v
            .entries
            .iter()
            .map(|e| EntryFact {
                path: String::from_utf8_lossy(&e.path).into_owned(),
                status: e.status,
                detail: e.detail.clone(),
            })
            .collect(),
    }
}
