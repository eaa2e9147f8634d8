//! A candidate's patch in a checkout's index: how it is applied, and how the changes it made
//! are read back. Both `apply` (which checks a candidate) and `pack` (which makes one and
//! proves it applies) stand on these, so the two can never disagree on what a patch did.

use std::collections::HashSet;

use anyhow::Result;

use crate::git::Git;

/// `git apply` of a candidate's patch, to the index and the files of a checkout: exactly as
/// the patch says (whitespace neither fixed nor matched loosely, whatever config says).
pub(crate) const APPLY_ARGS: &[&str] = &["apply", "--index", "--whitespace=nowarn"];

/// `git diff --name-status -z` output as (status letter, path) pairs.
pub(crate) fn parse_name_status(out: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let Some(status) = fields.next() {
        let Some(path) = fields.next() else { break };
        changes.push((status[0], path.to_vec()));
    }
    changes
}

/// The paths the index of `repo` records as submodules (gitlinks, mode 160000).
pub(crate) fn gitlinks(repo: &Git) -> Result<HashSet<Vec<u8>>> {
    let list = repo.bytes(["ls-files", "--stage", "-z"])?;
    Ok(list
        .split(|b| *b == 0)
        .filter(|e| e.starts_with(b"160000 "))
        .filter_map(|e| {
            e.iter()
                .position(|b| *b == b'\t')
                .map(|i| e[i + 1..].to_vec())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_pairs_survive_odd_names() {
        let out = b"M\0a b.txt\0D\0dir/new\nline\0A\0x\\y\0";
        let got = parse_name_status(out);
        assert_eq!(
            got,
            vec![
                (b'M', b"a b.txt".to_vec()),
                (b'D', b"dir/new\nline".to_vec()),
                (b'A', b"x\\y".to_vec())
            ]
        );
    }
}
