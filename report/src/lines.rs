//! Reading a line from a peer without trusting it to end the line.
//!
//! A peer (an MCP client on stdin, an HTTP client on a socket) decides how long its lines are;
//! `BufRead::read_line` would hold a line without a newline until memory runs out. Here a line is
//! read up to a limit *while* it is read, and what lies past the limit can be skipped holding
//! nothing. A read that times out or is interrupted asks the caller whether to stop, so a
//! reader that polls (probe's stdin) can notice SIGINT and SIGTERM while it waits.

use std::io::{self, BufRead};

/// How a bounded read ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// A whole line, its newline included, was appended.
    Line,
    /// The input ended before anything was read.
    Eof,
    /// The input ended inside a line: what there was is appended, without a newline.
    Partial,
    /// `max` bytes were appended and no newline came: the rest of the line is unread.
    TooLong,
    /// A wait was cut short and `stop` said to stop.
    Stopped,
}

/// Appends one line of `reader` to `buf`, at most `max` bytes of it. On a read that times out
/// or is interrupted, `stop()` is asked whether to give up (else the read is retried).
pub fn read_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
    mut stop: impl FnMut() -> bool,
) -> io::Result<LineEnd> {
    let start = buf.len();
    loop {
        match fill(reader, &mut stop)? {
            Filled::Stopped => return Ok(LineEnd::Stopped),
            Filled::Eof if buf.len() == start => return Ok(LineEnd::Eof),
            Filled::Eof => return Ok(LineEnd::Partial),
            Filled::Data => {}
        }
        // Buffered now: this returns the same bytes without another read.
        let available = reader.fill_buf()?;
        let room = max - (buf.len() - start);
        let window = &available[..available.len().min(room)];
        if let Some(i) = window.iter().position(|&b| b == b'\n') {
            buf.extend_from_slice(&window[..=i]);
            reader.consume(i + 1);
            return Ok(LineEnd::Line);
        }
        let taken = window.len();
        buf.extend_from_slice(window);
        reader.consume(taken);
        if buf.len() - start >= max {
            return Ok(LineEnd::TooLong);
        }
    }
}

/// Drops input up to and including the next newline, holding nothing of it: `Line` when the
/// newline came, `Eof` when the input ended first, `Stopped` as for [`read_bounded`].
pub fn skip_line(reader: &mut impl BufRead, mut stop: impl FnMut() -> bool) -> io::Result<LineEnd> {
    loop {
        match fill(reader, &mut stop)? {
            Filled::Stopped => return Ok(LineEnd::Stopped),
            Filled::Eof => return Ok(LineEnd::Eof),
            Filled::Data => {}
        }
        let available = reader.fill_buf()?;
        if let Some(i) = available.iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok(LineEnd::Line);
        }
        let k = available.len();
        reader.consume(k);
    }
}

/// What filling the reader's buffer found.
enum Filled {
    Data,
    Eof,
    Stopped,
}

/// Fills `reader`'s buffer, retrying reads that time out or are interrupted until `stop` says
/// to give up.
fn fill(reader: &mut impl BufRead, stop: &mut impl FnMut() -> bool) -> io::Result<Filled> {
    loop {
        match reader.fill_buf() {
            Ok([]) => return Ok(Filled::Eof),
            Ok(_) => return Ok(Filled::Data),
            Err(e) if waiting(&e) => {
                if stop() {
                    return Ok(Filled::Stopped);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

fn waiting(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_read_whole_and_an_endless_one_stops_at_the_limit() {
        let mut input = io::BufReader::with_capacity(4, &b"ab\ncdefghij\nxy"[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_bounded(&mut input, &mut buf, 5, || false).unwrap(),
            LineEnd::Line
        );
        assert_eq!(buf, b"ab\n");
        buf.clear();
        assert_eq!(
            read_bounded(&mut input, &mut buf, 5, || false).unwrap(),
            LineEnd::TooLong
        );
        assert_eq!(buf, b"cdefg");
        assert_eq!(skip_line(&mut input, || false).unwrap(), LineEnd::Line);
        buf.clear();
        assert_eq!(
            read_bounded(&mut input, &mut buf, 5, || false).unwrap(),
            LineEnd::Partial
        );
        assert_eq!(buf, b"xy");
        buf.clear();
        assert_eq!(
            read_bounded(&mut input, &mut buf, 5, || false).unwrap(),
            LineEnd::Eof
        );
    }
}
