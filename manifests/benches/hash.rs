//! Throughput of `verify` against the real `sha256sum -c` on the same tree and manifest.
//!
//! `cargo bench -p manifests --bench hash` writes about GATEKIT_BENCH_MB megabytes (default
//! 1024) of files into a temp dir: half in four large files, half in many small ones from 1 KiB
//! to 256 KiB, which is the mix a source tree with a few assets looks like. It writes the
//! manifest, then times both checkers on it.
//!
//! The page cache cannot be dropped without root, so both run warm: every file is read once
//! before timing, and each checker runs five
//! times, interleaved, reporting the best and the median. Warm is also
//! the case that isolates what differs between them (hashing and parallelism, not the disk).

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use manifests::{manifest_for, verify};

const RUNS: usize = 5;

fn main() {
    let mb: u64 = std::env::var("GATEKIT_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&mb| mb > 0)
        .unwrap_or(1024);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("bench: {mb} MB in {}, {threads} cores", root.display());

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

    // Interleaved, so a burst of load from elsewhere on the machine hits both alike.
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..RUNS {
        ours.push(timed(|| {
            let v = verify(root, &manifest).expect("verify");
            assert!(v.all_ok(), "verify: {}", v.summary());
        }));
        theirs.push(timed(|| {
            let status = Command::new("/usr/bin/sha256sum")
                .args(["-c", "--strict", "--quiet"])
                .arg(&list)
                .current_dir(root)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .expect("run sha256sum");
            assert!(status.success(), "sha256sum -c failed");
        }));
    }
    ours.sort();
    theirs.sort();
    let (ours_best, ours_median) = (ours[0], ours[RUNS / 2]);
    let (theirs_best, theirs_median) = (theirs[0], theirs[RUNS / 2]);

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
        "ratio (sha256sum time / verify time): best {:.2}x, median {:.2}x  ({RUNS} runs each, warm cache)",
        theirs_best.as_secs_f64() / ours_best.as_secs_f64(),
        theirs_median.as_secs_f64() / ours_median.as_secs_f64()
    );
}

fn timed(run: impl FnOnce()) -> Duration {
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

/// Reads every file once so neither checker pays for the first read from disk.
fn warm(root: &Path, names: &[Vec<u8>]) {
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
