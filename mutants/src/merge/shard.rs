//! A shard folder read strictly: its `mutants.json` as a [`RunReport`] (every field present, of
//! its type, none unknown: the record types say so) and the sources in its
//! `mutation-report.json`, kept only for files its rows name. Also how an `--only` rerun reads
//! the report it updates.
//!
//! Both are read straight into types; a refusal names the field by its path in the file and
//! says what serde found wrong there, in one line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::error::Category;

use files::escape;

use crate::record::{RunReport, REPORT_VERSION};
use crate::render::Sources;

/// The one field read before the rest: a report of another layout would merge into nonsense,
/// so its version is checked before anything else is read as this version's fields.
#[derive(Deserialize)]
struct Head {
    version: Option<u64>,
}

/// Where reading a report went wrong: the path of the field (`.` for the whole document), what
/// was wrong there, and whether the bytes are not JSON at all (then no field is to blame).
struct Refusal {
    path: String,
    problem: String,
    not_json: bool,
}

impl Refusal {
    fn of(path: String, e: serde_json::Error) -> Refusal {
        Refusal {
            path,
            not_json: matches!(
                e.classify(),
                Category::Syntax | Category::Eof | Category::Io
            ),
            problem: e.to_string(),
        }
    }

    /// The refusal in words: `field `PATH`: PROBLEM`, or `not a WHAT (...)` when the bytes are
    /// not JSON or not an object.
    fn words(self, what: &str) -> String {
        if self.not_json || self.path == "." {
            format!("not a {what} ({})", escape::text(&self.problem))
        } else {
            format!(
                "field `{}`: {}",
                escape::text(&self.path),
                escape::text(&self.problem)
            )
        }
    }
}

/// `bytes` read as a `T`, or the path and problem of the first thing that is not.
fn read_typed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Refusal> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| Refusal::of(e.path().to_string(), e.into_inner()))?;
    de.end().map_err(|e| Refusal::of(".".into(), e))?;
    Ok(value)
}

/// A shard's `mutants.json` as a report, or why it is refused (naming the field): not JSON,
/// another version, a field missing, of the wrong type, or unknown. Never panics, whatever the
/// bytes.
pub(crate) fn parse(bytes: &[u8]) -> Result<RunReport, String> {
    let head: Head = read_typed(bytes).map_err(|r| r.words("mutants report"))?;
    if head.version != Some(u64::from(REPORT_VERSION)) {
        return Err(format!(
            "field `version`: mutants.json version {} is not {REPORT_VERSION}, the version this mutants reads",
            head.version.map_or("missing".to_string(), |v| v.to_string())
        ));
    }
    read_typed(bytes).map_err(|r| r.words("mutants report"))
}

/// The part of a shard's `mutation-report.json` (Stryker's format, as `render::stryker`
/// writes it) that merge reads back: each file's source. Stryker's other fields are the
/// viewer's, not ours to check, so they are let through.
#[derive(Deserialize)]
struct MutationReport {
    files: BTreeMap<String, MutatedFile>,
}

#[derive(Deserialize)]
struct MutatedFile {
    source: String,
}

/// The mutated files' sources from each shard's `mutation-report.json` (a regular file, never
/// a link), kept only for files that shard's rows name; a malformed one is refused.
pub(super) fn read_sources(shards: &[(PathBuf, RunReport)]) -> Result<Sources> {
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
        let read: MutationReport = read_typed(&bytes)
            .map_err(|r| anyhow::anyhow!("{name}: {}", r.words("mutation report")))?;
        let named: BTreeSet<&str> = report.mutants.iter().map(|r| r.file.as_str()).collect();
        for (file, f) in read.files {
            if !named.contains(file.as_str()) {
                bail!(
                    "{name}: field `files.{}`: no row of the shard names this file",
                    escape::text(&file)
                );
            }
            sources.entry(file).or_insert(f.source);
        }
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::join::merge_reports;
    use crate::merge::logs::log_name;
    use crate::render;
    use proptest::prelude::*;
    use serde_json::Value;

    fn sample() -> Value {
        serde_json::from_str(SAMPLE).unwrap()
    }

    /// A real shard report (written by `mutants run --shard 1/2`), trimmed to one row.
    const SAMPLE: &str = include_str!("../../tests/data/shard-report.json");

    #[test]
    fn a_real_report_reads_back_and_a_tampered_one_names_its_field() {
        let v = sample();
        parse(SAMPLE.as_bytes()).unwrap();
        let mut missing = v.clone();
        missing["mutants"][0]["run"]
            .as_object_mut()
            .unwrap()
            .remove("signal");
        let e = parse(missing.to_string().as_bytes()).unwrap_err();
        assert!(
            e.contains("field `mutants[0].run`") && e.contains("missing field `signal`"),
            "{e}"
        );
        let mut unknown = v.clone();
        unknown["mutants"][0]["extra"] = Value::Bool(true);
        let e = parse(unknown.to_string().as_bytes()).unwrap_err();
        assert!(
            e.contains("mutants[0].extra") && e.contains("unknown"),
            "{e}"
        );
        let mut wrong = v.clone();
        wrong["jobs"] = Value::String("two".into());
        let e = parse(wrong.to_string().as_bytes()).unwrap_err();
        assert!(e.contains("field `jobs`"), "{e}");
        let mut version = v;
        version["version"] = Value::from(99);
        let e = parse(version.to_string().as_bytes()).unwrap_err();
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
        if let Ok(r) = parse(bytes) {
            let shards = vec![
                (PathBuf::from("a"), r.clone()),
                (PathBuf::from("b"), r.clone()),
            ];
            if merge_reports(&shards).is_ok() {
                let _ = crate::merge::check::shards(&shards, None);
            }
            // The sample is shard 1/2; alone, as a whole run, it merges.
            let mut whole = r.clone();
            whole.shard = None;
            let alone = [(PathBuf::from("a"), whole)];
            let merged = merge_reports(&alone);
            if merged.is_ok() {
                let _ = crate::merge::check::shards(&alone, None);
            }
            // The renderers read logs: only after the log paths passed, as in `merge`.
            let logs_ok = r
                .mutants
                .iter()
                .flat_map(|m| m.run.iter().chain(m.also.iter()).map(|s| s.log.as_str()))
                .chain(r.baseline.iter().map(|b| b.log.as_str()))
                .all(|l| log_name(l).is_ok());
            if let (Ok(m), true) = (merged, logs_ok) {
                let empty = tempfile::tempdir().unwrap();
                let _ = render::text::render(&m);
                let _ = render::markdown::render(&m);
                let _ = render::json::render(&m);
                let _ = render::stryker::render(&m, &Sources::new());
                let _ = render::html::render(&m, empty.path());
                let _ = render::junit::render(&m, empty.path());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(&bytes);
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
            prop_assert!(parse(v.to_string().as_bytes()).is_err(), "{:?}", path);
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
