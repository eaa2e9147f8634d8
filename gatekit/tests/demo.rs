//! `gatekit demo`: the tour of all three tools on the built-in sample.

use testkit::Output;

use crate::gatekit;

#[test]
fn the_demo_gates_its_sample_and_passes() {
    let out = Output::of(gatekit().arg("demo"));
    out.assert_exit(0);
    let text = &out.stdout;
    assert!(text.contains("gate PASS"), "{text}");
    assert!(text.contains("3/3 OK"), "{text}");
    assert!(
        text.contains("deleted   1/1 gone: docs/old notes.md"),
        "{text}"
    );
    assert!(text.contains("drift     none"), "{text}");
    // The tour: mutants on the candidate with a comparison suite, then probe's test client.
    assert!(
        text.contains("4 mutants: 3 killed, 1 control held"),
        "{text}"
    );
    assert!(
        text.contains("manifest before: 3/3 OK, after: 3/3 OK"),
        "{text}"
    );
    assert!(text.contains("SURVIVED (3 pass -> 3 passed)"), "{text}");
    assert!(
        text.contains("slug ' padded '"),
        "failed test names: {text}"
    );
    assert!(
        text.contains("threshold: inline up to 50000, saved from 50001"),
        "{text}"
    );
    assert!(text.contains("suggested cap: 40000 units"), "{text}");
    assert!(
        text.contains("== tour: gate PASS, mutants held (exit 0), probe held (exit 0)"),
        "{text}"
    );
}
