//! What the tools read and write on disk: the one path rule for every relative path read from
//! a file or a flag ([`path`]), and the one walk that reaches a path inside a root through no
//! link ([`walk`]).
//!
//! Both were written four times over the workspace, and the copies differed (only one refused
//! `.`, only one knew a path's length limit, one refused a link that another followed). Every
//! caller now asks here, and words the answer for its own file and key.

pub mod path;
pub mod walk;
