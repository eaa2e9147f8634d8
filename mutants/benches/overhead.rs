//! The runner's own cost per mutant, and the speedup of `--jobs 2` over `--jobs 1`.
//!
//! `cargo bench -p mutants --bench overhead` builds a real git repository with MUTANTS mutants
//! over a suite that sleeps 0.3 s and fails when the file differs from its original (so every
//! mutant is killed and the baseline passes), runs `mutants run` with `--jobs 1` and `--jobs 2`
//! several times, interleaved, and prints:
//!
//! - overhead per mutant: (wall time of the whole command - the time the suites themselves ran,
//!   baseline included) / mutants. That is everything but the suite: process start, worktree
//!   creation and removal, swap, restore and its proof, the stray scan, and rewriting the four
//!   report files after every mutant.
//! - speedup: wall time with `--jobs 1` over wall time with `--jobs 2`, whole command.
//!
//! Set MUTANTS_BENCH_N (default 20) and MUTANTS_BENCH_ROUNDS (default 3) to change the size.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?} failed");
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Sample {
    wall: Duration,
    suites: Duration,
    baseline: Duration,
}

fn run(repo: &Path, out: &Path, jobs: usize) -> Sample {
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_mutants"))
        .current_dir(repo)
        .args(["run", "mutants.toml", "--jobs", &jobs.to_string(), "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("mutants");
    let wall = started.elapsed();
    assert_eq!(status.code(), Some(0), "the bench run did not hold");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("mutants.json")).unwrap()).unwrap();
    let mut suites = 0.0;
    for b in report["baseline"].as_array().unwrap() {
        // Every copy runs the baseline, in parallel: the first copy's time stands for them.
        suites += b["duration_secs"].as_f64().unwrap();
    }
    let mut mutant_suites = 0.0;
    for r in report["mutants"].as_array().unwrap() {
        assert_eq!(r["verdict"], "killed");
        mutant_suites += r["run"]["duration_secs"].as_f64().unwrap();
    }
    // With N jobs the suites overlap: the wall time they account for is their sum over N.
    let baseline = suites;
    suites += mutant_suites / jobs as f64;
    Sample {
        wall,
        suites: Duration::from_secs_f64(suites),
        baseline: Duration::from_secs_f64(baseline),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs us with no such flag and
    // only wants to know we build.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = env_usize("MUTANTS_BENCH_N", 20);
    let rounds = env_usize("MUTANTS_BENCH_ROUNDS", 3);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let lib: String = (0..n).map(|i| format!("value_{i:03} = {i}\n")).collect();
    std::fs::write(repo.join("lib.txt"), &lib).unwrap();
    std::fs::write(repo.join("lib.orig"), &lib).unwrap();
    let mut spec = String::from(
        "[suites.sleepy]\nrun = \"sleep 0.3; cmp -s lib.txt lib.orig && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\"\n\n",
    );
    for i in 0..n {
        spec.push_str(&format!(
            "[[mutant]]\nname = \"m{i}\"\nfile = \"lib.txt\"\nanchor = \"value_{i:03} = {i}\\n\"\nreplace = \"value_{i:03} = {}\\n\"\nsuite = \"sleepy\"\n\n",
            i + 1
        ));
    }
    std::fs::write(repo.join("mutants.toml"), spec).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "bench"]);

    let mut overhead_ms = Vec::new();
    let mut walls = [Vec::new(), Vec::new()];
    let mut phases = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for (slot, jobs) in [1usize, 2].into_iter().enumerate() {
            let out = dir.path().join(format!("out-{round}-{jobs}"));
            let s = run(&repo, &out, jobs);
            walls[slot].push(s.wall.as_secs_f64());
            phases[slot].push(s.wall.saturating_sub(s.baseline).as_secs_f64());
            if jobs == 1 {
                let over = s.wall.saturating_sub(s.suites).as_secs_f64() * 1000.0 / n as f64;
                overhead_ms.push(over);
            }
            eprintln!(
                "round {round} --jobs {jobs}: wall {:.3}s, suites {:.3}s",
                s.wall.as_secs_f64(),
                s.suites.as_secs_f64()
            );
        }
    }
    let (w1, w2) = (median(walls[0].clone()), median(walls[1].clone()));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "mutants overhead bench: {n} mutants, suite sleeps 0.3 s, {rounds} rounds, {cores} cores"
    );
    println!(
        "overhead per mutant (--jobs 1, everything but the suite): median {:.1} ms, best {:.1} ms",
        median(overhead_ms.clone()),
        overhead_ms.iter().cloned().fold(f64::INFINITY, f64::min)
    );
    println!("wall --jobs 1: median {w1:.3}s; --jobs 2: median {w2:.3}s");
    println!(
        "speedup of --jobs 2 over --jobs 1 (whole command, baseline included): {:.2}x",
        w1 / w2
    );
    println!(
        "speedup of --jobs 2 over --jobs 1 (after the baseline, which cannot be split): {:.2}x",
        median(phases[0].clone()) / median(phases[1].clone())
    );
}
