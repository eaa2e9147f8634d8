//! The reviewer's real habits: a careless `git add -A` after a run stages gatekit's own
//! outputs, and pack leaves them out of the candidate, saying so.

mod common;

use common::{gate, stderr, stdout};
use testkit::Repo;

#[test]
fn pack_leaves_its_out_folder_and_gatekit_reports_out_of_the_candidate() {
    let repo = Repo::new();
    repo.write("src/lib.txt", "one\n");
    let base = repo.commit_all("base");
    repo.write("src/lib.txt", "one\ntwo\n")
        .write("gate-out/gate.json", "{}\n")
        .write("gate-out/gate-summary.txt", "gate PASS\n")
        .write("gate-out/logs/01-unit.log", "ok\n")
        .write("reports/m/mutants.json", "{}\n")
        .write("reports/m/mutants.txt", "table\n")
        .write("gate-in/old.txt", "an earlier pack's leftovers\n")
        // A folder that merely holds one of the names is the user's.
        .write("docs/gate.json", "{\"user\": true}\n");
    repo.git(["add", "-A"]);
    let out = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out", "gate-in"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    for dir in ["gate-in/", "gate-out/", "reports/m/"] {
        assert!(
            said.contains(&format!("left out {dir}: staged")),
            "{dir}: {said}"
        );
    }
    let patch = String::from_utf8_lossy(&repo.read("gate-in/build.patch")).into_owned();
    assert!(patch.contains("src/lib.txt"), "{patch}");
    assert!(patch.contains("docs/gate.json"), "{patch}");
    for gone in ["gate-out/", "reports/m/", "gate-in/old.txt"] {
        assert!(
            !patch.contains(gone),
            "{gone} is in the candidate:\n{patch}"
        );
    }
    let manifest =
        String::from_utf8_lossy(&repo.read("gate-in/candidate-manifest.sha256")).into_owned();
    assert_eq!(manifest.lines().count(), 2, "{manifest}");
}
