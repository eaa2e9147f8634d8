//! Cargo's build folder moved to another checkout: the units that baked in the old path are
//! made to rebuild.
//!
//! Cargo's fingerprints are relative to the workspace, so a `target/` copied from one checkout
//! to another is fresh there, with one exception Cargo does not track: a unit that read an
//! absolute path at compile time (`env!("CARGO_MANIFEST_DIR")`, `env!("OUT_DIR")`, an
//! `include_str!` of an absolute path) still holds the *old* checkout's path, and its test
//! would read the other job's files, where another mutant may be swapped in. rustc writes every
//! such input into the unit's dep-info (`# env-dep:CARGO_MANIFEST_DIR=/old/root`, or the
//! absolute file as a dependency), so each unit whose dep-info names the old root (outside its
//! own output lines) loses its fingerprint, and Cargo rebuilds it where it now is.

use std::fs;
use std::path::Path;

/// Forgets (removes the fingerprint of) every unit in the Cargo build folder `rel` of
/// `checkout` whose dep-info names `old_root`, the checkout the folder was built in; returns
/// how many.
pub(crate) fn forget_units_bound_to(checkout: &Path, rel: &str, old_root: &Path) -> usize {
    let target = checkout.join(rel);
    let (Some(root), Some(old_target)) = (
        old_root.to_str(),
        old_root.join(rel).to_str().map(String::from),
    ) else {
        return 0;
    };
    let mut forgotten = 0;
    for profile in profiles(&target, 3) {
        let fingerprints = profile.join(".fingerprint");
        let mut dep_infos = Vec::new();
        if let Ok(deps) = fs::read_dir(profile.join("deps")) {
            for e in deps.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "d") {
                    let stem = p.file_stem().map(|s| s.to_os_string());
                    dep_infos.push((p, stem));
                }
            }
        }
        // Build scripts: `build/PKG-HASH/build_script_build-HASH.d`, fingerprint `PKG-HASH`.
        if let Ok(builds) = fs::read_dir(profile.join("build")) {
            for b in builds.flatten() {
                if let Ok(files) = fs::read_dir(b.path()) {
                    for f in files.flatten() {
                        let p = f.path();
                        if p.extension().is_some_and(|x| x == "d") {
                            dep_infos.push((p, Some(b.file_name())));
                        }
                    }
                }
            }
        }
        for (dep_info, unit) in dep_infos {
            let Some(unit) = unit else { continue };
            let Ok(text) = fs::read(&dep_info) else {
                continue;
            };
            if names_old_root(&String::from_utf8_lossy(&text), root, &old_target)
                && report::scratch::remove_all(&fingerprints.join(&unit)).is_ok()
            {
                forgotten += 1;
            }
        }
    }
    forgotten
}

/// Whether a dep-info text names `root` anywhere but in the output paths its rules start with
/// (those are always in the old build folder and mean nothing).
fn names_old_root(text: &str, root: &str, old_target: &str) -> bool {
    text.lines().any(|line| {
        let rest = match line.strip_prefix(old_target) {
            Some(after) => after.split_once(": ").map_or("", |(_, deps)| deps),
            None => line,
        };
        rest.contains(root)
    })
}

/// The profile folders (`target/debug`, `target/x86_64-unknown-linux-gnu/release`) under
/// `dir`: those holding a `.fingerprint` folder, at most `depth` levels down.
fn profiles(dir: &Path, depth: usize) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    if dir.join(".fingerprint").is_dir() {
        found.push(dir.to_path_buf());
    }
    if depth == 0 {
        return found;
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && !name.to_string_lossy().starts_with('.') && name != "deps" {
                found.extend(profiles(&e.path(), depth - 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_that_read_the_old_path_is_named_and_its_output_lines_are_not() {
        let (root, target) = ("/w/a", "/w/a/target");
        let plain = "/w/a/target/debug/deps/x-1: src/lib.rs\n\nsrc/lib.rs:\n";
        assert!(!names_old_root(plain, root, target));
        let env = format!("{plain}\n# env-dep:CARGO_MANIFEST_DIR=/w/a\n");
        assert!(names_old_root(&env, root, target));
        let file = "/w/a/target/debug/deps/x-1: src/lib.rs /w/a/data.txt\n";
        assert!(names_old_root(file, root, target));
    }

    #[test]
    fn forgetting_removes_only_the_bound_units_fingerprint() {
        let tmp = tempfile::tempdir().unwrap();
        let debug = tmp.path().join("new/target/debug");
        for unit in ["bound-1", "free-2"] {
            fs::create_dir_all(debug.join(".fingerprint").join(unit)).unwrap();
        }
        fs::create_dir_all(debug.join("deps")).unwrap();
        fs::write(
            debug.join("deps/bound-1.d"),
            "/old/target/debug/deps/bound-1: src/lib.rs\n# env-dep:CARGO_MANIFEST_DIR=/old\n",
        )
        .unwrap();
        fs::write(
            debug.join("deps/free-2.d"),
            "/old/target/debug/deps/free-2: src/lib.rs\n",
        )
        .unwrap();
        assert_eq!(
            forget_units_bound_to(&tmp.path().join("new"), "target", Path::new("/old")),
            1
        );
        assert!(!debug.join(".fingerprint/bound-1").exists());
        assert!(debug.join(".fingerprint/free-2").exists());
    }
}
