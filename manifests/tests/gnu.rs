//! Both directions against the real GNU `sha256sum`: what we write it checks OK, what it
//! writes we read to the same entries, and where a line is malformed we agree with
//! `sha256sum -c --strict`.

use std::fs;

use crate::common::{awkward_names, make_tree, sha256sum};
use manifests::{manifest_for, parse, verify, write, Entry, Form, Status};

fn with_form(entries: &[Entry], form: Form) -> Vec<Entry> {
    entries
        .iter()
        .map(|e| Entry { form, ..e.clone() })
        .collect()
}

#[test]
fn our_manifest_passes_sha256sum_check_strict_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let names = awkward_names();
    make_tree(dir.path(), &names);
    let manifest = manifest_for(dir.path(), &names).unwrap();
    for form in [Form::Text, Form::Binary, Form::Tagged] {
        let bytes = write(&with_form(&manifest.entries, form));
        let list = dir.path().join("list.sha256");
        fs::write(&list, &bytes).unwrap();
        let out = sha256sum(dir.path(), &[b"-c", b"--strict", b"list.sha256"]);
        assert!(
            out.status.success(),
            "{form:?}: sha256sum -c said {}\n{}\nfor\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&bytes)
        );
        let oks = out.stdout.windows(4).filter(|w| w == b": OK").count();
        assert_eq!(oks, names.len(), "{form:?}");
    }
}

#[test]
fn what_sha256sum_writes_we_read_back_to_the_same_entries_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let names = awkward_names();
    make_tree(dir.path(), &names);
    let ours = manifest_for(dir.path(), &names).unwrap();
    for (flag, form) in [
        (&b"-t"[..], Form::Text),
        (b"-b", Form::Binary),
        (b"--tag", Form::Tagged),
    ] {
        let mut args: Vec<&[u8]> = vec![flag, b"--"];
        args.extend(names.iter().map(|n| n.as_slice()));
        let out = sha256sum(dir.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs = parse(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(theirs.entries, with_form(&ours.entries, form), "{form:?}");
        assert_eq!(write(&theirs.entries), out.stdout, "{form:?} bytes");
        let v = verify(dir.path(), &theirs).unwrap();
        assert_eq!(v.summary().to_string(), format!("{0}/{0} OK", names.len()));
    }
}

#[test]
fn a_leading_dot_slash_from_sha256sum_is_kept_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path(), &[b"-x".to_vec(), b"d/y".to_vec()]);
    let out = sha256sum(dir.path(), &[b"./-x", b"./d/y"]);
    let m = parse(&out.stdout).unwrap();
    assert_eq!(m.entries[0].path, b"./-x");
    assert!(verify(dir.path(), &m).unwrap().all_ok());
}

#[test]
fn crlf_manifests_are_read_by_both() {
    let dir = tempfile::tempdir().unwrap();
    let names = awkward_names();
    make_tree(dir.path(), &names);
    let lf = write(&manifest_for(dir.path(), &names).unwrap().entries);
    let crlf: Vec<u8> = lf
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|line| [&line[..line.len() - 1], b"\r\n"].concat())
        .collect();
    fs::write(dir.path().join("crlf.sha256"), &crlf).unwrap();
    let out = sha256sum(dir.path(), &[b"-c", b"--strict", b"crlf.sha256"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(parse(&crlf).unwrap(), parse(&lf).unwrap());
}

#[test]
fn tampered_and_removed_files_fail_for_both() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<Vec<u8>> = (0..12).map(|i| format!("f{i}").into_bytes()).collect();
    make_tree(dir.path(), &names);
    let manifest = manifest_for(dir.path(), &names).unwrap();
    fs::write(dir.path().join("list"), manifest.to_bytes()).unwrap();
    fs::write(dir.path().join("f3"), "tampered").unwrap();
    fs::remove_file(dir.path().join("f7")).unwrap();

    let v = verify(dir.path(), &manifest).unwrap();
    let statuses: Vec<Status> = v.entries.iter().map(|c| c.status).collect();
    let mut want = vec![Status::Ok; 12];
    want[3] = Status::Failed;
    want[7] = Status::Missing;
    assert_eq!(statuses, want);
    assert_eq!(v.summary().to_string(), "10/12 OK, 1 FAILED, 1 MISSING");

    let out = sha256sum(dir.path(), &[b"-c", b"--strict", b"list"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("f3: FAILED\n"), "{text}");
    assert!(text.contains("f7: FAILED open or read"), "{text}");
}

/// Lines where we and `sha256sum -c --strict` must agree: each is written alone after a good
/// line, and both must accept it or both refuse it.
#[test]
fn we_accept_and_refuse_the_same_lines_as_sha256sum_strict() {
    let dir = tempfile::tempdir().unwrap();
    make_tree(
        dir.path(),
        &[b"f".to_vec(), b"a\\b".to_vec(), b"a\nb".to_vec()],
    );
    let hex = manifest_for(dir.path(), &[&b"f"[..]]).unwrap().entries[0]
        .digest
        .to_hex();
    let up = hex.to_uppercase();
    let cases: Vec<(String, bool)> = vec![
        (format!("{hex}  f"), true),
        (format!("{up}  f"), true),
        (format!("{hex} *f"), true),
        (format!("  {hex}  f"), true),
        (format!("\t{hex}  f"), true),
        (format!("{hex}\t f"), true),
        (format!("SHA256 (f) = {hex}"), true),
        (format!("SHA256(f)={hex}"), true),
        (format!("SHA256 (f)  =  {up}"), true),
        (format!("\\{hex}  f"), true),
        (format!("\\SHA256 (f) = {hex}"), true),
        (format!("{hex}  f\r"), true),
        ("# comment".to_string(), true),
        (String::new(), true),
        (format!(" # {hex}  f"), false),
        ("   ".to_string(), false),
        (format!("{hex}f"), false),
        (format!("{}  f", &hex[..63]), false),
        (format!("{hex}0  f"), false),
        (format!("SHA256 (f) = {hex}0"), false),
        (format!("SHA256 (f) = {}", &hex[..62]), false),
        (format!("SHA256 (f) = {hex} "), false),
        (format!("SHA256 (f) {hex}"), false),
        (format!("SHA256 [f] = {hex}"), false),
        (format!("SHA1 (f) = {hex}"), false),
        (format!("\\{hex}  a\\qb"), false),
        (format!("\\{hex}  f\\"), false),
        (format!("MD5 (f) = {hex}"), false),
        ("garbage".to_string(), false),
    ];
    for (line, accepted) in cases {
        let text = format!("{hex}  f\n{line}\n");
        fs::write(dir.path().join("m"), &text).unwrap();
        let gnu = sha256sum(dir.path(), &[b"-c", b"--strict", b"m"]);
        let gnu_ok = gnu.status.success();
        let ours = parse(text.as_bytes());
        assert_eq!(
            gnu_ok,
            accepted,
            "sha256sum on {line:?}: {}",
            String::from_utf8_lossy(&gnu.stderr)
        );
        assert_eq!(ours.is_ok(), accepted, "parse on {line:?}: {ours:?}");
        if let Err(e) = ours {
            assert_eq!(e.line(), Some(2), "{line:?}");
        }
    }
}

/// GNU takes `HEX NAME` with one blank when it is the first untagged line, and then reads
/// every untagged line's name as all that follows its one gap; so do we.
#[test]
fn the_single_space_bsd_reversed_form_is_read_as_sha256sum_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path(), &[b"name".to_vec(), b" name".to_vec()]);
    let m = manifest_for(dir.path(), &[&b"name"[..], b" name"]).unwrap();
    let (hex, spaced) = (m.entries[0].digest.to_hex(), m.entries[1].digest.to_hex());
    let text = format!("{hex} name\n{spaced}  name\n");
    fs::write(dir.path().join("m"), &text).unwrap();
    let gnu = sha256sum(dir.path(), &[b"-c", b"--strict", b"m"]);
    assert!(
        gnu.status.success(),
        "{}",
        String::from_utf8_lossy(&gnu.stderr)
    );
    let ours = parse(text.as_bytes()).unwrap();
    assert_eq!(ours.entries[1].path, b" name");
    assert!(verify(dir.path(), &ours).unwrap().all_ok());
    assert_eq!(ours.to_bytes(), text.as_bytes());
}

#[test]
fn a_manifest_of_only_comments_is_refused_by_both() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("m"), "# nothing\n\n").unwrap();
    let gnu = sha256sum(dir.path(), &[b"-c", b"--strict", b"m"]);
    assert!(!gnu.status.success());
    assert!(String::from_utf8_lossy(&gnu.stderr).contains("no properly formatted"));
    assert!(parse(b"# nothing\n\n").is_err());
}
