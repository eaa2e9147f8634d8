//! Reading one HTTP/1.1 request from a client of the stand-in, bounded while it is read.
//!
//! httparse (the parser under hyper) parses the head. Collecting the head's bytes and framing
//! the body are done here, because the answers to a runaway or malformed client are part of the
//! stand-in's contract and no server crate lets its user choose them: 431 for a head or trailer
//! section over [`MAX_HEAD`], 413 for a body over [`MAX_BODY`] as soon as a Content-Length or a
//! chunk size says so (before any of it arrives), 501 for a transfer coding other than chunked,
//! 400 for the rest. (hyper answers 400 to an unrepresentable Content-Length and to gzip, and
//! reports a bad chunk only as an opaque body error.) Every length is bounded while it is read
//! and every number parsed strictly, so no input can make this panic or grow without bound; the
//! tests beside it fuzz that.

use report::lines::{self, LineEnd};
use std::io::{self, BufRead, Read, Write};

/// Largest request head (request line and headers) accepted, against a runaway client. It is
/// counted while the head is read, so a client that sends one endless line costs this much
/// memory and no more.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// Most header fields in one head.
pub(crate) const MAX_HEADERS: usize = 100;
/// Largest request body accepted: a tool result of 10,000,000 astral units is 40 MB as UTF-8
/// JSON. The body grows as bytes arrive, so a Content-Length alone reserves nothing.
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;
/// Longest chunk-size line (the hex size and any chunk extensions).
pub(crate) const MAX_CHUNK_LINE: usize = 4 * 1024;

/// One request, read whole.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The target's path, without the query (Claude Code sends `?beta=true`).
    pub path: String,
    /// The target's query, after the `?` (empty when there is none): Gemini's
    /// `streamGenerateContent` streams server-sent events only when it says `alt=sse`.
    pub query: String,
    /// Names as sent; look them up with [`Request::header`], which ignores case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of a header, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.values(name).next()
    }

    fn values<'a: 'n, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a str> + 'n {
        self.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The value of a query parameter (`alt` in `?alt=sse`), as sent.
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// The client asked to close the connection after this request.
    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Why a request could not be read: each kind has its status, and the connection is closed
/// after the answer (the rest of its bytes cannot be trusted to frame a next request).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    /// The head or the trailer section is over [`MAX_HEAD`], or has over [`MAX_HEADERS`]
    /// fields: 431.
    #[error("{0}")]
    HeadTooLarge(String),
    /// The body is over [`MAX_BODY`]: 413.
    #[error("{0}")]
    BodyTooLarge(String),
    /// Malformed: 400.
    #[error("{0}")]
    Bad(String),
    /// Unsupported transfer coding: 501.
    #[error("{0}")]
    NotImplemented(String),
    /// The connection failed or closed mid-request: nothing to answer.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl HttpError {
    /// The status that answers it; `None` when there is no one left to answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::HeadTooLarge(_) => Some(431),
            HttpError::BodyTooLarge(_) => Some(413),
            HttpError::Bad(_) => Some(400),
            HttpError::NotImplemented(_) => Some(501),
            HttpError::Io(_) => None,
        }
    }
}

/// Reads one request; `Ok(None)` at a clean end of the connection. `writer` is the same
/// connection's other half, for the `100 Continue` a client may wait for before its body.
pub(crate) fn read_request(
    reader: &mut impl BufRead,
    writer: &mut impl Write,
) -> Result<Option<Request>, HttpError> {
    let Some(head) = read_head(reader)? else {
        return Ok(None);
    };
    let mut request = parse_head(&head)?;
    let framing = body_framing(&request)?;
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    request.body = match framing {
        Framing::None => Vec::new(),
        Framing::Length(len) => read_exactly(reader, len)?,
        Framing::Chunked => read_chunked(reader)?,
    };
    Ok(Some(request))
}

/// Appends one line (up to and including its LF) to `buf`, reading at most `max` bytes of it:
/// the bound holds while reading, so an endless line costs `max` bytes, never more. A socket
/// read that times out ends the connection (the idle limit), as an error.
fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineEnd> {
    match lines::read_bounded(reader, buf, max, || true)? {
        LineEnd::Stopped => Err(io::ErrorKind::TimedOut.into()),
        end => Ok(end),
    }
}

/// The head's bytes, from the request line to the blank line that ends it, read line by line so
/// nothing past the head is taken from `reader`. Blank lines before the request line (RFC 9112
/// lets a client send them) are dropped but count against [`MAX_HEAD`] too. `None` when the
/// connection ends before a request starts.
fn read_head(reader: &mut impl BufRead) -> Result<Option<Vec<u8>>, HttpError> {
    let too_large = || HttpError::HeadTooLarge(format!("request head over {MAX_HEAD} bytes"));
    let mut head = Vec::new();
    let mut used = 0usize;
    loop {
        let start = head.len();
        match read_line_bounded(reader, &mut head, MAX_HEAD - used)? {
            LineEnd::Line => {}
            LineEnd::TooLong => return Err(too_large()),
            LineEnd::Eof | LineEnd::Stopped if start == 0 => return Ok(None),
            _ if start == 0 => {
                return Err(HttpError::Bad(
                    "connection closed inside the request line".into(),
                ))
            }
            _ => {
                return Err(HttpError::Bad(
                    "connection closed inside the headers".into(),
                ))
            }
        }
        used += head.len() - start;
        if trim_crlf(&head[start..]).is_empty() {
            if start > 0 {
                return Ok(Some(head));
            }
            head.clear();
        }
        if used >= MAX_HEAD {
            return Err(too_large());
        }
    }
}

/// A whole head (it ends with its blank line) as a request without a body.
fn parse_head(head: &[u8]) -> Result<Request, HttpError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut fields);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(HttpError::Bad("incomplete request head".into()))
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HttpError::HeadTooLarge(format!(
                "more than {MAX_HEADERS} header fields"
            )))
        }
        Err(e) => {
            let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
            return Err(HttpError::Bad(format!(
                "malformed request ({e}): {}",
                clip_for_error(&String::from_utf8_lossy(trim_crlf(line)))
            )));
        }
    }
    // A complete parse fills these; an empty one would be a parser bug, refused all the same.
    let (Some(method), Some(target)) = (parsed.method, parsed.path) else {
        return Err(HttpError::Bad("malformed request line".into()));
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers: parsed
            .headers
            .iter()
            .map(|h| {
                let value = String::from_utf8_lossy(h.value);
                (h.name.to_string(), value.trim().to_string())
            })
            .collect(),
        body: Vec::new(),
    })
}

/// How a request's body is delimited.
#[derive(Debug, PartialEq, Eq)]
enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// The body's framing from the headers, strictly: one Content-Length of digits only (repeats
/// must agree), no Content-Length beside chunked (RFC 9112 6.1: a smuggling risk), and no
/// transfer coding but `chunked`.
fn body_framing(request: &Request) -> Result<Framing, HttpError> {
    let codings: Vec<&str> = request
        .values("transfer-encoding")
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut length: Option<usize> = None;
    for v in request.values("content-length").flat_map(|v| v.split(',')) {
        let len = parse_content_length(v.trim())?;
        if length.is_some_and(|l| l != len) {
            return Err(HttpError::Bad(
                "content-length given twice with different values".into(),
            ));
        }
        length = Some(len);
    }
    if !codings.is_empty() {
        if length.is_some() {
            return Err(HttpError::Bad(
                "both content-length and transfer-encoding".into(),
            ));
        }
        if codings.len() != 1 || !codings[0].eq_ignore_ascii_case("chunked") {
            return Err(HttpError::NotImplemented(format!(
                "unsupported transfer-encoding: {}",
                clip_for_error(&codings.join(", "))
            )));
        }
        return Ok(Framing::Chunked);
    }
    Ok(length.map_or(Framing::None, Framing::Length))
}

/// A Content-Length value: ASCII digits only (no sign, no space, no hex), at most
/// [`MAX_BODY`].
fn parse_content_length(v: &str) -> Result<usize, HttpError> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(HttpError::Bad(format!(
            "bad content-length: {}",
            clip_for_error(v)
        )));
    }
    match v.parse::<usize>() {
        Ok(len) if len <= MAX_BODY => Ok(len),
        _ => Err(HttpError::BodyTooLarge(format!(
            "body of {} bytes is over {MAX_BODY}",
            clip_for_error(v)
        ))),
    }
}

/// Exactly `len` bytes, grown as they arrive (a claimed length reserves nothing up front).
fn read_exactly(reader: &mut impl BufRead, len: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::with_capacity(len.min(64 * 1024));
    reader.take(len as u64).read_to_end(&mut body)?;
    if body.len() != len {
        return Err(HttpError::Bad(format!(
            "connection closed after {} of {len} body bytes",
            body.len()
        )));
    }
    Ok(body)
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line_bounded(reader, &mut line, MAX_CHUNK_LINE)? {
            LineEnd::Line => {}
            LineEnd::TooLong => {
                return Err(HttpError::Bad(format!(
                    "chunk-size line over {MAX_CHUNK_LINE} bytes"
                )))
            }
            LineEnd::Eof | LineEnd::Partial | LineEnd::Stopped => {
                return Err(HttpError::Bad(
                    "connection closed inside a chunked body".into(),
                ))
            }
        }
        let size = parse_chunk_size(trim_crlf(&line))?;
        if size == 0 {
            skip_trailers(reader)?;
            return Ok(body);
        }
        if size > MAX_BODY - body.len() {
            return Err(HttpError::BodyTooLarge(format!(
                "chunked body over {MAX_BODY} bytes"
            )));
        }
        let start = body.len();
        reader.take(size as u64).read_to_end(&mut body)?;
        if body.len() - start != size {
            return Err(HttpError::Bad("connection closed inside a chunk".into()));
        }
        // The chunk's data ends with CRLF (a bare LF is tolerated, as for every other line).
        let mut end = [0u8; 1];
        reader
            .read_exact(&mut end)
            .map_err(|_| HttpError::Bad("connection closed after a chunk's data".into()))?;
        if end[0] == b'\r' {
            reader
                .read_exact(&mut end)
                .map_err(|_| HttpError::Bad("connection closed after a chunk's data".into()))?;
        }
        if end[0] != b'\n' {
            return Err(HttpError::Bad(
                "a chunk's data is not followed by CRLF".into(),
            ));
        }
    }
}

/// The trailer fields after the last chunk, read and dropped (nothing here needs them), bounded
/// like the head, up to the blank line that ends the body.
fn skip_trailers(reader: &mut impl BufRead) -> Result<(), HttpError> {
    let too_large = || HttpError::HeadTooLarge(format!("trailer fields over {MAX_HEAD} bytes"));
    let mut line = Vec::new();
    let mut used = 0usize;
    loop {
        line.clear();
        match read_line_bounded(reader, &mut line, MAX_HEAD.saturating_sub(used))? {
            LineEnd::Line => {}
            LineEnd::TooLong => return Err(too_large()),
            LineEnd::Eof | LineEnd::Partial | LineEnd::Stopped => {
                return Err(HttpError::Bad(
                    "connection closed inside the trailer fields".into(),
                ))
            }
        }
        used += line.len();
        if trim_crlf(&line).is_empty() {
            return Ok(());
        }
        if used >= MAX_HEAD {
            return Err(too_large());
        }
    }
}

/// A chunk-size line: hex digits (at most 15 significant ones, so the size fits any usize we
/// allow), then optional `;extension`s, which are meaningless here.
fn parse_chunk_size(line: &[u8]) -> Result<usize, HttpError> {
    let bad = || {
        HttpError::Bad(format!(
            "bad chunk size: {}",
            clip_for_error(&String::from_utf8_lossy(line))
        ))
    };
    let hex_end = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let (hex, rest) = line.split_at(hex_end);
    if hex.is_empty() {
        return Err(bad());
    }
    let rest = rest.trim_ascii_start();
    if !rest.is_empty() && rest[0] != b';' {
        return Err(bad());
    }
    let digits = hex.iter().skip_while(|&&b| b == b'0').count();
    if digits > 15 {
        return Err(HttpError::BodyTooLarge(format!(
            "chunk size {} is over {MAX_BODY} bytes",
            clip_for_error(&String::from_utf8_lossy(hex))
        )));
    }
    let size = usize::from_str_radix(std::str::from_utf8(hex).map_err(|_| bad())?, 16)
        .map_err(|_| bad())?;
    Ok(size)
}

/// At most 80 characters of outside text for an error message, made safe to print.
fn clip_for_error(s: &str) -> String {
    let clipped: String = s.chars().take(80).collect();
    files::escape::text(&clipped).into_owned()
}

fn trim_crlf(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests;
