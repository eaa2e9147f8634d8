//! `cargo test`'s map, at the granularity to be had without an instrumented rebuild: the
//! package. A file in a workspace member's folder is reached by that member's tests and by the
//! tests of every member that depends on it (a path dependency, direct or not, of any kind:
//! a dev-dependency's tests run it too), named as cargo's options take them, `--package=NAME`,
//! for a template such as `cargo test {tests}`. Read from `cargo metadata --no-deps`, which
//! reads the manifests and runs no test; a file in no member's folder is reached by no test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::{in_tree, Map};
use candidate::suite::Items;

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    manifest_path: String,
    dependencies: Vec<Dependency>,
}

#[derive(Deserialize)]
struct Dependency {
    name: String,
    /// Set for a path dependency (a workspace member is one).
    #[serde(default)]
    path: Option<String>,
}

/// The map `cargo metadata --no-deps --format-version 1`'s output `json` gives for the
/// checkout at `root`; `None` when it does not read.
pub(super) fn read(json: &[u8], root: &Path) -> Option<Map> {
    let meta: Metadata = serde_json::from_slice(json).ok()?;
    let members: Vec<&Package> = meta
        .packages
        .iter()
        .filter(|p| meta.workspace_members.contains(&p.id))
        .collect();
    let dir_of = |p: &Package| {
        let dir = Path::new(&p.manifest_path).parent()?;
        if dir == root {
            Some(String::new())
        } else {
            in_tree(dir, root)
        }
    };
    // Who depends on whom, among the members (by name, path dependencies only).
    let names: BTreeSet<&str> = members.iter().map(|p| p.name.as_str()).collect();
    let mut dependents: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in &members {
        for d in p.dependencies.iter().filter(|d| d.path.is_some()) {
            if names.contains(d.name.as_str()) && d.name != p.name {
                dependents.entry(&d.name).or_default().insert(&p.name);
            }
        }
    }
    let mut map = Map::new(Items::Tests);
    map.packages = true;
    for p in &members {
        let Some(dir) = dir_of(p) else { continue };
        // The member and everything that reaches it through dependents, each once.
        let mut seen = BTreeSet::from([p.name.as_str()]);
        let mut todo = vec![p.name.as_str()];
        while let Some(n) = todo.pop() {
            for &q in dependents.get(n).into_iter().flatten() {
                if seen.insert(q) {
                    todo.push(q);
                }
            }
        }
        for q in seen {
            map.add_dir(&dir, &format!("--package={q}"));
        }
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::Reach;

    #[test]
    fn a_crates_files_are_reached_by_its_tests_and_its_dependents() {
        let root = Path::new("/w");
        let json = serde_json::json!({
            "workspace_members": ["a 0.1.0", "b 0.1.0", "c 0.1.0", "d 0.1.0"],
            "packages": [
                {"id": "a 0.1.0", "name": "a", "manifest_path": "/w/crates/a/Cargo.toml", "dependencies": [{"name": "serde"}]},
                {"id": "b 0.1.0", "name": "b", "manifest_path": "/w/crates/b/Cargo.toml", "dependencies": [{"name": "a", "path": "/w/crates/a"}]},
                {"id": "c 0.1.0", "name": "c", "manifest_path": "/w/c/Cargo.toml", "dependencies": [{"name": "b", "path": "/w/crates/b", "kind": "dev"}]},
                {"id": "d 0.1.0", "name": "d", "manifest_path": "/w/Cargo.toml", "dependencies": []},
            ],
        });
        let map = read(json.to_string().as_bytes(), root).unwrap();
        let reach = |f: &str| map.reach(f, 1..=1);
        let tests =
            |names: &[&str]| Reach::Tests(names.iter().map(|n| format!("--package={n}")).collect());
        assert_eq!(reach("crates/a/src/lib.rs"), tests(&["a", "b", "c"]));
        assert_eq!(reach("crates/b/src/lib.rs"), tests(&["b", "c"]));
        assert_eq!(reach("c/tests/t.rs"), tests(&["c"]));
        // The root package holds what no other member's folder does.
        assert_eq!(reach("src/main.rs"), tests(&["d"]));
        assert_eq!(reach("crates/ab/x.rs"), tests(&["d"]));
        // Packages are no files: a `{files}` template gets no list.
        assert_eq!(map.as_items(vec!["--package=a".into()], Items::Files), None);
    }
}
