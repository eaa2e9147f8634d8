//! Claims of the README that gatekit's own mutants (mutants.toml) showed no test pinned.

use std::fs;

use manifests::{hash_reader, verify, Entry, Manifest, Status};

#[test]
fn a_missing_file_alone_fails_the_check() {
    // Only OK and MISSING, no FAILED: `N/N OK` must not be reached by leaving the missing out.
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("here"), "here\n").unwrap();
    let m = Manifest {
        entries: vec![
            Entry::new(b"here", hash_reader(&b"here\n"[..]).unwrap()),
            Entry::new(b"gone", hash_reader(&b"gone\n"[..]).unwrap()),
        ],
    };
    let v = verify(dir.path(), &m).unwrap();
    let statuses: Vec<Status> = v.entries.iter().map(|c| c.status).collect();
    assert_eq!(statuses, [Status::Ok, Status::Missing]);
    assert!(!v.summary().all_ok());
    assert!(!v.all_ok());
    assert_eq!(v.summary().to_string(), "1/2 OK, 1 MISSING");
}
