//! Every route of every API shape, served by the one stand-in at once, with the same bounds
//! and refusals: a head over 64 KiB is 431, a body over 64 MiB is 413 before it is read, a body
//! that is not JSON is 400 (logged with its path), another method is 404; and each route
//! serves the next request after a refusal. `--api` narrows what is served.

use super::Model;
use probe::ModelEvent;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Each route, and a body it answers with 200.
fn routes() -> Vec<(&'static str, serde_json::Value)> {
    let user = json!([{"role": "user", "content": "n=5"}]);
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "n=5"}]}]});
    vec![
        (
            "/v1/messages?beta=true",
            json!({"model": "m", "messages": user}),
        ),
        (
            "/v1/responses",
            json!({"model": "m", "input": "n=5", "stream": true}),
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": user}),
        ),
        ("/v1beta/models/m:generateContent", gemini.clone()),
        (
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            gemini.clone(),
        ),
        ("/v1beta/models/m:countTokens", gemini),
    ]
}

/// Sends `request` as it is and returns the answer's status (the server closes after a
/// refusal).
fn status_of(port: u16, request: &[u8]) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => answer.extend_from_slice(&buf[..k]),
        }
    }
    let text = String::from_utf8_lossy(&answer);
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

#[test]
fn every_route_is_bounded_refuses_what_it_cannot_read_and_keeps_serving() {
    let m = Model::start(&[]);
    for (path, body) in routes() {
        let head = format!("POST {path} HTTP/1.1\r\nhost: x\r\n");
        let refusals = [
            (format!("{head}x-long: {}\r\n\r\n", "a".repeat(70_000)), 431),
            (format!("{head}content-length: 67108865\r\n\r\n"), 413),
            (
                format!("{head}transfer-encoding: chunked\r\n\r\n4000001\r\n"),
                413,
            ),
            (format!("{head}transfer-encoding: gzip\r\n\r\n"), 501),
            (
                format!("{head}content-length: 8\r\nconnection: close\r\n\r\nnot json"),
                400,
            ),
            (
                format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
                404,
            ),
        ];
        for (request, want) in refusals {
            assert_eq!(
                status_of(m.port, request.as_bytes()),
                Some(want),
                "{path}: {}",
                &request[..request.len().min(120)]
            );
            let answer = m.ask(path, &body);
            assert_eq!(answer.status, 200, "{path} after a {want}: {}", answer.body);
        }
    }
    let events = m.events();
    let refused_paths: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::BadRequest {
                path: Some(path), ..
            } => Some(path.clone()),
            _ => None,
        })
        .collect();
    let paths: Vec<String> = routes()
        .into_iter()
        .map(|(p, _)| p.split('?').next().unwrap().to_string())
        .collect();
    assert_eq!(
        refused_paths, paths,
        "each non-JSON body logged with its path"
    );
    let not_found = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::NotFound { method, .. } if method == "GET"))
        .count();
    assert_eq!(not_found, paths.len());
}

#[test]
fn api_serves_only_the_shapes_it_names() {
    let m = Model::start(&["--api", "chat,gemini"]);
    for (path, body) in routes() {
        let served = path.starts_with("/v1/chat/") || path.starts_with("/v1beta/");
        let want = if served { 200 } else { 404 };
        assert_eq!(m.ask(path, &body).status, want, "{path}");
    }
    let m = Model::start(&["--api", "anthropic", "--api", "responses"]);
    for (path, body) in routes() {
        let served = path.starts_with("/v1/messages") || path == "/v1/responses";
        let want = if served { 200 } else { 404 };
        assert_eq!(m.ask(path, &body).status, want, "{path}");
    }
}
