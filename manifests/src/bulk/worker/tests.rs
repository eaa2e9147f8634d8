//! One worker against the tree: the folders it holds and lets go, the folders it lists, the
//! files it reads through its ring or one by one.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;
use crate::bulk::ring::SMALL;
use crate::entry::Digest;

fn write(root: &Path, name: &str, bytes: &[u8]) {
    let path = root.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
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
    for i in 0..(SLOTS + 10) {
        let name = format!("d{}/f{i:03}", i % 3);
        write(dir.path(), &name, format!("{i}").as_bytes());
        rels.push(name.into_bytes());
    }
    write(dir.path(), "d0/large", &vec![1; SMALL * 2]);
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
        assert_eq!(worker.via_ring, SLOTS + 10);
    } else {
        testkit::skip("io_uring", "this kernel gives no io_uring (the ring half)");
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
        testkit::skip("io_uring", "this kernel gives no io_uring");
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
