//! The pages a reader opens: mutants.html rendered in headless Chromium (a screenshot, and the
//! DOM after its script ran), and mutants.txt within 120 columns.

use std::fs;
use std::path::Path;

use crate::common::*;
use testkit::Output;

use super::{every_verdict, EVERY_VERDICT};

/// Headless Chromium on `url`: `--dump-dom` (the DOM after the page's script ran) when
/// `screenshot` is `None`, else a 1280x900 screenshot into it. `None` when chromium is absent.
fn chromium(url: &str, screenshot: Option<&Path>) -> Option<String> {
    let bin = Path::new("/usr/bin/chromium");
    if !bin.exists() {
        testkit::skip(
            "chromium",
            "/usr/bin/chromium is absent (scripts/install-chromium.sh installs it), so mutants.html \
             was not rendered",
        );
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = assert_cmd::Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .timeout(std::time::Duration::from_secs(60));
    match screenshot {
        Some(png) => cmd.arg(format!("--screenshot={}", png.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(url).output().map(Output::from).unwrap();
    assert!(
        (out.code == Some(0)),
        "chromium failed: {}",
        out.stderr.as_str()
    );
    Some(out.stdout.clone())
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn mutants_html_renders_in_headless_chromium_with_its_table_diffs_and_a_working_survivor_filter() {
    let fx = every_verdict();
    let out = fx.run(&[]);
    out.assert_exit(1);
    let page = fx.out().join("mutants.html");
    let url = format!("file://{}", page.display());

    let png = fx.out.path().join("mutants.png");
    let Some(_) = chromium(&url, Some(&png)) else {
        return;
    };
    let bytes = fs::read(&png).unwrap();
    assert_eq!(png_size(&bytes), (1280, 900));
    // A blank page compresses to a few kilobytes; badges, a table and text do not.
    assert!(
        bytes.len() > 30_000,
        "a suspiciously small screenshot: {} bytes",
        bytes.len()
    );

    let dom = chromium(&url, None).unwrap();
    assert!(
        dom.contains("<th>Mutant</th>") && dom.contains("<th>Verdict</th>"),
        "{dom}"
    );
    for verdict in EVERY_VERDICT {
        assert!(
            dom.contains(&format!(">{verdict}</span>")),
            "no {verdict} badge"
        );
    }
    // The swap as a diff, escaped, one click away, and the survivor's already unfolded.
    assert!(
        dom.contains("<span class=\"del\">-spawn() { :; }</span>"),
        "{dom}"
    );
    assert!(
        dom.contains("<span class=\"add\">+spawn() { true; }</span>"),
        "{dom}"
    );
    assert!(dom.contains("spawn &lt;&amp;&gt; true"), "{dom}");
    assert!(
        dom.contains("<details open=\"\"><summary>diff and log"),
        "{dom}"
    );
    // The script ran: the filter is shown, with every row.
    assert!(dom.contains("showing 7 of 7"), "{dom}");
    assert!(!dom.contains("<nav class=\"filter\" hidden"), "{dom}");
    assert_eq!(dom.matches("<tbody class=\"mutant").count(), 7);
    assert_eq!(dom.matches("hidden=\"\"").count(), 0);

    // #survivors leaves only the survivor; #findings the four findings.
    let survivors = chromium(&format!("{url}#survivors"), None).unwrap();
    assert!(survivors.contains("showing 1 of 7"), "{survivors}");
    assert!(survivors.contains("data-filter=\"survivors\""));
    let shown: Vec<&str> = survivors
        .split("<tbody ")
        .skip(1)
        .filter(|tb| !tb.split('>').next().unwrap().contains("hidden"))
        .collect();
    assert_eq!(shown.len(), 1);
    assert!(
        shown[0].contains("data-verdict=\"survived\""),
        "{}",
        shown[0]
    );
    let findings = chromium(&format!("{url}#findings"), None).unwrap();
    assert!(findings.contains("showing 4 of 7"), "{findings}");
}

#[test]
fn mutants_txt_keeps_within_120_columns_with_long_names_claims_and_failed_tests() {
    // A name and a claim of the length the project's own seeds have, and a suite that names
    // long failed tests the way pytest does.
    let name = "persisted output keeps its preview short and names the saved file";
    let claim = "a short preview beside a save note is `saved` (Claude Code's persisted-output), a long head `truncated+saved`";
    let spec = format!(
        "{SUITE}[[mutant]]\nname = \"{name}\"\nsite = \"lib\"\nfile = \"lib.sh\"\n\
         anchor = '''$1 + $2'''\nreplace = '''$1 - $2'''\nundoes = \"{claim}\"\nsuite = \"unit\"\n"
    );
    let fx = Fixture::new(&spec);
    let mut test = String::from(
        ". ./lib.sh\nif [ \"$(add 2 3)\" = 5 ]; then echo '42 passed in 0.10s'; exit 0; fi\n",
    );
    for i in 0..3 {
        test.push_str(&format!(
            "echo 'FAILED tests/test_persisted_output_preview.py::TestPreviewOfSavedOutput::test_a_long_head_is_truncated_and_saved_{i} - assert False'\n"
        ));
    }
    test.push_str("echo '3 failed, 39 passed in 0.10s'\nexit 1\n");
    fx.repo.write("test.sh", &test);
    fx.repo.commit_all("long names");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let txt = fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    // A line that quotes the repository's path is as long as the path (printed whole, so it can
    // be pasted); under a nested TMPDIR that alone is over 120 columns.
    let repo = fx.repo.path().display().to_string();
    for l in txt.lines().filter(|l| !l.contains(&repo)) {
        assert!(
            l.chars().count() <= 120,
            "{} columns: {l}\n{txt}",
            l.chars().count()
        );
    }
    let flat = txt.split_whitespace().collect::<Vec<_>>().join(" ");
    // The counts and failed tests follow under the table, on the mutant's line.
    assert!(
        flat.contains(&format!("{name} Counts: 42 pass -> 39 passed, 3 failed; Failed tests: tests/test_persisted_output_preview.py::TestPreviewOfSavedOutput::test_a_long_head_is_truncated_and_saved_0")),
        "{txt}"
    );
    for word in claim.split(' ') {
        assert!(flat.contains(word), "{word} missing:\n{txt}");
    }
    // Markdown and HTML keep every column.
    let md = fx.run(&["--format", "markdown"]).stdout;
    assert!(
        md.contains("| Counts | Time | Exit | Strays | Failed tests |"),
        "{md}"
    );
    assert!(md.contains(r"| 42 pass -\> 39 passed, 3 failed |"), "{md}");
    assert!(
        md.contains(r"test\_a\_long\_head\_is\_truncated\_and\_saved\_2 |"),
        "{md}"
    );
    let html = fs::read_to_string(fx.out().join("mutants.html")).unwrap();
    assert!(
        html.contains("test_a_long_head_is_truncated_and_saved_2"),
        "no failed test in the HTML"
    );
}
