//! The fast path against the path-by-path walk it stands in for: on a tree of every kind of
//! entry, both give the same result for every path, and the same error for the whole call.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use super::*;
use crate::hash::hash_file;

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
fn a_path_splits_into_its_folder_and_its_name_as_the_walk_reads_it() {
    let split = |p: &str| split_last(p.as_bytes()).map(|(d, n)| (d.to_vec(), n.to_vec()));
    let pair = |d: &str, n: &str| Some((d.as_bytes().to_vec(), n.as_bytes().to_vec()));
    assert_eq!(split("a"), pair("", "a"));
    assert_eq!(split("a/b/c"), pair("a/b/", "c"));
    assert_eq!(split("a/./b/."), pair("a/./", "b"));
    assert_eq!(split("./a//b"), pair("./a//", "b"));
    assert_eq!(split("a/."), pair("", "a"));
    assert_eq!(split("./."), None);
    let names: Vec<&[u8]> = components(b"./a//b/./c/").collect();
    assert_eq!(names, [&b"a"[..], b"b", b"c"]);
}

#[test]
fn a_folder_listed_once_answers_for_each_of_its_names() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        write(dir.path(), &format!("f/{name}"), name.as_bytes());
    }
    fs::create_dir(dir.path().join("f/sub")).unwrap();
    symlink("a", dir.path().join("f/link")).unwrap();
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Plain);
    assert!(worker.list(b"f/", LIST_FROM));
    let names: Vec<&[u8]> = worker
        .listing
        .entries
        .iter()
        .map(|&(s, e, _)| &worker.listing.names[s..e])
        .filter(|n| !n.starts_with(b"."))
        .collect();
    assert_eq!(names, [&b"a"[..], b"b", b"c", b"link", b"sub"]);
    assert!(matches!(worker.stat_listed(b"f/b"), Stat::File));
    assert!(matches!(worker.stat_listed(b"f/sub"), Stat::Other));
    assert!(matches!(worker.stat_listed(b"f/link"), Stat::Other));
    assert!(matches!(worker.stat_listed(b"f/zzz"), Stat::Missing));
    assert!(!worker.list(b"nowhere/", LIST_FROM));
    // A FIFO where a file was listed is neither waited on nor read.
    nix::unistd::mkfifo(&dir.path().join("f/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let read = worker.read(b"f/fifo", true).unwrap_err();
    assert_eq!(read.to_string(), "not a regular file");
    assert!(!worker.list(b"f/a/", LIST_FROM));
    // A run of LIST_FROM names in one folder is answered from its listing, a shorter one not:
    // a name removed after the listing still shows as listed.
    let paths: Vec<Vec<u8>> = (0..LIST_FROM)
        .map(|i| format!("g/{i}").into_bytes())
        .collect();
    for p in &paths {
        write(dir.path(), std::str::from_utf8(p).unwrap(), b"x");
    }
    let items: Vec<usize> = (0..paths.len()).collect();
    let mut out = Vec::new();
    worker.stat_all(&items, |i| &paths[i], &mut out);
    assert!(out.iter().all(|(_, s)| matches!(s, Stat::File)), "{out:?}");
    assert!(worker.listing.find(b"0").is_some(), "g/ was not listed");
    out.clear();
    worker.stat_all(&items[..LIST_FROM - 1], |i| &paths[i], &mut out);
    assert!(out.iter().all(|(_, s)| matches!(s, Stat::File)));
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
fn a_worker_reopens_only_the_folders_a_path_does_not_share_with_the_last() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/b/c/f", b"1");
    write(dir.path(), "a/b/d/g", b"held");
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Plain);
    worker.enter(b"a/b/c/").unwrap();
    // Swap another `a/b` in by name: a worker that kept its handle on `a/b` still sees the
    // folder it opened, one that reopened it would see the new one.
    fs::rename(dir.path().join("a/b"), dir.path().join("a/moved")).unwrap();
    write(dir.path(), "a/b/d/g", b"new");
    let digest = |worker: &mut Worker<'_>, path: &[u8]| match worker.read(path, false) {
        Ok(Read::Done(d)) => d,
        other => panic!("{other:?}"),
    };
    assert_eq!(digest(&mut worker, b"a/./b//d/g"), Digest::of(b"held"));
    let names: Vec<&[u8]> = worker.open.iter().map(|(n, _)| n.as_slice()).collect();
    assert_eq!(names, [&b"a"[..], b"b", b"d"]);
    // Leaving `a` reopens it, and finds the new `a/b`.
    assert!(matches!(worker.stat(b"top"), Stat::Missing));
    assert!(worker.open.is_empty());
    assert_eq!(digest(&mut worker, b"a/b/d/g"), Digest::of(b"new"));
    assert_eq!(worker.enter(b"a/nope/x").unwrap_err(), Errno::ENOENT);
    assert!(matches!(worker.stat(b"a/b/d/none"), Stat::Missing));
    assert!(matches!(worker.stat(b"a/b/d"), Stat::Other));
    assert!(matches!(worker.stat(b"a/b/d/g/x"), Stat::Other));
}

#[test]
fn small_files_go_through_the_ring_and_the_rest_the_ordinary_way() {
    let dir = tempfile::tempdir().unwrap();
    let mut rels: Vec<Vec<u8>> = Vec::new();
    for i in 0..(ring::SLOTS + 10) {
        let name = format!("d{}/f{i:03}", i % 3);
        write(dir.path(), &name, format!("{i}").as_bytes());
        rels.push(name.into_bytes());
    }
    write(dir.path(), "d0/large", &vec![1; ring::SMALL * 2]);
    rels.push(b"d0/large".to_vec());
    rels.push(b"d0/absent".to_vec());
    rels.sort();
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Ring);
    let items: Vec<usize> = (0..rels.len()).collect();
    let mut out = Vec::new();
    worker.read_all(&items, |i| &rels[i], &mut out);
    out.sort_by_key(|&(i, _)| i);
    assert_eq!(out.len(), rels.len());
    for (i, read) in &out {
        let path = dir.path().join(std::str::from_utf8(&rels[*i]).unwrap());
        match (fs::read(&path), read) {
            (Ok(bytes), Fast::Read(Ok(Read::Done(d)))) => assert_eq!(*d, Digest::of(&bytes)),
            (Err(_), Fast::Read(Err(e))) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
            (want, got) => panic!("{}: {want:?} but {got:?}", path.display()),
        }
    }
    if worker.ring.is_some() {
        // Every small file came from the ring, none from a read of its own.
        assert_eq!(worker.via_ring, ring::SLOTS + 10);
    } else {
        eprintln!("SKIP (ring half): this kernel gives no io_uring");
        assert_eq!(worker.via_ring, 0);
    }
    // No folder handle is kept once the batch has run.
    assert!(worker.left.is_empty());
}

#[test]
fn a_file_gone_shorter_than_its_begun_hash_is_read_again_from_its_start() {
    use sha2::Digest as _;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", b"hello");
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Plain);
    let begun = |bytes: &[u8]| Begun {
        hasher: sha2::Sha256::new_with_prefix(bytes),
        bytes: bytes.len() as u64,
    };
    let digest = |read: io::Result<Read>| match read {
        Ok(Read::Done(d)) => d,
        other => panic!("{other:?}"),
    };
    // Begun on what is still the file's start: it goes on from there.
    let read = worker.read_on(b"f", true, Some(begun(b"hel")));
    assert_eq!(digest(read), Digest::of(b"hello"));
    // Begun on more than the file now holds: what was begun is dropped.
    let read = worker.read_on(b"f", true, Some(begun(b"hello, world")));
    assert_eq!(digest(read), Digest::of(b"hello"));
}

#[test]
fn a_wide_folder_is_listed_only_for_about_as_many_names_as_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let wide = 3000;
    fs::create_dir(dir.path().join("wide")).unwrap();
    for i in 0..wide {
        fs::write(dir.path().join(format!("wide/entry-{i:05}")), b"").unwrap();
    }
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Plain);
    let paths: Vec<Vec<u8>> = (0..wide)
        .map(|i| format!("wide/entry-{i:05}").into_bytes())
        .collect();
    // A few names: each looked up, the folder not listed, the answers the same.
    let items: Vec<usize> = (0..LIST_FROM).collect();
    let mut out = Vec::new();
    worker.stat_all(&items, |i| &paths[i], &mut out);
    assert!(out.iter().all(|(_, s)| matches!(s, Stat::File)), "{out:?}");
    assert!(
        worker.listing.entries.is_empty(),
        "wide/ was listed for 8 names"
    );
    // All of its names: listed once.
    let items: Vec<usize> = (0..wide).collect();
    out.clear();
    worker.stat_all(&items, |i| &paths[i], &mut out);
    assert!(out.iter().all(|(_, s)| matches!(s, Stat::File)));
    assert!(
        worker.listing.find(b"entry-00000").is_some(),
        "wide/ was not listed"
    );
}

#[test]
fn a_folder_deeper_than_a_worker_holds_is_walked_to_and_never_held() {
    let dir = tempfile::tempdir().unwrap();
    let deep: Vec<String> = (0..HELD * 3).map(|i| format!("d{i}")).collect();
    let file = format!("{}/f", deep.join("/"));
    write(dir.path(), &file, b"deep");
    // A link where a deep folder should be is refused on the walk as on a held path.
    let linked = format!("{}/link/f", deep[..HELD + 2].join("/"));
    std::os::unix::fs::symlink(
        dir.path().join(deep[..HELD + 3].join("/")),
        dir.path().join(deep[..HELD + 2].join("/")).join("link"),
    )
    .unwrap();
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Plain);
    match worker.read(file.as_bytes(), false) {
        Ok(Read::Done(d)) => assert_eq!(d, Digest::of(b"deep")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(worker.stat(file.as_bytes()), Stat::File));
    assert!(
        worker.open.len() <= HELD,
        "{} folders held",
        worker.open.len()
    );
    assert!(matches!(worker.stat(linked.as_bytes()), Stat::Other));
    assert!(worker.read(linked.as_bytes(), false).is_err());
    // Nor through the ring, which queues files by their folder's handle.
    let mut worker = Worker::new(root.as_fd(), Io::Ring);
    let rels = [file.into_bytes()];
    let mut out = Vec::new();
    worker.read_all(&[0], |i| &rels[i], &mut out);
    assert!(
        matches!(&out[..], [(0, Fast::Read(Ok(Read::Done(d))))] if *d == Digest::of(b"deep")),
        "{out:?}"
    );
    assert!(
        worker.open.len() <= HELD,
        "{} folders held",
        worker.open.len()
    );
}

#[test]
fn a_batch_of_files_in_many_folders_lets_them_go_before_it_holds_too_many() {
    let dir = tempfile::tempdir().unwrap();
    // Each file in a folder of its own, four deep: every new file lets four folders go while
    // the batch (which could take 64 files) still names the last ones.
    let mut rels: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("x{i}/a/b/c/f").into_bytes())
        .collect();
    rels.sort();
    for rel in &rels {
        write(dir.path(), std::str::from_utf8(rel).unwrap(), rel);
    }
    let root = nix::fcntl::open(dir.path(), FOLDER, Mode::empty()).unwrap();
    let mut worker = Worker::new(root.as_fd(), Io::Ring);
    let items: Vec<usize> = (0..rels.len()).collect();
    let mut out = Vec::new();
    worker.read_all(&items, |i| &rels[i], &mut out);
    assert_eq!(out.len(), rels.len());
    for (i, fast) in &out {
        assert!(
            matches!(fast, Fast::Read(Ok(Read::Done(d))) if *d == Digest::of(&rels[*i])),
            "{fast:?}"
        );
    }
    if worker.ring.is_none() {
        eprintln!("SKIP: this kernel gives no io_uring");
        return;
    }
    assert!(worker.via_ring > 0);
    // At most the bound, and the four of the one folder that tipped it over.
    assert!(
        worker.most_left <= LEFT_MAX + 4,
        "a batch held {} folders",
        worker.most_left
    );
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
