//! `mutants merge`: the outputs of `run --shard K/N` joined into the report one run would write.
//!
//! Each shard's `mutants.json` carries every row whole (verdict, counts, log path relative to
//! its folder), so merging is a union of rows put back in spec order, the logs copied beside
//! them, and every output rendered again from the union.
//!
//! A shard folder is outside input: it may come from another machine, or be crafted. So nothing
//! in it is trusted before it is checked, and every check happens before anything is opened,
//! copied or written:
//! - `mutants.json` is read strictly: every field present, of its type, none unknown (the whole
//!   value must serialize back to exactly what was read), or the merge is refused naming the
//!   file and the field.
//! - The shards must be one run split: the same spec, tool version, commit, tree and candidate,
//!   shard fields `K/N` with one N, each K once, none missing. A merged report that silently
//!   lacks a shard, or mixes two trees, would read as a complete run of one tree.
//! - Every log path must be `logs/NAME` (relative, one plain name, no `..`), lead to a regular
//!   file inside that shard's own `logs/` (no link anywhere on the way), and is copied to
//!   `OUT/logs/NAME` by a write-and-rename that replaces whatever is there rather than writing
//!   through it. An `--out` that is one of the shard folders is refused, so a file can never be
//!   copied onto itself.
//! - The sources in `mutation-report.json` are kept only for files the shard's rows name.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use report::escape;
use report::{ColorChoice, Exit, Format};

use crate::output::{self, Sources};
use crate::record::{ok_summary, RunReport, REPORT_VERSION};

pub fn cmd_merge(dirs: &[PathBuf], out: &Path, format: Format, color: ColorChoice) -> Result<Exit> {
    let mut shards: Vec<(PathBuf, RunReport)> = Vec::new();
    for dir in dirs {
        let path = dir.join("mutants.json");
        let bytes = crate::swap::read_regular(&path)
            .with_context(|| format!("{}: cannot read the shard's report", escape::path(&path)))?
            .bytes;
        let report =
            parse_shard(&bytes).map_err(|why| anyhow::anyhow!("{}: {why}", escape::path(&path)))?;
        shards.push((dir.clone(), report));
    }
    let merged = merge_reports(&shards)?;
    refuse_out_among_shards(out, dirs)?;
    let copies = plan_copies(&shards)?;
    let sources = read_sources(&shards)?;

    let _lock = report::lock::OutLock::acquire(out)?;
    let logs = out.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", escape::path(&logs)))?;
    let meta = fs::symlink_metadata(&logs)?;
    if !meta.file_type().is_dir() {
        bail!(
            "{}: not a folder (a link or a file is in the way)",
            escape::path(&logs)
        );
    }
    for (from, name) in &copies {
        copy_log(from, &logs, name)?;
    }
    output::write_all(&merged, &sources, out)?;
    crate::commands::print_report(&merged, out, format, color)?;
    Ok(match merged.exit_code {
        130 => Exit::Interrupted,
        4 => Exit::Precondition,
        0 => Exit::Ok,
        _ => Exit::Findings,
    })
}

/// A shard's `mutants.json` as a report, or why it is refused (naming the field): not JSON,
/// another version, a field missing, of the wrong type, or unknown. Never panics, whatever the
/// bytes.
pub fn parse_shard(bytes: &[u8]) -> Result<RunReport, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not a mutants report ({e})"))?;
    if !value.is_object() {
        return Err("not a mutants report (not a JSON object)".into());
    }
    // A report of another layout would merge into nonsense: say so before reading it.
    if value.get("version") != Some(&serde_json::json!(REPORT_VERSION)) {
        return Err(format!(
            "field `version`: mutants.json version {} is not {REPORT_VERSION}, the version this mutants reads",
            value
                .get("version")
                .map_or("missing".to_string(), |v| escape::text(&v.to_string())
                    .into_owned())
        ));
    }
    let report: RunReport = serde_path_to_error::deserialize(&value).map_err(|e| {
        let mut path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde names a missing field in its message, at the path of the object holding it.
        if let Some(field) = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            path = if path == "." {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            return format!("field `{}`: missing", escape::text(&path));
        }
        format!("field `{}`: {}", escape::text(&path), escape::text(&inner))
    })?;
    // Every field present and none unknown: what was read must be exactly what the report is.
    let back = serde_json::to_value(&report).map_err(|e| format!("cannot re-encode ({e})"))?;
    if let Some((path, why)) = first_difference(&value, &back, String::new()) {
        return Err(format!("field `{}`: {why}", escape::text(&path)));
    }
    Ok(report)
}

/// Where `read` (the input) and `back` (the report serialized again) first differ, and how.
fn first_difference(read: &Value, back: &Value, at: String) -> Option<(String, &'static str)> {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (read, back) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys() {
                if !b.contains_key(k) {
                    return Some((join(k), "unknown field"));
                }
            }
            for (k, bv) in b {
                match a.get(k) {
                    None => return Some((join(k), "missing")),
                    Some(av) => {
                        if let Some(d) = first_difference(av, bv, join(k)) {
                            return Some(d);
                        }
                    }
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, format!("{at}[{i}]"))),
        _ if read == back => None,
        _ => Some((at, "malformed (it does not read back as written)")),
    }
}

/// The most seconds a recorded run or timeout may hold in a shard: a year, far past any real
/// run (timeouts are at most 30 days), far below what a `Duration` or a format can hold.
const MAX_SECONDS: f64 = 366.0 * 86_400.0;

/// The single report the shards add up to, or why they do not add up (naming the shard's
/// folder and the field).
pub fn merge_reports(shards: &[(PathBuf, RunReport)]) -> Result<RunReport> {
    let Some((first_dir, first)) = shards.first() else {
        bail!("nothing to merge");
    };
    let name = |dir: &Path| escape::path(&dir.join("mutants.json"));
    let n = match first.shard {
        Some(s) => s.n,
        None if shards.len() == 1 => 1,
        None => bail!(
            "{}: field `shard` is null: not a shard output (run with --shard K/N)",
            name(first_dir)
        ),
    };
    // Each K once (a set, not a vector of N flags: N is outside input and may be vast).
    let mut seen = BTreeSet::new();
    for (dir, r) in shards {
        let differs = |field: &str, a: &str, b: &str| -> Result<()> {
            if a != b {
                bail!(
                    "{}: field `{field}` is {:?}, not {:?} as in {}: shards of different runs",
                    name(dir),
                    escape::text(a),
                    escape::text(b),
                    name(first_dir)
                );
            }
            Ok(())
        };
        differs("tool", &r.tool, "mutants")?;
        differs("tool_version", &r.tool_version, &first.tool_version)?;
        differs("spec_sha256", &r.spec_sha256, &first.spec_sha256)?;
        differs("commit", &r.commit, &first.commit)?;
        differs("tree", &r.tree, &first.tree)?;
        match (&r.candidate, &first.candidate) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                differs("candidate.base", &a.base, &b.base)?;
                differs("candidate.tree", &a.tree, &b.tree)?;
                differs("candidate.patch_sha256", &a.patch_sha256, &b.patch_sha256)?;
                differs(
                    "candidate.manifest_sha256",
                    &a.manifest_sha256,
                    &b.manifest_sha256,
                )?;
                differs(
                    "candidate.manifest_before",
                    &a.manifest_before,
                    &b.manifest_before,
                )?;
            }
            _ => bail!(
                "{}: field `candidate` differs from {}: one is a candidate run, the other is not",
                name(dir),
                name(first_dir)
            ),
        }
        let k = match r.shard {
            Some(s) if s.n != n => bail!(
                "{}: field `shard.n` is {}, not {n} as in {}",
                name(dir),
                s.n,
                name(first_dir)
            ),
            Some(s) if s.k == 0 || s.k > n => {
                bail!("{}: field `shard.k` is {}, outside 1..={n}", name(dir), s.k)
            }
            Some(s) => s.k,
            None if n == 1 => 1,
            None => bail!(
                "{}: field `shard` is null: not a shard output (run with --shard K/N)",
                name(dir)
            ),
        };
        if !seen.insert(k) {
            bail!("{}: field `shard.k`: shard {k}/{n} given twice", name(dir));
        }
        if r.mutants.len() > r.planned {
            bail!(
                "{}: field `mutants` holds {} rows, more than the {} planned",
                name(dir),
                r.mutants.len(),
                r.planned
            );
        }
        // Seconds a run can have taken or been given: finite, not negative, not vast.
        let seconds = |field: String, x: f64| -> Result<()> {
            if !(0.0..=MAX_SECONDS).contains(&x) {
                bail!(
                    "{}: field `{field}` is {x}, not a number of seconds a run can take",
                    name(dir)
                );
            }
            Ok(())
        };
        for (i, b) in r.baseline.iter().enumerate() {
            seconds(format!("baseline[{i}].duration_secs"), b.duration_secs)?;
            seconds(
                format!("baseline[{i}].mutant_timeout_secs"),
                b.mutant_timeout_secs,
            )?;
            if let Some(x) = b.build_secs {
                seconds(format!("baseline[{i}].build_secs"), x)?;
            }
        }
        for (i, row) in r.mutants.iter().enumerate() {
            let runs = row.run.iter().map(|s| (format!("mutants[{i}].run"), s));
            let also = row
                .also
                .iter()
                .enumerate()
                .map(|(a, s)| (format!("mutants[{i}].also[{a}]"), s));
            for (at, s) in runs.chain(also) {
                seconds(format!("{at}.duration_secs"), s.duration_secs)?;
                seconds(format!("{at}.timeout_secs"), s.timeout_secs)?;
                if let Some(x) = s.build_secs {
                    seconds(format!("{at}.build_secs"), x)?;
                }
            }
        }
        for (i, row) in r.mutants.iter().enumerate() {
            if crate::spec::check_file(&row.file).as_deref() != Ok(row.file.as_str()) {
                bail!(
                    "{}: field `mutants[{i}].file` {:?} is not a clean path inside the tree",
                    name(dir),
                    escape::text(&row.file)
                );
            }
        }
    }
    // Every K in 1..=N was seen once, so the first gap is at most one past the shards given.
    if let Some(missing) = (1..=n).find(|k| !seen.contains(k)) {
        bail!("shard {missing}/{n} is missing: a merged report needs every shard");
    }

    let mut merged = first.clone();
    merged.shard = None;
    merged.mutants.clear();
    merged.planned = 0;
    let mut indices = BTreeSet::new();
    for (dir, r) in shards {
        merged.planned = merged.planned.saturating_add(r.planned);
        merged.start = merged.start.min(r.start);
        merged.end = merged.end.max(r.end);
        merged.jobs = merged.jobs.max(r.jobs);
        merged.interrupted |= r.interrupted;
        merged.baseline_failed |= r.baseline_failed;
        if let (Some(m), Some(c)) = (merged.candidate.as_mut(), r.candidate.as_ref()) {
            // The worst manifest result wins: one shard that did not restore spoils the merge.
            let ok = |s: &Option<String>| s.as_deref().is_some_and(ok_summary);
            if ok(&m.manifest_after) && !ok(&c.manifest_after) {
                m.manifest_after = c.manifest_after.clone();
            }
        }
        for (i, row) in r.mutants.iter().enumerate() {
            if !indices.insert(row.index) {
                bail!(
                    "{}: field `mutants[{i}].index`: mutant {:?} (index {}) is in two shards",
                    name(dir),
                    escape::text(&row.name),
                    row.index
                );
            }
            merged.mutants.push(row.clone());
        }
    }
    merged.settle();
    let exit = if merged.interrupted {
        Exit::Interrupted
    } else if merged.baseline_failed {
        Exit::Precondition
    } else {
        Exit::from_held(merged.held())
    };
    merged.exit_code = exit.code();
    Ok(merged)
}

/// The one rule for a log path read from a shard: `logs/NAME`, NAME one plain component.
/// Returns NAME.
pub fn log_name(log: &str) -> Result<&str, &'static str> {
    if log.contains('\0') {
        return Err("holds a NUL byte");
    }
    let path = Path::new(log);
    if path.is_absolute() {
        return Err("is absolute");
    }
    let parts: Vec<Component> = path.components().collect();
    match parts.as_slice() {
        [Component::Normal(dir), Component::Normal(file)] if *dir == "logs" => {
            file.to_str().ok_or("is not UTF-8")
        }
        _ if parts.iter().any(|c| matches!(c, Component::ParentDir)) => Err("climbs out with `..`"),
        _ => Err("is not of the form logs/NAME"),
    }
}

/// Refuses an `--out` that is one of the shard folders (by canonical path and by device and
/// inode), so a log can never be copied onto itself.
fn refuse_out_among_shards(out: &Path, dirs: &[PathBuf]) -> Result<()> {
    let Ok(out_meta) = fs::metadata(out) else {
        return Ok(()); // Not there yet: it cannot be a shard folder.
    };
    let out_real = out.canonicalize().ok();
    for dir in dirs {
        let same_inode =
            fs::metadata(dir).is_ok_and(|m| m.dev() == out_meta.dev() && m.ino() == out_meta.ino());
        if same_inode || (out_real.is_some() && dir.canonicalize().ok() == out_real) {
            bail!(
                "--out {} is the shard folder {}: merge into a folder of its own",
                escape::path(out),
                escape::path(dir)
            );
        }
    }
    Ok(())
}

/// Every log to copy, as (source file, name in `OUT/logs`), each checked: the path's form, then
/// the file it leads to (a regular file right inside the shard's own `logs/`, no link on the
/// way). The rows' logs from every shard, the baseline's from the first (whose baseline the
/// merged report shows). A log that is not there is not copied.
fn plan_copies(shards: &[(PathBuf, RunReport)]) -> Result<Vec<(PathBuf, String)>> {
    let mut copies = Vec::new();
    for (i, (dir, report)) in shards.iter().enumerate() {
        let json = escape::path(&dir.join("mutants.json"));
        let rows = report.mutants.iter().enumerate().flat_map(|(r, row)| {
            row.run
                .iter()
                .map(move |s| (format!("mutants[{r}].run.log"), s.log.as_str()))
                .chain(
                    row.also
                        .iter()
                        .enumerate()
                        .map(move |(a, s)| (format!("mutants[{r}].also[{a}].log"), s.log.as_str())),
                )
        });
        let baselines = report
            .baseline
            .iter()
            .enumerate()
            .filter(|_| i == 0)
            .map(|(b, base)| (format!("baseline[{b}].log"), base.log.as_str()));
        let shard_root = dir.canonicalize().with_context(|| escape::path(dir))?;
        for (field, log) in rows.chain(baselines) {
            let file = log_name(log).map_err(|why| {
                anyhow::anyhow!(
                    "{json}: field `{field}` {:?} {why}; a log must be logs/NAME inside the shard folder",
                    escape::text(log)
                )
            })?;
            let from = dir.join("logs").join(file);
            let meta = match fs::symlink_metadata(&from) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| escape::path(&from)),
            };
            let real = from.canonicalize().ok();
            if !meta.file_type().is_file()
                || real.as_deref().and_then(Path::parent) != Some(&shard_root.join("logs"))
            {
                bail!(
                    "{json}: field `{field}` {:?} is not a regular file inside the shard's logs/ (a link or a folder): refused",
                    escape::text(log)
                );
            }
            copies.push((from, file.to_string()));
        }
    }
    Ok(copies)
}

/// Copies `from` to `logs/name` by writing a temporary file beside it and renaming it into
/// place: whatever was at the name (a link, a file) is replaced, never written through.
fn copy_log(from: &Path, logs: &Path, name: &str) -> Result<()> {
    let to = logs.join(name);
    if let (Ok(a), Ok(b)) = (fs::metadata(from), fs::symlink_metadata(&to)) {
        if a.dev() == b.dev() && a.ino() == b.ino() {
            bail!(
                "{} and {} are the same file: refused to copy it onto itself",
                escape::path(from),
                escape::path(&to)
            );
        }
    }
    let bytes = crate::swap::read_regular(from)
        .with_context(|| format!("reading {}", escape::path(from)))?
        .bytes;
    let mut tmp = tempfile::NamedTempFile::new_in(logs)
        .with_context(|| format!("writing into {}", escape::path(logs)))?;
    tmp.write_all(&bytes)
        .with_context(|| format!("writing {}", escape::path(&to)))?;
    tmp.persist(&to)
        .with_context(|| format!("writing {}", escape::path(&to)))?;
    Ok(())
}

/// The mutated files' sources from each shard's `mutation-report.json` (a regular file, never
/// a link), kept only for files that shard's rows name; a malformed one is refused.
fn read_sources(shards: &[(PathBuf, RunReport)]) -> Result<Sources> {
    let mut sources = Sources::new();
    for (dir, report) in shards {
        let path = dir.join("mutation-report.json");
        let name = escape::path(&path);
        let bytes = match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            _ => {
                crate::swap::read_regular(&path)
                    .with_context(|| format!("{name}: cannot read it (a link or not a file)"))?
                    .bytes
            }
        };
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| anyhow::anyhow!("{name}: not JSON ({e})"))?;
        let Some(files) = v.get("files").and_then(Value::as_object) else {
            bail!("{name}: field `files` is missing or not an object");
        };
        let named: BTreeSet<&str> = report.mutants.iter().map(|r| r.file.as_str()).collect();
        for (file, f) in files {
            if !named.contains(file.as_str()) {
                bail!(
                    "{name}: field `files.{}`: no row of the shard names this file",
                    escape::text(file)
                );
            }
            let Some(src) = f.get("source").and_then(Value::as_str) else {
                bail!(
                    "{name}: field `files.{}.source` is missing or not a string",
                    escape::text(file)
                );
            };
            sources
                .entry(file.clone())
                .or_insert_with(|| src.to_string());
        }
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn log_paths_must_be_one_name_under_logs() {
        assert_eq!(log_name("logs/001-a.log"), Ok("001-a.log"));
        for bad in [
            "../victim",
            "logs/../../victim",
            "/abs/victim",
            "logs",
            "other/x.log",
            "logs/sub/x.log",
            "",
            "logs/\0x",
        ] {
            assert!(log_name(bad).is_err(), "{bad:?}");
        }
    }

    fn sample() -> Value {
        serde_json::from_str(SAMPLE).unwrap()
    }

    /// A real shard report (written by `mutants run --shard 1/2`), trimmed to one row.
    const SAMPLE: &str = include_str!("../tests/data/shard-report.json");

    #[test]
    fn a_real_report_reads_back_and_a_tampered_one_names_its_field() {
        let v = sample();
        parse_shard(SAMPLE.as_bytes()).unwrap();
        let mut missing = v.clone();
        missing["mutants"][0]["run"]
            .as_object_mut()
            .unwrap()
            .remove("signal");
        let e = parse_shard(missing.to_string().as_bytes()).unwrap_err();
        assert!(
            e.contains("mutants[0].run.signal") && e.contains("missing"),
            "{e}"
        );
        let mut unknown = v.clone();
        unknown["mutants"][0]["extra"] = Value::Bool(true);
        let e = parse_shard(unknown.to_string().as_bytes()).unwrap_err();
        assert!(
            e.contains("mutants[0].extra") && e.contains("unknown"),
            "{e}"
        );
        let mut wrong = v.clone();
        wrong["jobs"] = Value::String("two".into());
        let e = parse_shard(wrong.to_string().as_bytes()).unwrap_err();
        assert!(e.contains("field `jobs`"), "{e}");
        let mut version = v;
        version["version"] = Value::from(99);
        let e = parse_shard(version.to_string().as_bytes()).unwrap_err();
        assert!(e.contains("field `version`"), "{e}");
    }

    /// Every value node of `v`, by path, for mutating one.
    fn nodes(v: &Value, at: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                let mut p = at.clone();
                p.push(k.clone());
                nodes(x, p, out)
            }),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
                let mut p = at.clone();
                p.push(i.to_string());
                nodes(x, p, out)
            }),
            _ => {}
        }
    }

    fn node_mut<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
        path.iter().fold(v, |v, k| match v {
            Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
            v => &mut v[k.as_str()],
        })
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            ".{0,12}".prop_map(Value::String),
            Just(Value::from(0)),
            Just(Value::from(usize::MAX as u64)),
            Just(Value::String("../victim".into())),
            Just(Value::String("/abs".into())),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(".{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Parses, merges and renders every output of what was read: none may panic.
    fn merge_never_panics(bytes: &[u8]) {
        if let Ok(r) = parse_shard(bytes) {
            let shards = vec![
                (PathBuf::from("a"), r.clone()),
                (PathBuf::from("b"), r.clone()),
            ];
            let _ = merge_reports(&shards);
            // The sample is shard 1/2; alone, as a whole run, it merges.
            let mut whole = r.clone();
            whole.shard = None;
            let merged = merge_reports(&[(PathBuf::from("a"), whole)]);
            // The renderers read logs: only after the log paths passed, as in cmd_merge.
            let logs_ok = r
                .mutants
                .iter()
                .flat_map(|m| m.run.iter().chain(m.also.iter()).map(|s| s.log.as_str()))
                .chain(r.baseline.iter().map(|b| b.log.as_str()))
                .all(|l| log_name(l).is_ok());
            if let (Ok(m), true) = (merged, logs_ok) {
                let empty = tempfile::tempdir().unwrap();
                let _ = output::render_text(&m);
                let _ = output::render_markdown(&m);
                let _ = output::mutation_report(&m, &Sources::new());
                let _ = crate::html::render(&m, empty.path());
                let _ = crate::junit::render(&m, empty.path());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_shard(&bytes);
        }

        #[test]
        fn a_report_with_one_node_replaced_never_panics_and_is_refused_or_read(
            pick in any::<prop::sample::Index>(),
            value in any_json(),
        ) {
            let mut v = sample();
            let mut all = Vec::new();
            nodes(&v, Vec::new(), &mut all);
            let path = pick.get(&all).clone();
            *node_mut(&mut v, &path) = value;
            merge_never_panics(v.to_string().as_bytes());
        }

        #[test]
        fn a_report_with_one_key_removed_is_refused(pick in any::<prop::sample::Index>()) {
            let mut v = sample();
            let mut all = Vec::new();
            nodes(&v, Vec::new(), &mut all);
            let objects: Vec<Vec<String>> = all
                .into_iter()
                .filter(|p| !p.is_empty() && node_mut(&mut v.clone(), &p[..p.len() - 1]).is_object())
                .collect();
            let path = pick.get(&objects).clone();
            let (last, parent) = path.split_last().unwrap();
            node_mut(&mut v, parent).as_object_mut().unwrap().remove(last);
            prop_assert!(parse_shard(v.to_string().as_bytes()).is_err(), "{:?}", path);
        }

        #[test]
        fn a_report_with_a_leaf_replaced_by_another_of_its_type_never_panics(
            pick in any::<prop::sample::Index>(),
            text in "(.|\n|\r|\u{1b}){0,20}",
            int in prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64)],
            float in prop_oneof![any::<f64>(), Just(1e300), Just(-1.0), Just(f64::MAX)],
        ) {
            let mut v = sample();
            let mut all = Vec::new();
            nodes(&v, Vec::new(), &mut all);
            let path = pick.get(&all).clone();
            let node = node_mut(&mut v, &path);
            match node {
                Value::String(_) => *node = Value::String(text),
                Value::Number(n) if n.is_f64() => {
                    *node = serde_json::Number::from_f64(float).map_or(Value::Null, Value::Number)
                }
                Value::Number(_) => *node = Value::from(int),
                _ => {}
            }
            merge_never_panics(v.to_string().as_bytes());
        }

        #[test]
        fn truncated_or_spliced_reports_never_panic(cut in 0usize..4096, junk in proptest::collection::vec(any::<u8>(), 0..16)) {
            let mut bytes = SAMPLE.as_bytes().to_vec();
            let at = cut.min(bytes.len());
            bytes.splice(at..at, junk);
            merge_never_panics(&bytes);
            merge_never_panics(&SAMPLE.as_bytes()[..at]);
        }
    }
}
