//! The request reader against hostile and malformed input: every refusal has its status, every
//! read is bounded, and no bytes at all can make it panic.

use super::*;
use std::io::BufReader;

#[test]
fn chunked_bodies_are_decoded() {
    let raw = b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    let mut r = io::Cursor::new(&raw[..]);
    let req = read_request(&mut r, &mut io::sink()).unwrap().unwrap();
    assert_eq!(req.body, b"abcde");
    assert!(read_request(&mut r, &mut io::sink()).unwrap().is_none());
}

/// An endless source of one pattern that counts what was taken from it.
struct Endless {
    pattern: Vec<u8>,
    at: usize,
    taken: usize,
}

impl Endless {
    fn after(prefix: &[u8], pattern: &[u8]) -> io::Chain<io::Cursor<Vec<u8>>, Endless> {
        io::Cursor::new(prefix.to_vec()).chain(Endless {
            pattern: pattern.to_vec(),
            at: 0,
            taken: 0,
        })
    }
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // "Endless" up to 16 MiB, so a parser that lost its bound fails the test instead
        // of eating the machine's memory.
        if self.taken >= 16 * 1024 * 1024 {
            return Ok(0);
        }
        for b in buf.iter_mut() {
            *b = self.pattern[self.at % self.pattern.len()];
            self.at += 1;
        }
        self.taken += buf.len();
        Ok(buf.len())
    }
}

fn parse(raw: &[u8]) -> Result<Option<Request>, HttpError> {
    read_request(&mut io::Cursor::new(raw), &mut io::sink())
}

/// Reads from an endless source and returns the error and how many bytes were taken.
fn parse_endless(prefix: &[u8], pattern: &[u8]) -> (HttpError, usize) {
    let mut r = BufReader::with_capacity(8 * 1024, Endless::after(prefix, pattern));
    let e = read_request(&mut r, &mut io::sink()).expect_err("an endless input is refused");
    let taken = r.get_ref().get_ref().1.taken;
    (e, taken)
}

#[test]
fn an_endless_header_line_is_refused_after_a_bounded_read() {
    for prefix in [
        &b""[..],
        b"POST /v1/messages HTTP/1.1\r\n",
        b"POST /v1/messages HTTP/1.1\r\nx-a: ",
    ] {
        let (e, taken) = parse_endless(prefix, b"a");
        assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
        assert_eq!(e.status(), Some(431));
        assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
    }
}

#[test]
fn endless_headers_are_refused_after_a_bounded_read() {
    let (e, taken) = parse_endless(b"GET / HTTP/1.1\r\n", b"x-a: b\r\n");
    assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
    assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
    // Long header lines reach the byte bound before the count bound.
    let long = format!("x-a: {}\r\n", "b".repeat(4000));
    let (e, taken) = parse_endless(b"GET / HTTP/1.1\r\n", long.as_bytes());
    assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
    assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
    // And endless blank lines before the request line.
    let (e, taken) = parse_endless(b"", b"\r\n");
    assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
    assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
}

#[test]
fn content_length_is_parsed_strictly() {
    let head = |cl: &str| format!("POST / HTTP/1.1\r\n{cl}\r\n\r\nabc");
    for bad in [
        "content-length: -1",
        "content-length: +3",
        "content-length: 0x3",
        "content-length: 3 3",
        "content-length: ",
        "content-length: 4\r\ncontent-length: 3",
        "content-length: 3, 4",
        "content-length: 3\r\ntransfer-encoding: chunked",
        "transfer-encoding: gzip",
        "transfer-encoding: chunked, chunked",
    ] {
        let e = parse(head(bad).as_bytes()).expect_err(bad);
        assert!(matches!(e.status(), Some(400 | 501)), "{bad}: {e}");
    }
    for huge in [
        "content-length: 99999999999999999999999999999",
        "content-length: 18446744073709551616",
        "content-length: 67108865",
    ] {
        let e = parse(head(huge).as_bytes()).expect_err(huge);
        assert_eq!(e.status(), Some(413), "{huge}: {e}");
    }
    for good in [
        "content-length: 3",
        "Content-Length: 3\r\ncontent-length: 3",
        "content-length: 003",
    ] {
        let r = parse(head(good).as_bytes()).unwrap().unwrap();
        assert_eq!(r.body, b"abc", "{good}");
    }
}

#[test]
fn a_claimed_length_reserves_nothing_before_the_bytes_arrive() {
    let e = parse(b"POST / HTTP/1.1\r\ncontent-length: 67108864\r\n\r\nabc").unwrap_err();
    assert!(matches!(e, HttpError::Bad(_)), "{e}");
}

#[test]
fn chunk_sizes_are_parsed_strictly_and_bounded() {
    let req =
        |chunks: &str| format!("POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n{chunks}");
    for bad in [
        "zz\r\nabc\r\n0\r\n\r\n",
        "\r\n",
        "-3\r\nabc\r\n0\r\n\r\n",
        "3 x\r\nabc\r\n0\r\n\r\n",
        "3\r\nabcX0\r\n\r\n",
        "3\r\nabc",
        "3\r\nab",
    ] {
        let e = parse(req(bad).as_bytes()).expect_err(bad);
        assert_eq!(e.status(), Some(400), "{bad:?}: {e}");
    }
    for huge in [
        "ffffffffffffffffffff\r\n",
        "4000001\r\n",
        "0000000000000000000004000001\r\n",
    ] {
        let e = parse(req(huge).as_bytes()).expect_err(huge);
        assert_eq!(e.status(), Some(413), "{huge:?}: {e}");
    }
    // A size under the bound with no data behind it is a cut, not an allocation.
    let e = parse(req("3ffffff\r\n").as_bytes()).unwrap_err();
    assert_eq!(e.status(), Some(400), "{e}");
    let (e, taken) = parse_endless(
        b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3;ext=",
        b"x",
    );
    assert_eq!(e.status(), Some(400), "{e}");
    assert!(taken <= MAX_HEAD + 16 * 1024, "read {taken} bytes");
    let (e, taken) = parse_endless(
        b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n",
        b"x-trailer: y\r\n",
    );
    assert_eq!(e.status(), Some(431), "{e}");
    assert!(taken <= 2 * MAX_HEAD + 16 * 1024, "read {taken} bytes");
    let ok = parse(req("0000A\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n").as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(ok.body, b"0123456789");
}

#[test]
fn malformed_heads_are_400() {
    for bad in [
        "GET /\r\n\r\n",
        "GET / HTTP/1.1 extra\r\n\r\n",
        "GET / HTTP/2\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nno colon\r\n\r\n",
        "GET / HTTP/1.1\r\nbad name: v\r\n\r\n",
        "GET / HTTP/1.1\r\nx: a\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nx: a\r\n",
        "GET / HT",
    ] {
        let e = parse(bad.as_bytes()).expect_err(bad);
        assert_eq!(e.status(), Some(400), "{bad:?}: {e}");
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const VALID: &[&str] = &[
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}",
        "POST /v1/messages HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n1;a=b\r\n{\r\n1\r\n}\r\n0\r\n\r\n",
        "\r\nGET /x?y HTTP/1.0\r\nexpect: 100-continue\r\n\r\n",
    ];

    /// What every outcome must satisfy: a request never claims more body than the bound, and
    /// every refusal carries an answerable status unless the input simply ended.
    fn check(raw: &[u8]) -> Result<(), TestCaseError> {
        match parse(raw) {
            Ok(Some(r)) => prop_assert!(r.body.len() <= MAX_BODY),
            Ok(None) => {}
            Err(HttpError::Io(e)) => prop_assert!(false, "an in-memory read failed: {e}"),
            Err(e) => prop_assert!(e.status().is_some()),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..600)) {
            check(&raw)?;
        }

        #[test]
        fn mutated_valid_requests_never_panic(
            which in 0..VALID.len(),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
        ) {
            let mut raw = VALID[which].as_bytes().to_vec();
            for (at, byte, kind) in edits {
                let i = at.index(raw.len() + 1);
                match kind {
                    0 => raw.insert(i, byte),
                    1 if i < raw.len() => raw[i] = byte,
                    _ if i < raw.len() => { raw.remove(i); }
                    _ => raw.push(byte),
                }
            }
            check(&raw)?;
        }

        #[test]
        fn header_text_from_outside_never_panics(
            name in "[ -~]{0,20}",
            value in "\\PC{0,40}",
            size in "[0-9a-fA-F;=x ]{0,24}",
        ) {
            let raw = format!("POST / HTTP/1.1\r\n{name}: {value}\r\ntransfer-encoding: chunked\r\n\r\n{size}\r\nab\r\n0\r\n\r\n");
            check(raw.as_bytes())?;
            let raw = format!("POST / HTTP/1.1\r\ncontent-length: {size}\r\n\r\nab");
            check(raw.as_bytes())?;
        }
    }
}

#[test]
fn the_path_drops_the_query_and_headers_are_found_in_any_case() {
    let r = parse(b"\r\n\r\nPOST /v1/messages?beta=true&alt=sse HTTP/1.1\r\nConnection: Close\r\nx-api-key: k\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.query, "beta=true&alt=sse");
    assert_eq!(r.query_value("alt"), Some("sse"));
    assert_eq!(r.query_value("beta"), Some("true"));
    assert_eq!(r.query_value("be"), None);
    assert_eq!(r.header("X-API-KEY"), Some("k"));
    assert!(r.wants_close());
    assert!(r.body.is_empty());
}

#[test]
fn a_head_of_exactly_max_head_bytes_is_read_and_one_more_is_refused() {
    let head = |size: usize| {
        let start = "GET / HTTP/1.1\r\nx: ";
        let end = "\r\n\r\n";
        format!("{start}{}{end}", "a".repeat(size - start.len() - end.len()))
    };
    assert!(parse(head(MAX_HEAD).as_bytes()).unwrap().is_some());
    let e = parse(head(MAX_HEAD + 1).as_bytes()).unwrap_err();
    assert_eq!(e.status(), Some(431), "{e}");
}
