//! How fast proposals are made: 50 real Rust files of this workspace, and 50 generated files
//! in the other languages, once with a change on every seventh line and one mutant per line (a
//! typical `mutants suggest`), once over whole files with every operator (the worst case).
//! Run: `cargo bench -p syntax`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use syntax::{propose, Options, Outcome, Scope};

fn rust_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "target" || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// A file of `n` functions in the language of `ending`, each with a condition, arithmetic, a
/// call, a string, a constant and a comment.
fn generated(ending: &str, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let f = match ending {
            "js" | "ts" => format!(
                "// step {i}\nfunction f{i}(a, b) {{\n  if (a < b && b !== {i}) {{\n    g(a + {i});\n    return \"s{i}\";\n  }}\n  const xs = [a, b];\n  return a?.c ?? xs.length * 2;\n}}\n"
            ),
            "py" => format!(
                "# step {i}\ndef f{i}(a, b):\n    if a < b and b != {i}:\n        g(a + {i})\n        return \"s{i}\"\n    xs = [a, b]\n    return len(xs) * 2\n\n"
            ),
            _ => format!(
                "// step {i}\nfunc f{i}(a int, b int) (int, error) {{\n\tif a < b && b != {i} {{\n\t\tg(a + {i})\n\t\treturn 1, nil\n\t}}\n\tx := \"s{i}\"\n\treturn len(x) * 2, nil\n}}\n"
            ),
        };
        s.push_str(&f);
    }
    if ending == "go" {
        s.insert_str(0, "package p\n\n");
    }
    s
}

fn run(label: &str, files: &[(String, String)], every: usize, all: bool) {
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let scopes: Vec<Scope> = files
        .iter()
        .map(|(_, t)| {
            if every == 1 {
                Scope::Whole
            } else {
                Scope::Lines(
                    (1..=t.lines().count())
                        .filter(|l| l % every == 0)
                        .collect::<BTreeSet<_>>(),
                )
            }
        })
        .collect();
    let started = Instant::now();
    let cpu_before = cpu_seconds();
    let (mut proposed, mut dropped, mut skipped) = (0, 0, 0);
    for ((path, text), scope) in files.iter().zip(&scopes) {
        match propose(path, text.as_bytes(), scope, &Options { all }) {
            Outcome::Proposed(p) => {
                proposed += p.mutants.len() + usize::from(p.control.is_some());
                dropped += p.dropped;
            }
            Outcome::Skipped(_) => skipped += 1,
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds().map(|after| after - cpu_before.unwrap_or(0.0));
    let cpu = cpu.map_or("?".to_owned(), |c| format!("{c:.2}"));
    println!(
        "{label:<44} {:>3} files {:>5.2} MB {:>6.3} s wall ({cpu} s CPU) {:>5.0} files/s {:>5.2} MB/s  {proposed} proposals, {dropped} dropped, {skipped} skipped",
        files.len(),
        bytes as f64 / 1e6,
        secs,
        files.len() as f64 / secs,
        bytes as f64 / 1e6 / secs,
    );
}

/// This process's CPU time (user and system) from `/proc/self/stat`, where there is one: the
/// machine may be busy, and wall time then overstates the cost.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    rust_files(&root, &mut paths);
    // The 50 largest source files that are not test code: the heaviest realistic change.
    let mut rust: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| {
            let rel = p
                .strip_prefix(&root)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            (!syntax::is_test_path(&rel)).then(|| Some((rel, std::fs::read_to_string(p).ok()?)))?
        })
        .collect();
    rust.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    rust.truncate(50);
    let others: Vec<(String, String)> = (0..50)
        .map(|i| {
            let ending = ["js", "ts", "py", "go"][i % 4];
            (format!("src/m{i}.{ending}"), generated(ending, 60))
        })
        .collect();
    run(
        "rust (workspace), every 7th line, one per line",
        &rust,
        7,
        false,
    );
    run("rust (workspace), whole files, --all", &rust, 1, true);
    run("js/ts/py/go (generated), every 7th line", &others, 7, false);
    run(
        "js/ts/py/go (generated), whole files, --all",
        &others,
        1,
        true,
    );
}
