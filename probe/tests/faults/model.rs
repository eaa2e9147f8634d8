//! probe model, the HTTP stand-in, under hostile requests: every refusal bounded, logged, and
//! the next request served.

use super::*;

const ENDLESS: usize = 64 * 1024 * 1024;

#[test]
fn model_refuses_endless_heads_after_a_bounded_read_and_keeps_serving() {
    let (_model, port) = start_model();
    let cases: [(&str, &[u8], &[u8]); 4] = [
        ("an endless request line", b"POST /", b"a"),
        (
            "an endless header line",
            b"POST / HTTP/1.1\r\nx-long: ",
            b"a",
        ),
        ("endless headers", b"POST / HTTP/1.1\r\n", b"x-h: v\r\n"),
        ("endless blank lines", b"", b"\r\n"),
    ];
    for (what, prefix, pattern) in cases {
        let (status, sent) = hostile(port, prefix, pattern, ENDLESS);
        assert_eq!(status, Some(431), "{what}");
        // The server stopped reading long before the client stopped sending.
        assert!(sent < ENDLESS / 2, "{what}: the server read {sent} bytes");
        assert_eq!(count_tokens(port), 200, "after {what}");
    }
}

#[test]
fn model_refuses_bad_bodies_and_keeps_serving() {
    let (_model, port) = start_model();
    let post = "POST /v1/messages HTTP/1.1\r\nhost: x\r\n";
    let cases: Vec<(String, &[u8], u16)> = vec![
        (
            format!("{post}content-length: 99999999999999999999999999\r\n\r\n{{}}"),
            b"",
            413,
        ),
        (
            format!("{post}content-length: 67108865\r\n\r\n{{}}"),
            b"",
            413,
        ),
        (
            format!("{post}content-length: 3\r\ncontent-length: 2\r\n\r\n{{}}"),
            b"",
            400,
        ),
        (format!("{post}content-length: 2x\r\n\r\n{{}}"), b"", 400),
        (format!("{post}content-length: -2\r\n\r\n{{}}"), b"", 400),
        (
            format!("{post}content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n"),
            b"",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\nfffffffffffffffffffffff\r\n"),
            b"",
            413,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n2\r\n{{}}X0\r\n\r\n"),
            b"",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n2;ext="),
            b"e",
            400,
        ),
        (
            format!("{post}transfer-encoding: chunked\r\n\r\n0\r\n"),
            b"x-t: v\r\n",
            431,
        ),
        (format!("{post}transfer-encoding: gzip\r\n\r\n"), b"", 501),
        ("\u{0}\u{ff}\u{1}garbage\r\n\r\n".to_string(), b"", 400),
    ];
    for (request, pattern, want) in cases {
        let limit = if pattern.is_empty() { 0 } else { ENDLESS };
        let (status, sent) = hostile(port, request.as_bytes(), pattern, limit);
        assert_eq!(status, Some(want), "{request:?}");
        assert!(
            sent < ENDLESS / 2,
            "{request:?}: the server read {sent} bytes"
        );
        assert_eq!(count_tokens(port), 200, "after {request:?}");
    }
}

#[test]
fn model_answers_503_over_its_connection_limit_and_recovers() {
    let (_model, port) = start_model();
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Let the server accept every one of them.
    thread::sleep(Duration::from_millis(300));
    assert_eq!(count_tokens(port), 503);
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count_tokens(port) != 200 {
        assert!(Instant::now() < deadline, "the server never recovered");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn model_logs_each_refusal_with_its_status() {
    let model = crate::standins::Model::start(&[]);
    let (port, log) = (model.port, model.log.clone());
    let post = "POST /v1/messages HTTP/1.1\r\nhost: x\r\n";
    for (request, want) in [
        (format!("{post}x-long: {}\r\n\r\n", "a".repeat(70_000)), 431),
        (format!("{post}content-length: 67108865\r\n\r\n"), 413),
        (format!("{post}transfer-encoding: gzip\r\n\r\n"), 501),
        ("GET / HTTP/9\r\n\r\n".to_string(), 400),
    ] {
        assert_eq!(hostile(port, request.as_bytes(), b"", 0).0, Some(want));
    }
    let statuses: Vec<u16> = mcp::events::read_events::<probe::ModelEvent>(&log)
        .into_iter()
        .filter_map(|e| match e {
            probe::ModelEvent::BadRequest {
                status: Some(status),
                error: Some(_),
                ..
            } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [431, 413, 501, 400]);
}
