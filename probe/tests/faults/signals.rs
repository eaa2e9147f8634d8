//! SIGINT and SIGTERM end every probe command with 130 and nothing left behind.

use super::*;

#[test]
fn bracket_on_sigterm_exits_130_marks_its_results_partial_and_leaves_no_process() {
    use nix::sys::signal::Signal;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let points: String = (1..=300)
        .map(|k| (k * 1000).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut bracket = spawn_probe(
        &[
            "bracket",
            "--client",
            &test_client(150_000, dir.path()),
            "--points",
            &points,
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    let pid = bracket.pid();
    wait_until(Duration::from_secs(60), "two points finished", || {
        results(&out)["points"]
            .as_array()
            .is_some_and(|p| p.len() >= 2)
    });
    // Its client is running (or about to): a process tagged by this bracket.
    wait_until(Duration::from_secs(30), "a running client", || {
        !tagged_by(pid).is_empty()
    });
    bracket.signal(Signal::SIGTERM);
    assert_eq!(bracket.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(tagged_by(pid), Vec::<i32>::new(), "processes left behind");
    let r = results(&out);
    assert_eq!(r["interrupted"], true, "{r}");
    assert_eq!(r["complete"], false, "{r}");
    let n = r["points"].as_array().unwrap().len();
    assert!((2..300).contains(&n), "{n} points");
    let text = std::fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(
        text.contains("interrupted: the results above are partial"),
        "{text}"
    );
}

#[test]
fn a_results_file_written_mid_run_says_it_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let marker = unique_sleep();
    // The second point hangs until the test is done looking at the first one's results.
    let client = format!(
        "if [ {{n}} = 2000 ]; then exec sleep {marker}; fi; {}",
        test_client(150_000, dir.path())
    );
    let mut bracket = spawn_probe(
        &[
            "bracket",
            "--client",
            &client,
            "--points",
            "1000,2000",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    // results.json is written first, then results.txt.
    wait_until(Duration::from_secs(60), "the first point", || {
        results(&out)["points"]
            .as_array()
            .is_some_and(|p| p.len() == 1)
            && out.join("results.txt").exists()
    });
    let r = results(&out);
    assert_eq!(r["complete"], false, "{r}");
    assert_eq!(r["interrupted"], false, "{r}");
    let text = std::fs::read_to_string(out.join("results.txt")).unwrap();
    assert!(
        text.contains("partial: written while the run was going"),
        "{text}"
    );
    bracket.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(bracket.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(
        with_arg(&marker),
        Vec::<i32>::new(),
        "the client was left running"
    );
}

#[test]
fn check_on_sigint_exits_130_and_kills_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let marker = unique_sleep();
    let mut check = spawn_probe(
        &[
            "check",
            "--expect",
            "1000",
            "--client",
            &format!("sleep {marker}"),
            "--timeout",
            "10m",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the client", || {
        !with_arg(&marker).is_empty()
    });
    check.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(check.wait_for(Duration::from_secs(30)), Some(130));
    assert_eq!(
        with_arg(&marker),
        Vec::<i32>::new(),
        "the client was left running"
    );
    let r = results(&out);
    assert_eq!(r["interrupted"], true, "{r}");
    assert_eq!(r["complete"], false, "{r}");
}

#[test]
fn call_on_sigterm_exits_130_and_ends_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep();
    // A server that never answers: the call waits for `initialize`.
    let mut call = spawn_probe(
        &["call", "--timeout", "10m", "--", "sleep", &marker],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the server", || {
        !with_arg(&marker).is_empty()
    });
    call.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(call.wait_for(Duration::from_secs(30)), Some(130));
    wait_until(Duration::from_secs(5), "the server to be gone", || {
        with_arg(&marker).is_empty()
    });
}

#[test]
fn call_on_sigterm_exits_130_though_an_untagged_stray_holds_the_servers_output() {
    let dir = tempfile::tempdir().unwrap();
    let (marker, stray) = (unique_sleep(), unique_sleep());
    // The server leaves a process outside its group and without the run tag (env -i), holding
    // the server's stdout open: killing what can be found does not end the wait for an answer,
    // so the call itself must notice the signal.
    let server = format!("setsid env -i sleep {stray} & exec sleep {marker}");
    let mut call = spawn_probe(
        &["call", "--timeout", "10m", "--", "sh", "-c", &server],
        dir.path(),
    );
    wait_until(Duration::from_secs(30), "the server", || {
        !with_arg(&marker).is_empty() && !with_arg(&stray).is_empty()
    });
    call.signal(nix::sys::signal::Signal::SIGTERM);
    let code = call.wait_for(Duration::from_secs(30));
    // The stray is this test's own (started by the server it ran): end it whatever happened.
    for pid in with_arg(&stray) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert_eq!(code, Some(130));
}

#[test]
fn call_runs_its_server_tagged_and_kills_what_escaped_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep();
    let tagfile = dir.path().join("tag");
    // A server that leaves a helper behind outside its process group, as a daemon would.
    let gitfile = dir.path().join("git");
    let server = format!(
        "echo \"$GATEKIT_RUN\" > {}; echo \"${{GIT_DIR-unset}}\" > {}; setsid sleep {marker} & exec {PROBE} serve",
        tagfile.display(),
        gitfile.display()
    );
    let out = testkit::bin(PROBE)
        .args(["call", "--n", "10", "--", "sh", "-c", &server])
        // As when probe runs inside a git hook: the server must not inherit the redirection.
        .env("GIT_DIR", dir.path().join("elsewhere"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tag = std::fs::read_to_string(&tagfile).unwrap();
    assert!(!tag.trim().is_empty(), "the server carried no run tag");
    assert_eq!(std::fs::read_to_string(&gitfile).unwrap(), "unset\n");
    wait_until(
        Duration::from_secs(5),
        "the escaped helper to be gone",
        || with_arg(&marker).is_empty(),
    );
}

#[test]
fn model_on_sigterm_exits_130_and_frees_its_port() {
    let (mut model, port) = start_model();
    assert_eq!(count_tokens(port), 200);
    // An open connection does not keep it alive.
    let _idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    model.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(model.wait_for(Duration::from_secs(20)), Some(130));
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
}

#[test]
fn serve_on_sigint_or_sigterm_exits_130() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let mut child = crate::common::spawn_serve();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut serve = Running(child);
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("\"result\""), "{line}");
        // Waiting on its input, with the client still there.
        serve.signal(sig);
        assert_eq!(serve.wait_for(Duration::from_secs(20)), Some(130), "{sig}");
        drop(stdin);
    }
}
