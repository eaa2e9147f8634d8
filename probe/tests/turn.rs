//! The per-turn budget: a client with a hidden budget for all results of one turn (the test
//! client's --turn-budget), found exactly by a bisection over the turn's total and held or not
//! by `check --expect-turn`.

use serde_json::Value;

fn probe() -> assert_cmd::Command {
    testkit::bin(env!("CARGO_BIN_EXE_probe"))
}

/// The test client with a per-result limit far above the turn's budget, so only the budget
/// can cut.
fn client(budget: u64) -> String {
    format!(
        "{} test-client --limit 1000000 --mcp-config {{mcp_config}} --n {{n}} --calls {{calls}} \
         --turn-budget {budget}",
        env!("CARGO_BIN_EXE_probe")
    )
}

#[test]
fn a_turn_bisection_finds_the_hidden_budget_exactly_and_names_the_shape() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = probe()
        .args([
            "bracket",
            "--turn",
            "4",
            "--bisect",
            "400..40000",
            "--client",
        ])
        .arg(client(12_345))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{text}");
    assert!(
        text.contains("threshold: inline up to 12345, truncated from 12346"),
        "{text}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["calls"], 4);
    let point = |n: u64| {
        results["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["n"] == n)
            .unwrap_or_else(|| panic!("no point {n}"))
            .clone()
    };
    // At the budget every result came back exactly, each with its own nonce.
    let at = point(12_345);
    assert_eq!(at["verdict"], "inline");
    let each: Vec<&Value> = at["results"].as_array().unwrap().iter().collect();
    let ns: Vec<u64> = each.iter().map(|r| r["n"].as_u64().unwrap()).collect();
    assert_eq!(ns, [3088, 3087, 3086, 3084], "each call its own n");
    assert!(each.iter().all(|r| r["verdict"] == "inline"));
    let mut nonces: Vec<&str> = each.iter().map(|r| r["nonce"].as_str().unwrap()).collect();
    nonces.sort();
    nonces.dedup();
    assert_eq!(nonces.len(), 4);
    // One unit over: the last result lost its last unit, and the client's note is quoted.
    let over = point(12_346);
    assert_eq!(over["verdict"], "truncated");
    let last = &over["results"][3];
    assert_eq!(last["verdict"], "truncated");
    assert_eq!(last["shape"]["where"], "end");
    // 12346 is 3088, 3087, 3086, 3085: the first three take 9261 of the 12345.
    assert_eq!(last["shape"]["first_difference"], 3084);
    let note = last["shape"]["note"].as_str().unwrap();
    assert!(
        note.contains("over this turn's budget of 12345 units"),
        "{note}"
    );
    assert_eq!(
        over["shape"], last["shape"],
        "the turn's shape is its first over result's"
    );
    for r in &over["results"].as_array().unwrap()[..3] {
        assert_eq!(r["verdict"], "inline");
    }
}

#[test]
fn check_expect_turn_holds_at_the_budget_and_fails_at_a_wrong_one() {
    let dir = tempfile::tempdir().unwrap();
    let held = probe()
        .args(["check", "--expect-turn", "9000", "--turn", "3", "--client"])
        .arg(client(9_000))
        .arg("--out")
        .arg(dir.path().join("held"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&held.stdout);
    assert_eq!(held.status.code(), Some(0), "{text}");
    assert!(
        text.contains("check: held, inline up to 9000, not from 9001"),
        "{text}"
    );
    assert!(text.contains("turn: 3 results asked for at once"), "{text}");
    let moved = probe()
        .args(["check", "--expect-turn", "9500", "--turn", "3", "--client"])
        .arg(client(9_000))
        .arg("--out")
        .arg(dir.path().join("moved"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&moved.stdout);
    assert_eq!(moved.status.code(), Some(1), "{text}");
    assert!(
        text.contains("inline up to 9000, truncated from 9001"),
        "{text}"
    );
    // --turn belongs to --expect-turn; one of --expect and --expect-turn is needed.
    probe()
        .args(["check", "--expect", "9000", "--turn", "3", "--client", "x"])
        .assert()
        .code(2);
    probe().args(["check", "--client", "x"]).assert().code(2);
}
