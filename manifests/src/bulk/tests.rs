//! The fast path against the path-by-path walk it stands in for: on a tree of every kind of
//! entry, both give the same result for every path, and the same error for the whole call.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use super::*;
use crate::hash::{hash_file, BUFFER};

/// What the walk by name gives: [`locate_all`], then each file hashed by its real path.
fn one_by_one(root: &Path, paths: &[Vec<u8>], links: Links) -> Result<Vec<Found>, TreeError> {
    Ok(locate_all(root, paths, links)?
        .into_iter()
        .map(|place| match place {
            Located::File { real } => Found::File(hash_file(&real)),
            Located::Link { target } => Found::Link(Digest::of(&target)),
            Located::Missing => Found::Missing,
            Located::Unreadable(why) => Found::Unreadable(why),
        })
        .collect())
}

/// A comparable form (an `io::Error` is not `PartialEq`).
fn shown(found: &[Found]) -> Vec<String> {
    found
        .iter()
        .map(|f| match f {
            Found::File(Ok(d)) => format!("file {d}"),
            Found::File(Err(e)) => format!("read error: {e}"),
            Found::Link(d) => format!("link {d}"),
            Found::Missing => "missing".to_string(),
            Found::Unreadable(why) => format!("unreadable: {why}"),
        })
        .collect()
}

fn write(root: &Path, name: &str, bytes: &[u8]) {
    let path = root.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A tree with every kind of entry a manifest can name, and the paths to ask for (in no
/// sorted order, with duplicates, `.` and doubled slashes).
fn awkward_tree(root: &Path) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for i in 0..700 {
        let name = format!("src/m{}/s{}/f{i}.txt", i % 7, i % 5);
        write(root, &name, format!("file {i}\n").repeat(i % 13).as_bytes());
        paths.push(name);
    }
    write(root, "empty", b"");
    write(root, "big/exact", &vec![7; BUFFER]);
    write(root, "ring/fills", &vec![5; ring::SMALL]);
    write(root, "ring/short-of", &vec![6; ring::SMALL - 1]);
    write(root, "ring/over", &vec![4; ring::SMALL + 1]);
    write(root, "big/plus-one", &vec![8; BUFFER + 1]);
    let large: Vec<u8> = (0..LARGE as usize + 12_345)
        .map(|i| (i % 251) as u8)
        .collect();
    write(root, "big/large", &large);
    write(root, "unreadable", b"secret");
    fs::set_permissions(root.join("unreadable"), fs::Permissions::from_mode(0o000)).unwrap();
    write(root, "no-search/inner", b"inner");
    fs::set_permissions(root.join("no-search"), fs::Permissions::from_mode(0o600)).unwrap();
    write(root, "no-read/inner", b"inner");
    fs::set_permissions(root.join("no-read"), fs::Permissions::from_mode(0o300)).unwrap();
    fs::create_dir(root.join("folder")).unwrap();
    nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    write(root, "a-file", b"f");
    fs::create_dir(root.join("links")).unwrap();
    symlink("../src/m0/s0/f0.txt", root.join("links/to-file")).unwrap();
    symlink("../src", root.join("links/to-folder")).unwrap();
    symlink("nowhere", root.join("links/dangling")).unwrap();
    symlink("loop", root.join("links/loop")).unwrap();
    let canonical = root.canonicalize().unwrap();
    symlink(
        canonical.join("src/m2/s2/f2.txt"),
        root.join("links/absolute-in"),
    )
    .unwrap();
    // One folder of every kind, more than LIST_FROM entries, so its listing answers for them.
    for i in 0..4 {
        write(root, &format!("mixed/file{i}"), format!("{i}").as_bytes());
    }
    fs::create_dir(root.join("mixed/folder")).unwrap();
    nix::unistd::mkfifo(&root.join("mixed/pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    symlink("file0", root.join("mixed/link")).unwrap();
    symlink("gone", root.join("mixed/dangling")).unwrap();
    write(root, "mixed/locked", b"locked");
    fs::set_permissions(root.join("mixed/locked"), fs::Permissions::from_mode(0o000)).unwrap();
    for name in [
        "file0", "file1", "file2", "file3", "folder", "pipe", "link", "dangling", "locked",
        "missing",
    ] {
        paths.push(format!("mixed/{name}"));
    }
    paths.extend(
        [
            "empty",
            "big/exact",
            "big/plus-one",
            "ring/fills",
            "ring/short-of",
            "ring/over",
            "big/large",
            "unreadable",
            "no-search/inner",
            "no-read/inner",
            "folder",
            "pipe",
            "a-file/below",
            "links/to-file",
            "links/to-folder",
            "links/to-folder/m1/s1/f1.txt",
            "links/dangling",
            "links/loop",
            "links/absolute-in",
            "src/m0/s0/missing",
            "src/m0/missing/x",
            "missing/a/b",
            "./src//m3/s3/f3.txt",
            "src/m4/s4/f4.txt/.",
            "src/m0/s0/f0.txt",
        ]
        .map(String::from),
    );
    paths.reverse();
    paths.into_iter().map(String::into_bytes).collect()
}

#[test]
fn every_kind_of_entry_gets_what_the_walk_by_name_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let paths = awkward_tree(dir.path());
    for (links, io) in [Links::Follow, Links::AsRecorded]
        .into_iter()
        .flat_map(|links| [(links, Io::Ring), (links, Io::Plain)])
    {
        let fast = shown(&hash_all_with(dir.path(), &paths, links, io).unwrap());
        let slow = shown(&one_by_one(dir.path(), &paths, links).unwrap());
        for ((path, fast), slow) in paths.iter().zip(&fast).zip(&slow) {
            let path = String::from_utf8_lossy(path);
            assert_eq!(fast, slow, "{links:?} {io:?} {path}");
        }
        // And the walk's answers are the ones meant: content read whole, the odd kinds seen.
        let at = |name: &str| &fast[paths.iter().position(|p| p == name.as_bytes()).unwrap()];
        let large: Vec<u8> = (0..LARGE as usize + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        assert_eq!(at("big/large"), &format!("file {}", Digest::of(&large)));
        assert_eq!(
            at("big/plus-one"),
            &format!("file {}", Digest::of(&vec![8; BUFFER + 1]))
        );
        assert_eq!(at("empty"), &format!("file {}", Digest::of(b"")));
        let short = vec![6; ring::SMALL - 1];
        assert_eq!(at("ring/short-of"), &format!("file {}", Digest::of(&short)));
        let fills = vec![5; ring::SMALL];
        assert_eq!(at("ring/fills"), &format!("file {}", Digest::of(&fills)));
        let over = vec![4; ring::SMALL + 1];
        assert_eq!(at("ring/over"), &format!("file {}", Digest::of(&over)));
        assert_eq!(at("src/m0/s0/missing"), "missing");
        assert_eq!(at("missing/a/b"), "missing");
        assert_eq!(at("folder"), "unreadable: is a directory");
        assert_eq!(at("pipe"), "unreadable: not a regular file");
        assert_eq!(at("mixed/pipe"), "unreadable: not a regular file");
        assert_eq!(at("mixed/missing"), "missing");
        assert_eq!(at("mixed/file2"), &format!("file {}", Digest::of(b"2")));
        if !is_root() {
            assert!(at("unreadable").starts_with("read error: Permission denied"));
            assert!(at("mixed/locked").starts_with("read error: Permission denied"));
            assert!(at("no-search/inner").starts_with("unreadable: Permission denied"));
        }
    }
    for name in ["no-search", "no-read"] {
        fs::set_permissions(dir.path().join(name), fs::Permissions::from_mode(0o700)).unwrap();
    }
}

#[test]
fn a_link_out_of_the_tree_refuses_the_call_as_the_walk_does() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut paths = awkward_tree(root);
    fs::create_dir(root.join("out")).unwrap();
    symlink(outside.path().join("secret"), root.join("out/absolute")).unwrap();
    symlink("../..", root.join("out/up")).unwrap();
    paths.insert(300, b"out/up/x".to_vec());
    paths.insert(500, b"out/absolute".to_vec());
    let fast = hash_all(root, &paths, Links::Follow).unwrap_err();
    let slow = one_by_one(root, &paths, Links::Follow).unwrap_err();
    assert_eq!(fast.to_string(), slow.to_string());
    assert!(fast.to_string().contains("out/up"), "{fast}");

    // A path the rules refuse outright, after the link: the link is named, as it comes first.
    paths.insert(600, b"../climbs".to_vec());
    let fast = hash_all(root, &paths, Links::Follow).unwrap_err();
    assert_eq!(fast.to_string(), slow.to_string());
    // Before it: that path is named.
    paths.insert(10, b"/absolute".to_vec());
    let fast = hash_all(root, &paths, Links::Follow).unwrap_err();
    let slow = one_by_one(root, &paths, Links::Follow).unwrap_err();
    assert_eq!(fast.to_string(), slow.to_string());
    assert!(fast.to_string().contains("'/absolute'"), "{fast}");
    for name in ["no-search", "no-read"] {
        fs::set_permissions(root.join(name), fs::Permissions::from_mode(0o700)).unwrap();
    }
}

#[test]
fn work_is_cut_by_count_and_a_large_file_is_an_item_of_its_own() {
    let order: Vec<usize> = (0..600).collect();
    assert_eq!(chunked(&order, |_| 0), [0..256, 256..512, 512..600]);
    let sizes = |i: usize| if i == 3 { LARGE } else { 10 };
    let order: Vec<usize> = (0..5).collect();
    assert_eq!(chunked(&order, sizes), [0..4, 4..5]);
    let order = [3, 0, 1];
    assert_eq!(chunked(&order, sizes), [0..1, 1..3]);
    assert!(chunked(&[], |_| 0).is_empty());
}

#[test]
fn paths_are_read_folder_by_folder_and_a_list_grouped_so_is_kept_as_it_is() {
    let order_of = |paths: &[&[u8]]| -> Vec<Vec<u8>> {
        let order = sorted(paths.len(), |i| paths[i]);
        order.iter().map(|&i| paths[i].to_vec()).collect()
    };
    let bytes = |paths: &[&[u8]]| -> Vec<Vec<u8>> { paths.iter().map(|p| p.to_vec()).collect() };
    // A folder whose files are apart is put back together.
    let apart: Vec<&[u8]> = vec![b"b/x", b"a/y", b"a.txt", b"a/b/z", b"b/a"];
    assert_eq!(
        order_of(&apart),
        bytes(&[b"a.txt", b"a/b/z", b"a/y", b"b/a", b"b/x"])
    );
    // The top folder (no `/`) counts as a folder too.
    let top_apart: Vec<&[u8]> = vec![b"x", b"a/y", b"z"];
    assert_eq!(order_of(&top_apart), bytes(&[b"a/y", b"x", b"z"]));
    // Each folder's files together, in any order of folders or names: kept.
    for kept in [
        vec![&b"a"[..], b"b", b"c"],
        vec![b"c10/f", b"c10/e", b"c9/f", b"c2/f", b"top"],
        vec![b"x/b/2", b"x/b/1", b"x/a/1", b"x/2", b"x/1"],
    ] {
        assert_eq!(order_of(&kept), bytes(&kept), "{kept:?}");
    }
}

#[test]
fn workers_fit_the_descriptors_left() {
    // Plenty: as many as wanted.
    assert_eq!(workers_for(20_000, 10, 4), 4);
    // Room for two.
    assert_eq!(workers_for(RESERVE + 10 + 2 * PER_WORKER, 10, 4), 2);
    // Room for none: still one, which walks and retries rather than fail a file.
    assert_eq!(workers_for(16, 10, 4), 1);
    assert_eq!(workers_for(0, 10, 4), 1);
}
