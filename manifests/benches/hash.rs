//! Throughput of `verify` against the real `sha256sum -c` on the same tree and manifest, in two
//! cases, both run by default (`GATEKIT_BENCH_CASE=large` or `small` for one):
//!
//! - large: about GATEKIT_BENCH_MB megabytes (default 1024): half in four large files, half in
//!   many small ones from 1 KiB to 256 KiB, which is the mix a source tree with a few assets
//!   looks like. What differs there is hashing and parallelism.
//! - small: GATEKIT_BENCH_FILES files (default 100,000) of 150 to 250 bytes in nested folders
//!   (`tree/aN/bN/cN/`, 50 files a folder), the shape of a large source tree. Hashing costs
//!   nothing there; what is timed is finding, opening and reading each file. Our side is the
//!   whole of `gate check` but its output: the manifest read from disk and parsed, then
//!   `verify_owned`; timed twice, with io_uring as the tool uses it and with plain calls
//!   (`GATEKIT_IO_URING=0`, what a kernel or container without io_uring gets). Beside them,
//!   the floor: the least any checker must do (open, read, close and hash each file, and
//!   nothing else), so the ratio the machine allows is printed with the ratio gate gets.
//!
//! Both run warm: the tree is synced to disk and every file read once before timing, and each
//! checker runs five times (`GATEKIT_BENCH_RUNS`), interleaved (so a burst of load from elsewhere hits both alike), reporting the best and the
//! median. Warm is the case that isolates what differs between them, not the disk. The
//! machine's load average (`/proc/loadavg`) is printed before and after each case: a ratio
//! measured under load from other work is not the tool's.
//!
//! - cold (`GATEKIT_BENCH_CASE=cold` only, never by default): the small case with the page
//!   cache dropped before every run (`sync`, then `3` into `/proc/sys/vm/drop_caches`, which
//!   needs root and drops the clean caches of the whole machine; skipped with a notice
//!   otherwise), three runs each. This is where reading many files at once pays: every open
//!   and read waits for the disk.

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use manifests::{manifest_for, parse, verify, verify_owned};

/// How many timed runs each checker gets: `GATEKIT_BENCH_RUNS`, else 5. A machine whose
/// timings wander (a VM's neighbours) wants more before a median means much.
fn runs() -> usize {
    knob("GATEKIT_BENCH_RUNS", 5) as usize
}

/// The positive number the variable `name` holds, else `default`.
fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn main() {
    let case = std::env::var("GATEKIT_BENCH_CASE").unwrap_or_default();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("bench: {threads} cores");
    if case.is_empty() || case == "large" {
        large();
    }
    if case.is_empty() || case == "small" {
        small();
    }
    if case == "cold" {
        cold();
    }
}

/// The machine's load averages over 1, 5 and 15 minutes, as `/proc/loadavg` says them.
fn load() -> String {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let parts: Vec<&str> = text.split_whitespace().take(3).collect();
    format!("load average {}", parts.join(" "))
}

fn large() {
    let mb = knob("GATEKIT_BENCH_MB", 1024);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    println!("\nlarge: {mb} MB in {} ({})", root.display(), load());

    let started = Instant::now();
    let (names, bytes) = write_tree(root, mb * 1024 * 1024);
    println!(
        "wrote {} files, {bytes} bytes in {:.1?}",
        names.len(),
        started.elapsed()
    );

    let started = Instant::now();
    let manifest = manifest_for(root, &names).expect("manifest_for");
    println!("manifest_for: {:.1?}", started.elapsed());
    let list = root.join("bench.sha256");
    fs::write(&list, manifest.to_bytes()).expect("write manifest");

    warm(root, &names);

    let (ours, theirs) = interleaved(
        || {
            let v = verify(root, &manifest).expect("verify");
            assert!(v.all_ok(), "verify: {}", v.summary());
        },
        || sha256sum_check(root, &list),
    );
    let (ours_best, ours_median) = (ours[0], ours[ours.len() / 2]);
    let (theirs_best, theirs_median) = (theirs[0], theirs[theirs.len() / 2]);

    let gbps = |t: Duration| bytes as f64 / t.as_secs_f64() / 1e9;
    println!(
        "manifests::verify  best {:.3} s = {:.2} GB/s   median {:.3} s = {:.2} GB/s",
        ours_best.as_secs_f64(),
        gbps(ours_best),
        ours_median.as_secs_f64(),
        gbps(ours_median)
    );
    println!(
        "sha256sum -c       best {:.3} s = {:.2} GB/s   median {:.3} s = {:.2} GB/s",
        theirs_best.as_secs_f64(),
        gbps(theirs_best),
        theirs_median.as_secs_f64(),
        gbps(theirs_median)
    );
    println!(
        "ratio (sha256sum time / verify time): best {:.2}x, median {:.2}x  ({} runs each, warm cache; {})",
        theirs_best.as_secs_f64() / ours_best.as_secs_f64(),
        theirs_median.as_secs_f64() / ours_median.as_secs_f64(),
        ours.len(),
        load()
    );
}

/// GATEKIT_BENCH_FILES, default 100,000.
fn small_files() -> usize {
    knob("GATEKIT_BENCH_FILES", 100_000) as usize
}

/// `files` files of 150 to 250 bytes in `root/tree/aN/bN/cN/`, 50 a folder, and their manifest
/// at `root/bench.sha256`: the names and the manifest's path.
fn small_tree(root: &Path, files: usize) -> (Vec<Vec<u8>>, std::path::PathBuf) {
    let started = Instant::now();
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut names = Vec::with_capacity(files);
    let mut bytes = 0;
    for i in 0..files {
        let folder = i / 50;
        let name = format!(
            "tree/a{}/b{}/c{}/file-{i:06}.txt",
            folder / 200,
            folder / 20 % 10,
            folder % 20
        )
        .into_bytes();
        let size = 150 + rng.next() % 101;
        let content: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
        let path = root.join(OsStr::from_bytes(&name));
        if i % 50 == 0 {
            fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
        }
        fs::write(&path, content).expect("write");
        bytes += size;
        names.push(name);
    }
    println!(
        "wrote {files} files, {bytes} bytes in {:.1?}",
        started.elapsed()
    );
    let manifest = manifest_for(root, &names).expect("manifest_for");
    let list = root.join("bench.sha256");
    fs::write(&list, manifest.to_bytes()).expect("write manifest");
    (names, list)
}

/// `gate check`'s work but its output: the manifest read from disk and parsed, then
/// `verify_owned`, which must pass; the results are left, as gate leaves them, to the end of
/// the process.
fn gate_check(root: &Path, list: &Path) {
    let parsed = parse(&fs::read(list).expect("read manifest")).expect("parse");
    let v = verify_owned(root, parsed).expect("verify");
    assert!(v.all_ok(), "verify: {}", v.summary());
    std::mem::forget(v);
}

/// [`gate_check`] with io_uring turned off, as on a kernel that forbids it. The variable is
/// read when a check starts, on this thread, before any worker is spawned.
fn gate_check_plain(root: &Path, list: &Path) {
    std::env::set_var("GATEKIT_IO_URING", "0");
    gate_check(root, list);
    std::env::remove_var("GATEKIT_IO_URING");
}

/// Many small files in nested folders: the cost of finding and opening each one.
fn small() {
    let files = small_files();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    println!("\nsmall: {files} files in {} ({})", root.display(), load());
    let (names, list) = small_tree(root, files);
    warm(root, &names);
    let folders = by_folder(&names);
    let times = interleaved_all(
        &[
            &|| gate_check(root, &list),
            &|| gate_check_plain(root, &list),
            &|| sha256sum_check(root, &list),
            &|| floor(root, &folders, files),
        ],
        runs(),
        &|| {},
    );
    small_report(&times, files, "warm cache");
}

/// `names` grouped by folder (they come folder by folder): each folder with its file names.
fn by_folder(names: &[Vec<u8>]) -> Vec<(Vec<u8>, Vec<std::ffi::CString>)> {
    let mut folders: Vec<(Vec<u8>, Vec<std::ffi::CString>)> = Vec::new();
    for name in names {
        let at = name.iter().rposition(|&b| b == b'/').expect("a folder");
        let (folder, file) = (&name[..at], &name[at + 1..]);
        if folders.last().map(|(f, _)| f.as_slice()) != Some(folder) {
            folders.push((folder.to_vec(), Vec::new()));
        }
        let file = std::ffi::CString::new(file).expect("no NUL");
        folders.last_mut().expect("pushed").1.push(file);
    }
    folders
}

/// The least any checker of these files must do, and nothing else: on two threads a core, each
/// with its own io_uring, open each file by name in its folder, read it and close it (linked,
/// 64 at a time, one trip into the kernel), and hash what was read. No manifest, no lookup of
/// what each name is, no results: what `gate check` does beyond this is the price of its
/// promises (a FIFO or device node never opened, every path judged, a result per line). Its
/// ratio to `sha256sum -c` is about the most any tool can show on this machine.
fn floor(root: &Path, folders: &[(Vec<u8>, Vec<std::ffi::CString>)], files: usize) {
    use io_uring::{opcode, squeue, types, IoUring};
    use nix::libc;
    use sha2::Digest as _;
    const SLOTS: usize = 64;
    const BUF: usize = 4096;
    let workers = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = folders.len().div_ceil(workers);
    let read: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = folders
            .chunks(share.max(1))
            .map(|mine| {
                scope.spawn(move || {
                    let mut ring = IoUring::new((SLOTS * 3) as u32).expect("io_uring");
                    ring.submitter()
                        .register_files_sparse(SLOTS as u32)
                        .expect("fixed files");
                    let mut bufs = vec![[0u8; BUF]; SLOTS];
                    let mut lens = [0i32; SLOTS];
                    let mut read = 0;
                    for (folder, names) in mine {
                        let dir = fs::File::open(root.join(OsStr::from_bytes(folder)))
                            .expect("open folder");
                        let dir = std::os::fd::AsRawFd::as_raw_fd(&dir);
                        for batch in names.chunks(SLOTS) {
                            for (k, (name, buf)) in batch.iter().zip(&mut bufs).enumerate() {
                                let slot = types::DestinationSlot::try_from_slot_target(k as u32)
                                    .expect("a slot");
                                let steps = [
                                    opcode::OpenAt::new(types::Fd(dir), name.as_ptr())
                                        .flags(libc::O_RDONLY | libc::O_NOFOLLOW)
                                        .file_index(Some(slot))
                                        .build()
                                        .flags(squeue::Flags::IO_LINK)
                                        .user_data(u64::MAX),
                                    opcode::Read::new(
                                        types::Fixed(k as u32),
                                        buf.as_mut_ptr(),
                                        BUF as u32,
                                    )
                                    .offset(0)
                                    .build()
                                    .flags(squeue::Flags::IO_LINK)
                                    .user_data(k as u64),
                                    opcode::Close::new(types::Fixed(k as u32))
                                        .build()
                                        .user_data(u64::MAX),
                                ];
                                // SAFETY: the names and buffers outlive the wait below, which
                                // reaps every entry pushed here.
                                unsafe { ring.submission().push_multiple(&steps) }
                                    .expect("room in the queue");
                            }
                            let mut left = batch.len() * 3;
                            while left > 0 {
                                ring.submit_and_wait(left).expect("submit");
                                for cqe in ring.completion() {
                                    left -= 1;
                                    if let Some(len) = lens.get_mut(cqe.user_data() as usize) {
                                        *len = cqe.result();
                                    }
                                }
                            }
                            for (buf, &len) in bufs.iter().zip(&lens).take(batch.len()) {
                                let len = usize::try_from(len).expect("a file read");
                                std::hint::black_box(sha2::Sha256::digest(&buf[..len]));
                                read += 1;
                            }
                        }
                    }
                    read
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker"))
            .sum()
    });
    assert_eq!(read, files, "the floor read every file");
}

/// The small case from a cold page cache: dropped before every run.
fn cold() {
    let files = small_files();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    println!("\ncold: {files} files in {} ({})", root.display(), load());
    if let Err(e) = drop_caches() {
        println!("cold: skipped: the page cache cannot be dropped here ({e}; it needs root)");
        return;
    }
    let (_, list) = small_tree(root, files);
    let runs = 3;
    let times = interleaved_all(
        &[
            &|| gate_check(root, &list),
            &|| gate_check_plain(root, &list),
            &|| sha256sum_check(root, &list),
        ],
        runs,
        &|| drop_caches().expect("drop the page cache"),
    );
    small_report(&times, files, "page cache dropped before each run");
}

/// Writes the tree's dirty pages out, then drops the machine's clean page cache, dentries and
/// inodes, so the next run reads everything from the disk.
fn drop_caches() -> std::io::Result<()> {
    nix::unistd::sync();
    fs::write("/proc/sys/vm/drop_caches", "3")
}

/// The small cases' lines: each checker's best and median, and the ratios.
fn small_report(times: &[Vec<Duration>], files: usize, how: &str) {
    let per_file = |t: Duration| t.as_secs_f64() * 1e6 / files as f64;
    let mid = times[0].len() / 2;
    for (label, times) in ["parse + verify", "  plain calls", "sha256sum -c", "floor"]
        .iter()
        .zip(times)
    {
        println!(
            "{label:<16} best {:.3} s   median {:.3} s = {:.1} us a file",
            times[0].as_secs_f64(),
            times[mid].as_secs_f64(),
            per_file(times[mid])
        );
    }
    let ratio = |ours: &[Duration], at: usize| times[2][at].as_secs_f64() / ours[at].as_secs_f64();
    println!(
        "ratio (sha256sum time / gate's time): best {:.2}x, median {:.2}x; with plain calls (GATEKIT_IO_URING=0): best {:.2}x, median {:.2}x  ({} runs each, {how}; {})",
        ratio(&times[0], 0),
        ratio(&times[0], mid),
        ratio(&times[1], 0),
        ratio(&times[1], mid),
        times[0].len(),
        load()
    );
    if let Some(floor) = times.get(3) {
        println!(
            "ratio (sha256sum time / the floor's time): best {:.2}x, median {:.2}x: about the most \
             any checker shows here; gate's time is {:.2}x the floor's (median)",
            ratio(floor, 0),
            ratio(floor, mid),
            times[0][mid].as_secs_f64() / floor[mid].as_secs_f64()
        );
    }
}

/// Times `ours` and `theirs` [`runs`] times each, alternating, after one untimed run of each;
/// both lists come back sorted.
fn interleaved(ours: impl Fn(), theirs: impl Fn()) -> (Vec<Duration>, Vec<Duration>) {
    let mut times = interleaved_all(&[&ours, &theirs], runs(), &|| {}).into_iter();
    let ours = times.next().unwrap_or_default();
    (ours, times.next().unwrap_or_default())
}

/// Times each of `runs` `rounds` times, in turn, after one untimed run of each, with `before`
/// (untimed) before every run; each list comes back sorted.
fn interleaved_all(runs: &[&dyn Fn()], rounds: usize, before: &dyn Fn()) -> Vec<Vec<Duration>> {
    for run in runs {
        before();
        run();
    }
    let mut times = vec![Vec::new(); runs.len()];
    for _ in 0..rounds {
        for (run, times) in runs.iter().zip(&mut times) {
            before();
            times.push(timed(run));
        }
    }
    for times in &mut times {
        times.sort();
    }
    times
}

/// `sha256sum -c --strict --quiet LIST` in `root`, which must pass.
fn sha256sum_check(root: &Path, list: &Path) {
    let status = Command::new("/usr/bin/sha256sum")
        .args(["-c", "--strict", "--quiet"])
        .arg(list)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run sha256sum");
    assert!(status.success(), "sha256sum -c failed");
}

fn timed(run: impl Fn()) -> Duration {
    let started = Instant::now();
    run();
    started.elapsed()
}

/// Half the bytes in four large files, half in small files of pseudo-random sizes.
fn write_tree(root: &Path, total: u64) -> (Vec<Vec<u8>>, u64) {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut names = Vec::new();
    let mut written = 0u64;
    let large = total / 2 / 4;
    for i in 0..4 {
        let name = format!("large/blob {i}.bin").into_bytes();
        write_file(root, &name, large, &mut rng);
        names.push(name);
        written += large;
    }
    let mut i = 0;
    while written < total {
        let size = (1024 + rng.next() % (255 * 1024)).min(total - written);
        let name = format!("src/mod{}/file{i}.rs", i % 64).into_bytes();
        write_file(root, &name, size, &mut rng);
        names.push(name);
        written += size;
        i += 1;
    }
    (names, written)
}

fn write_file(root: &Path, name: &[u8], size: u64, rng: &mut XorShift) {
    let path = root.join(OsStr::from_bytes(name));
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    let mut file =
        std::io::BufWriter::with_capacity(1 << 20, fs::File::create(&path).expect("create"));
    let mut left = size;
    let mut chunk = vec![0u8; 1 << 16];
    while left > 0 {
        for word in chunk.chunks_exact_mut(8) {
            word.copy_from_slice(&rng.next().to_le_bytes());
        }
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n]).expect("write");
        left -= n as u64;
    }
    file.flush().expect("flush");
}

/// Writes the tree out and reads every file once, so neither checker pays for the first read
/// from disk, nor runs while the kernel is still writing the tree back (on this machine,
/// writing 100,000 files left seconds of writeback that slowed whichever runs it overlapped).
fn warm(root: &Path, names: &[Vec<u8>]) {
    nix::unistd::sync();
    let mut buf = vec![0u8; 1 << 20];
    for name in names {
        let mut f = fs::File::open(root.join(OsStr::from_bytes(name))).expect("open");
        while f.read(&mut buf).expect("read") > 0 {}
    }
}

/// Incompressible-looking content without a dependency; quality does not matter here.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
